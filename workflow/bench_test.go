package workflow_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/testkit"
	"github.com/flowteam/flowteam/workflow"
)

const benchSteps = 10

// approvalChain is start, ten approvals by "a", end.
func approvalChain(b *testing.B) *flow.Engine {
	spec := flow.NewSpec("chain")
	spec.Start("s").LinkTo("step1")
	for i := 1; i <= benchSteps; i++ {
		next := fmt.Sprintf("step%d", i+1)
		if i == benchSteps {
			next = "e"
		}
		spec.Activity(fmt.Sprintf("step%d", i)).SetMeta("actor", "a").LinkTo(next)
	}
	spec.End("e")
	g, err := spec.Build()
	if err != nil {
		b.Fatal(err)
	}
	eng := flow.NewEngine()
	if err := eng.Register(g); err != nil {
		b.Fatal(err)
	}
	return eng
}

// benchApproval claims and forwards every step of the chain, one instance per
// iteration; ns/step is the cost of one claim plus one submit.
func benchApproval(b *testing.B, repo workflow.Repository) {
	x := workflow.NewExecutor(approvalChain(b), workflow.NewActorController(), repo)
	ctx := context.Background()
	a := workflow.As("actor", "a")
	b.ReportAllocs()
	cpu0, cpuOK := testkit.ProcessCPU()
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprintf("i%d", i)
		for range benchSteps {
			task, err := x.ClaimTask(ctx, "chain", id, a, nil)
			if err != nil || task == nil {
				b.Fatal(err, task)
			}
			if _, err := x.SubmitTask(ctx, "chain", id, workflow.Submit{Node: task.ID(), Action: workflow.Forward, Actor: a}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchSteps), "ns/step")
	// On a loaded machine the elapsed time measures the neighbours too.
	if cpu1, ok := testkit.ProcessCPU(); ok && cpuOK {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N*benchSteps), "cpu-ns/step")
	}
}

func BenchmarkClaimSubmitMemory(b *testing.B) { benchApproval(b, workflow.NewMemoryRepository()) }

func BenchmarkClaimSubmitSessionMemory(b *testing.B) {
	benchApproval(b, workflow.NewStoreRepository(session.NewMemoryStore()))
}

func BenchmarkClaimSubmitFile(b *testing.B) {
	fs, err := session.NewFileStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	benchApproval(b, workflow.NewStoreRepository(fs))
}

// BenchmarkRawFileSave is one FileStore save of a snapshot of the same size, for
// comparison: a step of the file repository saves twice (claim, submit).
func BenchmarkRawFileSave(b *testing.B) {
	fs, err := session.NewFileStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	snap := &session.Snapshot{Instance: "raw", Graph: "chain", Hash: approvalChain(b).Graphs()[0].Hash(),
		Status: session.StatusSuspended, Vars: map[string]any{"days": 3}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := fs.Save(ctx, snap, snap.Version); err != nil {
			b.Fatal(err)
		}
	}
}
