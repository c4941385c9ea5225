package team_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
)

// The resume tests run their second half in a new process: the test binary re-executed
// with childEnv set to a mode, childDir to the directory holding the stored session.
const (
	childEnv = "FLOWTEAM_TEAM_CHILD"
	childDir = "FLOWTEAM_TEAM_DIR"
)

// childReport is what the second process found and did, written as JSON for the test.
type childReport struct {
	Pending   []string `json:"pending"`
	Status    string   `json:"status"`
	Answer    string   `json:"answer"`
	ToolCalls []string `json:"toolCalls"`
	// ModelRequests is how many requests the new process's model got; ToolResults the
	// tool-call ids answered in the first of them, in order.
	ModelRequests int      `json:"modelRequests"`
	ToolResults   []string `json:"toolResults"`
	After         any      `json:"after"`
}

// runChild is the second process. It exits 0 after writing report.json.
func runChild() int {
	dir := os.Getenv(childDir)
	rep, err := childMain(os.Getenv(childEnv), dir)
	if err == nil {
		var data []byte
		data, err = json.Marshal(rep)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "report.json"), data, 0o600)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

func childMain(mode, dir string) (*childReport, error) {
	ctx := context.Background()
	box := &toolbox{}
	// A new process has a new model: it only has to give the final answer, since the
	// decided batch runs before the model is asked anything.
	model := testkit.NewScriptedModel(testkit.Reply("paid"))
	agent, err := team.NewReActAgent("assistant", model, team.WithTools(box.weather(), box.transfer(), box.remove()))
	if err != nil {
		return nil, err
	}
	rep := &childReport{}
	decisions := []team.Decision{
		team.ApproveWithArgs("c2", json.RawMessage(`{"to":"acme","amount":900}`)),
		team.Reject("c3", "keep the file"),
	}
	switch mode {
	case "flow":
		// The flow session is stored by the session package's Runner in a file store.
		g, err := flow.LoadGraph("pay.yml", []byte(payYAML))
		if err != nil {
			return nil, err
		}
		eng := flow.NewEngine(team.WithAgents(agent))
		if err := eng.Register(g); err != nil {
			return nil, err
		}
		store, err := session.NewFileStore(dir)
		if err != nil {
			return nil, err
		}
		runner := session.NewRunner(eng, store)
		snap, err := runner.Load(ctx, "pay-9")
		if err != nil {
			return nil, err
		}
		p := team.SessionOf(flow.NewContextWith("", snap.Vars)).Pending("assistant")
		if p == nil {
			return nil, errors.New("nothing pending in the stored session")
		}
		rep.Pending = callIDs(p)
		updates, err := team.DecideIn(snap.Vars, "assistant", decisions...)
		if err != nil {
			return nil, err
		}
		res, err := runner.Resume(ctx, "pay-9", updates)
		if err != nil {
			return nil, err
		}
		rep.Status = string(res.Status)
		rep.Answer, _ = res.Context.GetString("assistant.answer")
		rep.After = res.Context.Value("after")
	case "agent":
		// A standalone agent session, stored as plain JSON in a file.
		data, err := os.ReadFile(filepath.Join(dir, "session.json"))
		if err != nil {
			return nil, err
		}
		sess, err := team.UnmarshalSession(data)
		if err != nil {
			return nil, err
		}
		rep.Pending = callIDs(sess.Pending("assistant"))
		if err := sess.Decide("assistant", decisions...); err != nil {
			return nil, err
		}
		ans, err := agent.Resume(ctx, sess)
		if err != nil {
			return nil, err
		}
		rep.Status, rep.Answer = "completed", ans.Content
	default:
		return nil, fmt.Errorf("unknown mode %q", mode)
	}
	rep.ToolCalls = box.Calls()
	reqs := model.Requests()
	rep.ModelRequests = len(reqs)
	if len(reqs) > 0 {
		for _, m := range reqs[0].Messages {
			if m.Role == team.RoleTool {
				rep.ToolResults = append(rep.ToolResults, m.ToolCallID)
			}
		}
	}
	return rep, nil
}

