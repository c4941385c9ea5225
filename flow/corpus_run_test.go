package flow_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

const runCorpus = "../../shared/corpus/solon-flow"

// TestCorpusRuns runs the Solon corpus files whose scripts are portable expressions and
// checks the value each graph computes. Every expected value is worked out by reading
// the graph, as noted per case.
func TestCorpusRuns(t *testing.T) {
	skipWithoutCorpus(t)
	cases := []struct {
		name  string
		files []string
		graph string
		vars  map[string]any
		key   string
		want  any
		visit []string // nodes that must have run
		skip  []string // nodes that must not have run
	}{
		// a > b is false for a=3, b=4, so the default link goes to "sub": 3 - 4.
		{name: "case1 sub", files: []string{"solon-flow__benchmark__case1.yml"}, vars: map[string]any{"a": 3, "b": 4}, key: "result", want: -1, visit: []string{"sub"}, skip: []string{"sum"}},
		{name: "case1 sum", files: []string{"solon-flow__benchmark__case1.yml"}, vars: map[string]any{"a": 4, "b": 3}, key: "result", want: 7, visit: []string{"sum"}, skip: []string{"sub"}},
		// One node, no start type: it is the start (no incoming link).
		{name: "script_case1", files: []string{"solon-flow__flow__script_case1.graph.json"}, key: "result", want: 111},
		// Three puts in a row; the last one wins: 333 + c.
		{name: "script_case2", files: []string{"solon-flow__flow__script_case2.graph.json"}, vars: map[string]any{"a": 1, "b": 2, "c": 3}, key: "result", want: 336},
		// day=5 matches 3..7 (n3: 3); day=8 matches >=7 (n4: 7); day=1 goes straight to n5.
		{name: "script_case3 5", files: []string{"solon-flow__flow__script_case3.graph.json"}, vars: map[string]any{"day": 5}, key: "result", want: 3, visit: []string{"n3"}, skip: []string{"n4"}},
		{name: "script_case3 8", files: []string{"solon-flow__flow__script_case3.graph.json"}, vars: map[string]any{"day": 8}, key: "result", want: 7, visit: []string{"n4"}, skip: []string{"n3"}},
		{name: "script_case3 1", files: []string{"solon-flow__flow__script_case3.graph.json"}, vars: map[string]any{"day": 1}, key: "result", want: nil, visit: []string{"n5"}, skip: []string{"n3", "n4"}},
		// Inclusive: day=10 takes n3 (+3), n4 (+7) and the unconditional n6 (end);
		// the join n5 waits for n3 and n4 only: 10. day=3: only n3 and n6: 3. day=1: 0.
		{name: "script_case4 10", files: []string{"solon-flow__flow__script_case4.graph.json"}, vars: map[string]any{"day": 10}, key: "result", want: 10, visit: []string{"n3", "n4", "n5", "n6"}},
		{name: "script_case4 3", files: []string{"solon-flow__flow__script_case4.graph.json"}, vars: map[string]any{"day": 3}, key: "result", want: 3, skip: []string{"n4"}},
		{name: "script_case4 1", files: []string{"solon-flow__flow__script_case4.graph.json"}, vars: map[string]any{"day": 1}, key: "result", want: 0, skip: []string{"n3", "n4", "n5"}},
		// Parallel: 0 + 3 + 7 whatever order the branches finish in.
		{name: "script_case5", files: []string{"solon-flow__flow__script_case5.graph.yml"}, key: "result", want: 10},
		// c6 calls the sub-graph c62, which puts 112.
		{name: "script_case6", files: []string{"solon-flow__flow__script_case6.graph.json", "solon-flow__flow__script_case62.graph.json"}, graph: "c6", key: "result", want: 112},
		// day=30 activates all seven +1 nodes plus the final +1: 8; day=1 only n1 and the final: 2.
		{name: "script_case7 30", files: []string{"solon-flow__flow__script_case7.graph.yml"}, vars: map[string]any{"day": 30}, key: "result", want: 8},
		{name: "script_case7 1", files: []string{"solon-flow__flow__script_case7.graph.yml"}, vars: map[string]any{"day": 1}, key: "result", want: 2},
		// Two meta scripts ($script.script1 with a dotted path, $script2), each +1.
		{name: "script_case8", files: []string{"solon-flow__flow__script_case8.graph.yml"}, vars: map[string]any{"result": 0}, key: "result", want: 2},
		// Loops: the last item stays in "temp". "1...9" ends before 9; "1:3:1" gives 1, 2.
		{name: "loop_demo2", files: []string{"solon-flow__flow__loop-demo2.yml"}, key: "temp", want: "c"},
		{name: "loop_demo3", files: []string{"solon-flow__flow__loop-demo3.yml"}, key: "temp", want: 3},
		{name: "loop_demo4", files: []string{"solon-flow__flow__loop-demo4.yml"}, key: "temp", want: 8},
		{name: "loop_demo5", files: []string{"solon-flow__flow__loop-demo5.yml"}, key: "temp", want: 2},
		// Leave approval: day>=3 goes through the department manager n2.
		{name: "demo1 5 days", files: []string{"solon-flow__demo__approve__demo1_case1.chain.yml"}, vars: map[string]any{"day": 5}, visit: []string{"s", "n1", "g1", "n2", "e"}},
		{name: "demo1 1 day", files: []string{"solon-flow__demo__approve__demo1_case1.chain.yml"}, vars: map[string]any{"day": 1}, visit: []string{"n1", "e"}, skip: []string{"n2"}},
		// stepflow calls stepflow_sub when a > 3; b <= 5 leaves both exclusive loops.
		{name: "stepflow", files: []string{"solon-flow__flow__control__stepflow.graph.yml", "solon-flow__flow__control__stepflow_sub.graph.yml"}, graph: "stepflow", vars: map[string]any{"a": 4, "b": 1},
			visit: []string{"node_pzf5u4xbv8", "node_taosvt7gh"}, skip: []string{"node_focvfre5rq"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := flow.NewEngine()
			paths := make([]string, len(tc.files))
			for i, f := range tc.files {
				paths[i] = filepath.Join(runCorpus, f)
			}
			gs, err := e.LoadFiles(paths...)
			require.NoError(t, err)
			id := tc.graph
			if id == "" {
				id = gs[0].ID
			}
			rec := &pathRec{}
			fc := flow.NewContextWith("corpus", tc.vars)
			res, err := e.Eval(context.Background(), id, fc, flow.WithEvalInterceptor(rec, 0))
			require.NoError(t, err)
			assert.Equal(t, flow.StatusCompleted, res.Status)
			if tc.key != "" {
				assert.Equal(t, tc.want, fc.Value(tc.key))
			}
			path := rec.Path()
			for _, n := range tc.visit {
				assert.Contains(t, path, n)
			}
			for _, n := range tc.skip {
				assert.NotContains(t, path, n)
			}
		})
	}
}

