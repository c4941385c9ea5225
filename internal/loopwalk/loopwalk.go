// Package loopwalk finds the body of a loop in a graph of any node type: the engine
// (package flow) runs loops by it and the validator (package export) checks graphs
// that may not build by it, so both must walk a loop the same way.
package loopwalk

// Kind is what a node means to a loop walk.
type Kind int

// Node kinds.
const (
	Other Kind = iota // any node that is not a loop node
	Open              // a loop node with $for: it opens a loop
	Close             // a loop node without $for: it closes the innermost open loop
)

// Body walks the links from open, breadth first, counting the loops opened and closed
// on the way. It returns the closing nodes of the loop opened at open, in the order
// reached (the first is the one the engine passes when the loop has no items), and
// the loop's body: every node reached without passing one of those closing nodes,
// the closing nodes included and open excluded. A closing node of an inner loop is in
// the body; only the returned ones close this loop.
func Body[N comparable](open N, next func(N) []N, kind func(N) Kind) (closers []N, body map[N]bool) {
	type item struct {
		n     N
		depth int
	}
	seen := map[N]bool{open: true}
	body = map[N]bool{}
	var queue []item
	for _, n := range next(open) {
		queue = append(queue, item{n, 0})
	}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if seen[it.n] {
			continue
		}
		seen[it.n] = true
		body[it.n] = true
		depth := it.depth
		switch kind(it.n) {
		case Open:
			depth++
		case Close:
			if depth == 0 {
				closers = append(closers, it.n)
				continue // past this node the flow has left the loop
			}
			depth--
		}
		for _, n := range next(it.n) {
			queue = append(queue, item{n, depth})
		}
	}
	return closers, body
}
