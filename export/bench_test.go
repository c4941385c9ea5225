package export_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flowteam/flowteam/export"
	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/testkit"
)

// gatewayChain is a definition document of n exclusive gateways in a row: gateway i
// goes on to gateway i+1 when x > i, else to the end node (n+2 nodes, n conditions).
func gatewayChain(n int) []byte {
	var b strings.Builder
	b.WriteString("id: chain\nlayout:\n  - {id: s, type: start, link: g0}\n")
	for i := range n {
		next := fmt.Sprintf("g%d", i+1)
		if i == n-1 {
			next = "e"
		}
		fmt.Fprintf(&b, "  - {id: g%d, type: exclusive, link: [{nextId: %s, when: \"x > %d\"}, {nextId: e}]}\n", i, next, i)
	}
	b.WriteString("  - {id: e, type: end}\n")
	return []byte(b.String())
}

// BenchmarkLoadGateways reads, builds, registers (compiles) and validates a graph of n
// exclusive gateways (gatewayChain). Target: at most 0.5 s at 10,000 gateways, and the
// time per gateway the same at 1,000 as at 10,000.
func BenchmarkLoadGateways(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			data := gatewayChain(n)
			b.ReportAllocs()
			defer testkit.ReportCPU(b, n)()
			for b.Loop() {
				g, err := flow.LoadGraph("chain.yml", data)
				if err != nil {
					b.Fatal(err)
				}
				if err := flow.NewEngine().Register(g); err != nil {
					b.Fatal(err)
				}
				if fs := export.Validate(g); export.HasErrors(fs) {
					b.Fatal(fs)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/gateway")
		})
	}
}