// TestCorpusStepflowLoopsUntilStepLimit: with b > 5 the second exclusive gateway loops
// back forever; the step limit ends the run with a clear error.
func TestCorpusStepflowLoopsUntilStepLimit(t *testing.T) {
	skipWithoutCorpus(t)
	e := flow.NewEngine()
	_, err := e.LoadFiles(runCorpus+"/solon-flow__flow__control__stepflow.graph.yml", runCorpus+"/solon-flow__flow__control__stepflow_sub.graph.yml")
	require.NoError(t, err)
	res, err := e.Eval(context.Background(), "stepflow", flow.NewContextWith("x", map[string]any{"a": 4, "b": 6}), flow.WithSteps(200))
	require.ErrorIs(t, err, flow.ErrStepLimit)
	assert.Equal(t, flow.StatusFailed, res.Status)
	require.NotNil(t, res.Frontier)
}

// TestCorpusJavaScriptsFailAtLoad: scripts that call Java do not compile; the engine
// says so when the graph is registered, naming file, line and node.
func TestCorpusJavaScriptsFailAtLoad(t *testing.T) {
	skipWithoutCorpus(t)
	e := flow.NewEngine()
	_, err := e.LoadFile(runCorpus + "/solon-flow__flow__for_case1.graph.yml")
	require.Error(t, err)
	assert.ErrorIs(t, err, flow.ErrCompile)
	msg := err.Error()
	assert.Contains(t, msg, "solon-flow__flow__for_case1.graph.yml:")
	assert.Contains(t, msg, `node "n-2"`)

	_, err = e.LoadFile(runCorpus + "/solon-flow__lab__fetch-demo-loop.yml")
	require.ErrorIs(t, err, flow.ErrUnknownTask)
	assert.True(t, strings.Contains(err.Error(), `"fetchCommunity"`), err.Error())
}

func skipWithoutCorpus(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(runCorpus); err != nil {
		t.Skipf("the Solon corpus is not beside the repository (%v)", err)
	}
}
