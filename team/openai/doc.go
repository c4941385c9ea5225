// Package openai is a chat model for package team on the official OpenAI Go SDK
// (github.com/openai/openai-go/v3). It speaks the chat-completions protocol, so it
// works with any provider that does: OpenAI, DeepSeek, vLLM, Ollama, LM Studio.
//
// A Model is a team.ChatModel and a team.StreamingModel; give it to an agent:
//
//	model, err := openai.New("gpt-4o-mini",
//		openai.WithAPIKey(os.Getenv("OPENAI_API_KEY")),
//		openai.WithTimeout(2*time.Minute))
//	if err != nil {
//		return err
//	}
//	agent, err := team.NewReActAgent("analyst", model, team.WithTools(lookup))
//
// For a local server, set its root: openai.WithBaseURL("http://localhost:11434/v1").
// The client reads no environment variables; the caller passes what it needs.
//
// # Requests and answers
//
// Messages, tool definitions (their JSON Schema as the function parameters), tool
// calls and the options of team.ChatOptions map to the request; ChatOptions.Extra
// fields go into the request body as they are. The answer's usage includes reasoning
// (think) and cached tokens; a thinking model's reasoning text (reasoning_content or
// reasoning, outside the OpenAI schema) becomes Message.Reasoning. ChatStream
// streams server-sent events as team.Delta values, tool-call arguments included, in
// fragments that team.Collect assembles.
//
// # Errors and retries
//
// Failures are *team.Error values with a type callers branch on (errors.Is with
// team.ErrRateLimited and the other sentinels): auth_denied, not_found,
// invalid_query, rate_limited, source_unavailable, timeout, bad_response, cancelled;
// Model.Chat lists which status gives which. Retryable ones are retried by one loop,
// this package's, with flow's RetryPolicy and flow.Backoff (WithRetry); the SDK's own
// retries are turned off so that none is doubled. A Retry-After header replaces the
// backoff, up to WithMaxRetryAfter; a date in it is read against the response's Date
// header, the server's clock. Every retry is counted as trace.CountRetry for the
// run's metrics. The API key never appears in an error.
package openai