const payYAML = `
id: pay
layout:
  - {id: start, type: start, link: assistant}
  - {id: assistant, task: "@assistant", meta: {prompt: 'Pay the bills of {{var "month"}}'}, link: after}
  - {id: after, task: 'context.put("after", true)', link: end}
  - {id: end, type: end}
`

// runSecondProcess re-executes the test binary in the given mode and returns its report.
func runSecondProcess(t *testing.T, mode, dir string) childReport {
	return secondProcess[childReport](t, "^$", dir, childEnv+"="+mode, childDir+"="+dir)
}

// secondProcess re-executes the test binary running the tests that match run, with env
// added to its environment, and decodes the report.json it writes into dir.
func secondProcess[R any](t *testing.T, run, dir string, env ...string) R {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run="+run, "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "second process: %s", out)
	data, err := os.ReadFile(filepath.Join(dir, "report.json"))
	require.NoError(t, err, "second process: %s", out)
	var rep R
	require.NoError(t, json.Unmarshal(data, &rep))
	return rep
}

// HITL inside a flow, resumed in a new process from a file store: the first process
// runs until the agent holds its batch and the session Runner saves the instance; the
// second loads it, sees the pending calls, decides, and resumes. The decided batch runs
// on the same call ids without a model call before it.
func TestHITLResumeInNewProcessFromFileStore(t *testing.T) {
	dir := t.TempDir()
	box := &toolbox{}
	model := testkit.NewScriptedModel(batchTurn())
	agent := hitlAgent(t, box, model)
	eng := flow.NewEngine(team.WithAgents(agent))
	g, err := flow.LoadGraph("pay.yml", []byte(payYAML))
	require.NoError(t, err)
	require.NoError(t, eng.Register(g))
	store, err := session.NewFileStore(dir)
	require.NoError(t, err)
	runner := session.NewRunner(eng, store)

	res, err := runner.Run(context.Background(), "pay", flow.NewContextWith("pay-9", map[string]any{"month": "May"}))
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	assert.Empty(t, box.Calls())

	rep := runSecondProcess(t, "flow", dir)
	assert.Equal(t, []string{"c2", "c3"}, rep.Pending)
	assert.Equal(t, "completed", rep.Status)
	assert.Equal(t, "paid", rep.Answer)
	assert.Equal(t, true, rep.After)
	assert.Equal(t, []string{`weather:{"city":"Oslo"}`, `transfer:{"to":"acme","amount":900}`, `transfer:{"to":"cafe","amount":10}`}, rep.ToolCalls)
	assert.Equal(t, 1, rep.ModelRequests)
	assert.Equal(t, []string{"c1", "c2", "c3", "c4"}, rep.ToolResults)

	snap, err := store.Load(context.Background(), "pay-9")
	require.NoError(t, err)
	assert.Equal(t, session.StatusCompleted, snap.Status)
	assert.Nil(t, team.SessionOf(flow.NewContextWith("", snap.Vars)).Pending("assistant"))
}

// A standalone agent session saved as JSON in a file, resumed in a new process.
func TestHITLAgentSessionResumeInNewProcess(t *testing.T) {
	dir := t.TempDir()
	box := &toolbox{}
	agent := hitlAgent(t, box, testkit.NewScriptedModel(batchTurn()))
	sess := team.NewSession("pay-10")
	ans, err := agent.Call(context.Background(), "Pay the bills", sess)
	require.NoError(t, err)
	require.NotNil(t, ans.Pending)
	data, err := team.MarshalSession(sess)
	require.NoError(t, err)
	tmp := filepath.Join(dir, "session.json.tmp")
	require.NoError(t, os.WriteFile(tmp, data, 0o600))
	require.NoError(t, os.Rename(tmp, filepath.Join(dir, "session.json")))

	rep := runSecondProcess(t, "agent", dir)
	assert.Equal(t, []string{"c2", "c3"}, rep.Pending)
	assert.Equal(t, "paid", rep.Answer)
	assert.Equal(t, []string{`weather:{"city":"Oslo"}`, `transfer:{"to":"acme","amount":900}`, `transfer:{"to":"cafe","amount":10}`}, rep.ToolCalls)
	assert.Equal(t, 1, rep.ModelRequests)
	assert.Equal(t, []string{"c1", "c2", "c3", "c4"}, rep.ToolResults)
}
