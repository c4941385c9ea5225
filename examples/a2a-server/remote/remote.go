// Package remote is what the a2a-server example serves: the editorial desk of
// examples/team-supervisor (a supervisor team) and a patent agent whose database
// is down, each as an A2A agent. The a2a-client example's test serves it in process.
package remote

import (
	"context"
	"net/http"
	"strings"

	"github.com/flowteam/flowteam/examples/team-supervisor/desk"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/team/a2a"
	"github.com/flowteam/flowteam/testkit"
)

// Paths of the agents under the server's root.
const (
	DeskPath    = "/desk/"
	PatentsPath = "/patents/"
)

// Server serves the agents; Close ends the runs in flight.
type Server struct {
	handler http.Handler
	servers []*a2a.Server
}

// New returns the server whose agent cards advertise the endpoints under baseURL
// (such as "http://127.0.0.1:8090").
func New(baseURL string) *Server {
	base := strings.TrimSuffix(baseURL, "/")
	s := &Server{}
	mux := http.NewServeMux()
	for path, agent := range map[string]team.Agent{DeskPath: freshDesk{}, PatentsPath: patents()} {
		srv := a2a.NewServer(agent, a2a.WithURL(base+path))
		s.servers = append(s.servers, srv)
		mux.Handle(path, http.StripPrefix(strings.TrimSuffix(path, "/"), srv.Handler()))
	}
	s.handler = mux
	return s
}

// Handler returns the HTTP handler: each agent's card and JSON-RPC endpoint under
// its path.
func (s *Server) Handler() http.Handler { return s.handler }

// Close ends the runs in flight.
func (s *Server) Close() {
	for _, srv := range s.servers {
		srv.Close()
	}
}

// freshDesk runs each task on a new desk: its scripted models answer one run each.
// A real deployment serves one desk built on a real model (see team-openai).
type freshDesk struct{}

func (freshDesk) Name() string { return desk.Name }

func (freshDesk) Role() string {
	return "an editorial desk: a researcher, a writer and a reviewer under a supervisor"
}

func (freshDesk) Call(ctx context.Context, prompt string, sess *team.AgentSession) (*team.Answer, error) {
	tm, err := desk.New(scriptedModels())
	if err != nil {
		return nil, err
	}
	return tm.Call(ctx, prompt, sess)
}

// scriptedModels route the researcher, then the writer, then finish.
func scriptedModels() desk.Models {
	sup := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("d1", team.RouteToolName, `{"to":"researcher","task":"find the market size"}`)),
		testkit.Reply("writer"),
		testkit.Reply("The brief is written. FINISH"),
	)
	res := testkit.NewScriptedModel(
		testkit.CallTools(testkit.ToolCall("l1", "lookup", `{"topic":"e-bike market"}`)),
		testkit.Reply("Market: about 20bn EUR in 2024, +9% a year."),
	)
	writer := testkit.NewScriptedModel(testkit.Reply("Europe's e-bike market reached about 20bn EUR in 2024 and grows 9% a year."))
	return desk.Models{Supervisor: sup, Researcher: res, Writer: writer, Reviewer: testkit.NewScriptedModel()}
}

// patents is an agent whose patent database refuses every connection: its task
// fails with a structured, retryable error and the database's own code.
func patents() team.Agent {
	return testkit.NewFailingAgent("patents", &team.Error{Type: team.TypeSourceUnavailable, Retry: true,
		Code: "PATENT_DB_DOWN", Message: "patent_db refused the connection"})
}
