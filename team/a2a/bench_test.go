package a2a_test

import (
	"context"
	"testing"

	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/team/a2a"
	"github.com/flowteam/flowteam/testkit"
)

// BenchmarkAgentCall is the in-process call the A2A round trips compare with.
func BenchmarkAgentCall(b *testing.B) {
	agent := testkit.Analyst()
	ctx := context.Background()
	b.ReportAllocs()
	defer testkit.ReportCPU(b, 0)()
	for b.Loop() {
		if _, err := agent.Call(ctx, "rate it", team.NewSession("s-1")); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkA2ARoundTrip measures one unary call of the same agent through an A2A
// client and an in-process server over loopback HTTP: the message, the task, its
// events and its answer.
func BenchmarkA2ARoundTrip(b *testing.B) {
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			hs := serve(b, testkit.Analyst())
			c := dial(b, hs, a2a.WithStreaming(m.streaming))
			ctx := context.Background()
			b.ReportAllocs()
			defer testkit.ReportCPU(b, 0)()
			for b.Loop() {
				if _, err := c.Call(ctx, "rate it", team.NewSession("s-1")); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
