// Package scc finds the strongly connected components of a directed graph. The engine
// (package flow) uses it to know which joins a split reaches, and the validator
// (package export) to find cycles; both graphs can have tens of thousands of nodes, so
// the walk is linear in nodes and links and iterative (a deep graph cannot overflow the
// goroutine stack).
package scc

// Components returns the strongly connected components of the graph whose nodes are
// nodes and whose links are given by next (Tarjan's algorithm); index numbers the nodes
// 0..len(nodes)-1. The components come in reverse topological order: a component comes
// after every component it has a link to, so the sinks come first.
func Components[N comparable](nodes []N, index func(N) int, next func(N) []N) [][]N {
	num := make([]int, len(nodes))
	low := make([]int, len(nodes))
	onStack := make([]bool, len(nodes))
	for i := range num {
		num[i] = -1
	}
	var (
		stack   []N
		out     [][]N
		counter int
	)
	type frame struct {
		n    N
		succ []N
		i    int
	}
	visit := func(n N) frame {
		num[index(n)], low[index(n)] = counter, counter
		counter++
		stack = append(stack, n)
		onStack[index(n)] = true
		return frame{n: n, succ: next(n)}
	}
	var call []frame
	for _, root := range nodes {
		if num[index(root)] >= 0 {
			continue
		}
		call = append(call[:0], visit(root))
		for len(call) > 0 {
			f := &call[len(call)-1]
			v := index(f.n)
			if f.i < len(f.succ) {
				w := f.succ[f.i]
				f.i++
				switch {
				case num[index(w)] < 0:
					call = append(call, visit(w))
				case onStack[index(w)]:
					low[v] = min(low[v], num[index(w)])
				}
				continue
			}
			n := f.n
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := index(call[len(call)-1].n)
				low[p] = min(low[p], low[v])
			}
			if low[v] == num[v] {
				var comp []N
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[index(w)] = false
					comp = append(comp, w)
					if w == n {
						break
					}
				}
				out = append(out, comp)
			}
		}
	}
	return out
}
