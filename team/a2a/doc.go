// Package a2a runs flowteam agents across processes with the A2A protocol, on the
// official SDK (github.com/a2aproject/a2a-go): Server exposes any team.Agent (a
// ReActAgent, a TeamAgent) as an A2A agent, and Client is a team.Agent that calls a
// remote A2A agent, so a remote agent can be a team's member.
//
// A server and a client of it:
//
//	srv := a2a.NewServer(desk) // desk is any team.Agent
//	defer srv.Close()
//	go http.ListenAndServe(":8090", srv.Handler())
//
//	remote, err := a2a.NewClient(ctx, "http://localhost:8090")
//	if err != nil {
//		return err
//	}
//	ans, err := remote.Call(ctx, "Write a brief on e-bikes", team.NewSession("s-1"))
//
// # Tasks and events
//
// Each call is one A2A task, unary (message/send) or streaming (message/stream). The
// run's events (team.Event) become working status updates, its answer an artifact
// named "answer" and the completed status. The client emits the remote run's events
// as nested in its own run, so team.Stream and a team's observers see them.
//
// # Structured failures
//
// A run that ends in an error becomes a failed task whose metadata carries the
// fields of ErrorMetadata: object_type "error", error_type, error_code, error_message,
// retryable, task_state and response_id; status.message.metadata mirrors them and
// status.message.parts carries the text. Errors a team recovers from stay ordinary
// events. WithStructuredErrors(false) turns the fields off.
//
// The client turns a failed, rejected or canceled task back into the *team.Error
// of the process that failed: errors.As and errors.Is work, and the code and the
// retryable flag are kept, so a coordinator tells "the remote agent timed out" from
// "it found nothing" as it does in process (a timed-out remote sub-agent is a gap in
// its coverage notes). It reads the outer metadata first and the message's second;
// WithConverter is the one place to adapt a provider whose metadata differs. A
// streaming call stops at the first terminal status: no answer follows a failure.
//
// # Limits
//
// Each task runs in a fresh session named by its A2A context id: a remote agent keeps
// no history between tasks, and a run that waits for human decisions ends the task
// as input-required, which the client reports as an agent_error. When a unary call's
// context ends, the remote task runs on (the client does not know its id yet); a
// streaming call cancels it. Bound remote runs with WithRunTimeout.
package a2a
