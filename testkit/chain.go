package testkit

import (
	"context"
	"fmt"
	"testing"

	"github.com/flowteam/flowteam/flow"
)

// Chain builds the linear graph id: start "s", activities "n0" … "n<n-1>" each running
// task (a no-op when task is nil), end "e"; with n = 0, "s" links to "e". The engine,
// audit and session benchmarks measure their per-node costs on it.
func Chain(tb testing.TB, id string, n int, task flow.TaskFunc) *flow.Graph {
	tb.Helper()
	if n < 0 {
		tb.Fatalf("testkit: Chain %q: %d activities", id, n)
	}
	if task == nil {
		task = func(context.Context, *flow.Context, *flow.Node) error { return nil }
	}
	s := flow.NewSpec(id)
	first := "n0"
	if n == 0 {
		first = "e"
	}
	s.Start("s").LinkTo(first)
	for i := range n {
		next := fmt.Sprintf("n%d", i+1)
		if i == n-1 {
			next = "e"
		}
		s.Activity(fmt.Sprintf("n%d", i)).DoFunc(task).LinkTo(next)
	}
	s.End("e")
	g, err := s.Build()
	if err != nil {
		tb.Fatal(err)
	}
	return g
}
