package loopwalk

import (
	"reflect"
	"testing"
)

// An outer loop 1 with an inner loop 3..5 in its body closes at 6 only; 5 (the inner
// closing node) is in the body, 7 after the closing node is not.
func TestBodyNestedLoops(t *testing.T) {
	links := map[int][]int{1: {2}, 2: {3}, 3: {4}, 4: {5}, 5: {6}, 6: {7}}
	kinds := map[int]Kind{1: Open, 3: Open, 5: Close, 6: Close}
	closers, body := Body(1, func(n int) []int { return links[n] }, func(n int) Kind { return kinds[n] })
	if !reflect.DeepEqual(closers, []int{6}) {
		t.Errorf("closers = %v, want [6]", closers)
	}
	want := map[int]bool{2: true, 3: true, 4: true, 5: true, 6: true}
	if !reflect.DeepEqual(body, want) {
		t.Errorf("body = %v, want %v", body, want)
	}
}
