package team_test

import (
	"context"
	"testing"

	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/testkit"
)

// toolThenAnswer is a ChatModel for benchmarks: it calls the stock tool when the last
// message is the user's and answers once the tool's observation is in. Unlike a
// ScriptedModel it keeps no record of the requests, so it can answer b.N runs.
type toolThenAnswer struct{}

func (toolThenAnswer) Chat(_ context.Context, req *team.ChatRequest) (*team.ChatResponse, error) {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == team.RoleUser {
		return &team.ChatResponse{Message: team.Message{Role: team.RoleAssistant,
			ToolCalls: []team.ToolCall{testkit.ToolCall("call-1", "stock", `{"sku":"A-1"}`)}}}, nil
	}
	return &team.ChatResponse{Message: team.AssistantMessage("12 units of A-1 are in stock.")}, nil
}

// BenchmarkReActToolCall measures a ReAct agent's whole call in a new session: a model
// turn that calls a tool, the tool (schema check, decode, observation) and the
// answering turn. The model costs nothing, so this is the agent's own overhead.
func BenchmarkReActToolCall(b *testing.B) {
	stock := team.NewTool("stock", "Units in stock for a SKU",
		nil,
		func(_ context.Context, a stockArgs) (map[string]int, error) { return map[string]int{a.SKU: 12}, nil })
	agent, err := team.NewReActAgent("clerk", toolThenAnswer{}, team.WithTools(stock))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		ans, err := agent.Call(ctx, "How many A-1?", team.NewSession("s-1"))
		if err != nil || ans.Content == "" {
			b.Fatal(ans, err)
		}
	}
}

// newTrio returns a sequential team of three fixed agents; its answer is "third".
func newTrio(b *testing.B) *team.TeamAgent {
	trio, err := team.NewTeam("trio", team.WithMembers(testkit.NewFixedAgent("a", "first"),
		testkit.NewFixedAgent("b", "second"), testkit.NewFixedAgent("c", "third")))
	if err != nil {
		b.Fatal(err)
	}
	return trio
}

// BenchmarkTeamSequential measures a sequential team of three fixed agents, one call
// in a new session each: the team's cost per member on the flow engine (graph run,
// agent state in the session, trace and coverage).
func BenchmarkTeamSequential(b *testing.B) {
	trio := newTrio(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		ans, err := trio.Call(ctx, "go", team.NewSession("trio-1"))
		if err != nil || ans.Content != "third" {
			b.Fatal(ans, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/3, "ns/member")
}

// BenchmarkTeamStream is BenchmarkTeamSequential consumed as an event stream: the
// cost of the events and of the goroutine that runs the call.
func BenchmarkTeamStream(b *testing.B) {
	trio := newTrio(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		events := 0
		for _, err := range team.Stream(ctx, trio, "go", team.NewSession("trio-1")) {
			if err != nil {
				b.Fatal(err)
			}
			events++
		}
		if events == 0 {
			b.Fatal("no events")
		}
	}
}

// replyModel is a ChatModel for benchmarks that answers every request at once.
type replyModel struct{}

func (replyModel) Chat(context.Context, *team.ChatRequest) (*team.ChatResponse, error) {
	return &team.ChatResponse{Message: team.AssistantMessage("done, as asked")}, nil
}

// BenchmarkTeamLongSession measures a sequential team of three ReAct agents called
// again and again in one session, each member keeping 40 messages of history: the
// cost of a member's turn when the agents' state in the session is not empty.
func BenchmarkTeamLongSession(b *testing.B) {
	var members []team.Agent
	for _, name := range []string{"a", "b", "c"} {
		a, err := team.NewReActAgent(name, replyModel{}, team.WithHistoryLimit(40))
		if err != nil {
			b.Fatal(err)
		}
		members = append(members, a)
	}
	tm, err := team.NewTeam("trio", team.WithMembers(members...))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	sess := team.NewSession("long")
	for range 20 { // fills the histories
		if _, err := tm.Call(ctx, "go", sess); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tm.Call(ctx, "go", sess); err != nil {
			b.Fatal(err)
		}
	}
}
