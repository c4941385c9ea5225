package workflow_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/testkit"
	"github.com/flowteam/flowteam/workflow"
)

// repositories are the repositories every behaviour test runs on: the memory one and
// the session stores (memory, file, Redis).
var repositories = []struct {
	name string
	open func(t *testing.T) workflow.Repository
}{
	{"memory", func(*testing.T) workflow.Repository { return workflow.NewMemoryRepository() }},
	{"session-memory", func(*testing.T) workflow.Repository { return workflow.NewStoreRepository(session.NewMemoryStore()) }},
	{"file", func(t *testing.T) workflow.Repository {
		fs, err := session.NewFileStore(t.TempDir())
		require.NoError(t, err)
		return workflow.NewStoreRepository(fs)
	}},
	{"redis", func(t *testing.T) workflow.Repository { return workflow.NewStoreRepository(testkit.RedisStore(t)) }},
}

// eachRepository runs fn once per repository.
func eachRepository(t *testing.T, fn func(t *testing.T, repo workflow.Repository)) {
	for _, r := range repositories {
		t.Run(r.name, func(t *testing.T) { fn(t, r.open(t)) })
	}
}

// engine loads the workflow graphs of testdata, with the Go tasks given.
func engine(t testing.TB, tasks map[string]flow.Task) *flow.Engine {
	t.Helper()
	e := flow.NewEngine(flow.WithReadOptions(flow.SolonNodeTypes())) // Solon's test3_sub names types "startb" and "endb"
	// sf1's copy steps: a Go task that does nothing, unless the test counts them.
	e.RegisterTask("OaMetaProcessCom", flow.TaskFunc(func(context.Context, *flow.Context, *flow.Node) error { return nil }))
	for name, task := range tasks {
		e.RegisterTask(name, task)
	}
	_, err := e.Load("testdata")
	require.NoError(t, err)
	return e
}

// roleAdmin is the executor of Solon's jump tests: controller key "role", "admin" may
// operate every node.
func roleAdmin(t testing.TB, repo workflow.Repository) *workflow.Executor {
	ctrl := workflow.NewActorController("role").WithAdmins("admin")
	return workflow.NewExecutor(engine(t, nil), ctrl, repo)
}

func claim(t *testing.T, x *workflow.Executor, graph, id string, a workflow.Actor) *workflow.Task {
	t.Helper()
	task, err := x.ClaimTask(context.Background(), graph, id, a, nil)
	require.NoError(t, err)
	return task
}

func submit(t *testing.T, x *workflow.Executor, graph, id string, s workflow.Submit) *workflow.Outcome {
	t.Helper()
	out, err := x.SubmitTask(context.Background(), graph, id, s)
	require.NoError(t, err)
	return out
}

func taskIDs(tasks []workflow.Task) (ids []string, waiting int) {
	for _, tk := range tasks {
		ids = append(ids, tk.ID())
		if tk.State == workflow.Waiting {
			waiting++
		}
	}
	return ids, waiting
}
