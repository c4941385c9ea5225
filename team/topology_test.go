package team_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
)

// routeYAML is the seeds' topology: the analyst agent writes a risk level and the
// exclusive route sends high risk to manual review.
const routeYAML = `
id: risk
layout:
  - {id: start, type: start, link: analyst}
  - id: analyst
    task: "@analyst"
    meta: {prompt: 'Assess order {{var "order.id"}}'}
    link: route
  - id: route
    type: exclusive
    link:
      - {nextId: manual, when: 'context.get("analysis.result") == "HIGH"'}
      - {nextId: auto}
  - {id: manual, task: 'context.put("route.result", "MANUAL")', link: end}
  - {id: auto, task: 'context.put("route.result", "AUTO")', link: end}
  - {id: end, type: end}
`

// The seeds' topology test: a deterministic analyst, a path recorder, assertions on
// the business result and on the path, never on a model's wording.
func TestTopologyWithDeterministicAnalyst(t *testing.T) {
	g, err := flow.LoadGraph("risk.yml", []byte(routeYAML))
	require.NoError(t, err)
	analyst := testkit.Analyst()
	rec := testkit.NewPathRecorder()
	eng := flow.NewEngine(team.WithAgents(analyst), flow.WithInterceptor(rec, 0))

	fc := flow.NewContextWith("order-7", map[string]any{"order.id": "A-7"})
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, res.Status)

	assert.Equal(t, "MANUAL", fc.Value("route.result"))
	assert.Equal(t, "HIGH", fc.Value("analyst.answer"))
	assert.Equal(t, []string{"Assess order A-7"}, analyst.Prompts())
	testkit.Expect(t, rec).
		Visited("analyst", "route", "manual").
		NotVisited("auto").
		InOrder("analyst", "route", "manual")
}

// The same topology built in Go, with the agent as a node component and the answer
// written where the node's meta says.
func TestTopologyInCode(t *testing.T) {
	s := flow.NewSpec("risk")
	s.Start("start").LinkTo("analyst")
	s.Activity("analyst").Do(team.AsTask(testkit.Analyst())).SetMeta(team.MetaAnswerKey, "risk").LinkTo("route")
	s.Exclusive("route").
		LinkTo("manual", flow.LinkWhen(`context.get("analysis.result") == "HIGH"`)).
		LinkTo("auto")
	s.Activity("manual").SetTask(`context.put("route.result", "MANUAL")`).LinkTo("end")
	s.Activity("auto").SetTask(`context.put("route.result", "AUTO")`).LinkTo("end")
	s.End("end")
	g, err := s.Build()
	require.NoError(t, err)

	rec := testkit.NewPathRecorder()
	fc := flow.NewContext("order-8")
	_, err = flow.NewEngine().EvalGraph(context.Background(), g, fc, flow.WithEvalInterceptor(rec, 0))
	require.NoError(t, err)
	assert.Equal(t, "HIGH", fc.Value("risk"))
	assert.Equal(t, "MANUAL", fc.Value("route.result"))
	testkit.AssertVisited(t, rec, "analyst", "route", "manual")
	testkit.AssertNotVisited(t, rec, "auto")
}

// A failing agent fails its node with the agent's structured error type as the code;
// a LOW analyst takes the other route.
func TestAgentTaskFailureAndOtherRoute(t *testing.T) {
	g, err := flow.LoadGraph("risk.yml", []byte(routeYAML))
	require.NoError(t, err)

	eng := flow.NewEngine(team.WithAgents(testkit.FailingWith("analyst", team.TypeAuthDenied, "key revoked")))
	res, err := eng.EvalGraph(context.Background(), g, flow.NewContextWith("o", map[string]any{"order.id": 1}))
	require.Error(t, err)
	assert.Equal(t, flow.StatusFailed, res.Status)
	var ne *flow.NodeError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, "analyst", ne.Node)
	assert.Equal(t, "auth_denied", ne.Code)
	assert.ErrorIs(t, err, team.ErrAuthDenied)
	require.Len(t, res.ExecutionErrors, 1)
	assert.Equal(t, "auth_denied", res.ExecutionErrors[0].Error.Type)

	rec := testkit.NewPathRecorder()
	low := testkit.NewFixedAgent("analyst", "LOW").Write("analysis.result", "LOW")
	eng = flow.NewEngine(team.WithAgents(low), flow.WithInterceptor(rec, 0))
	fc := flow.NewContextWith("o", map[string]any{"order.id": 2})
	_, err = eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	assert.Equal(t, "AUTO", fc.Value("route.result"))
	testkit.Expect(t, rec).Visited("analyst", "auto").NotVisited("manual")
}

// Prompts come from node meta or the "prompt" variable, answers go to the node's
// answerKey.
func TestAgentTaskPromptSources(t *testing.T) {
	echo := testkit.NewFixedAgent("echo", "ok")
	s := flow.NewSpec("p")
	s.Start("a").Do(team.AsTask(echo)).LinkTo("b")
	s.Activity("b").Do(team.AsTask(echo)).SetMeta(team.MetaPromptKey, "question").SetMeta(team.MetaAnswerKey, "b.out").LinkTo("c")
	s.Activity("c").Do(team.AsTask(echo)).SetMeta(team.MetaPrompt, `{{.n}} items for {{var "who"}}`).LinkTo("d")
	s.End("d").Do(team.AsTask(echo)).SetMeta(team.MetaPromptKey, "missing")
	g, err := s.Build()
	require.NoError(t, err)
	fc := flow.NewContextWith("i", map[string]any{"prompt": "hello", "question": map[string]any{"q": 1}, "n": 3, "who": "ann"})
	_, err = flow.NewEngine().EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	assert.Equal(t, []string{"hello", `{"q":1}`, "3 items for ann", ""}, echo.Prompts())
	assert.Equal(t, "ok", fc.Value("b.out"))
	assert.Equal(t, "ok", fc.Value("echo.answer"))

	// A template naming a missing variable fails the node, naming the variable.
	s2 := flow.NewSpec("bad")
	s2.Start("a").Do(team.AsTask(echo)).SetMeta(team.MetaPrompt, `{{var "nope"}}`)
	g2, err := s2.Build()
	require.NoError(t, err)
	_, err = flow.NewEngine().EvalGraph(context.Background(), g2, flow.NewContext("i"))
	require.ErrorContains(t, err, `no variable "nope"`)
}
