package openai_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/team"
)

var streamLines = []string{
	": keep-alive\n\n",
	`data: {"model":"gpt-s","choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"Thinking."}}]}` + "\n\n",
	"event: message\n",
	`data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}` + "\n\n",
	`data: {"choices":[{"index":0,"delta":{"content":"lo"}}]}` + "\n\n",
	`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"weather","arguments":""}}]}}]}` + "\n\n",
	`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}}]}` + "\n\n",
	`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"search","arguments":"{}"}}]}}]}` + "\n\n",
	`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Oslo\"}"}}]}}]}` + "\n\n",
	`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n",
	`data: {"choices":[],"usage":{"prompt_tokens":50,"completion_tokens":30,"total_tokens":80,"prompt_tokens_details":{"cached_tokens":10},"completion_tokens_details":{"reasoning_tokens":12}}}` + "\n\n",
	"data: [DONE]\n\n",
}

func hi() *team.ChatRequest {
	return &team.ChatRequest{Messages: []team.Message{team.UserMessage("hi")}}
}

// Streaming: content, reasoning and tool calls arrive in fragments and assemble; the
// usage comes last; a rate limit before the stream is retried like any request.
func TestStream(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, n int) {
		if n == 1 {
			w.Header().Set("Retry-After", "2")
			writeJSON(w, 429, `{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`)
			return
		}
		sse(w, streamLines...)
	})
	c, clk := client(t, srv.URL)
	var deltas []team.Delta
	for d, err := range c.ChatStream(context.Background(), hi()) {
		require.NoError(t, err)
		deltas = append(deltas, d)
	}
	assert.Equal(t, []time.Duration{2 * time.Second}, clk.Waits())
	body := srv.Bodies()[1]
	assert.Equal(t, true, body["stream"])
	assert.Equal(t, map[string]any{"include_usage": true}, body["stream_options"])

	assert.Equal(t, "Thinking.", deltas[0].Reasoning)
	assert.Equal(t, "Hel", deltas[1].Content)
	assert.Equal(t, team.ToolCallDelta{Index: 0, ID: "call_1", Name: "weather"}, deltas[3].ToolCalls[0])
	assert.Equal(t, team.ToolCallDelta{Index: 0, Args: `{"city":`}, deltas[4].ToolCalls[0])
	resp := collected(t, deltas)
	assert.Equal(t, "Hello", resp.Message.Content)
	assert.Equal(t, "Thinking.", resp.Message.Reasoning)
	assert.Equal(t, []team.ToolCall{
		{ID: "call_1", Name: "weather", Args: json.RawMessage(`{"city":"Oslo"}`)},
		{ID: "call_2", Name: "search", Args: json.RawMessage(`{}`)},
	}, resp.Message.ToolCalls)
	assert.Equal(t, "tool_calls", resp.FinishReason)
	assert.Equal(t, "gpt-s", resp.Model)
	assert.Equal(t, team.Usage{PromptTokens: 50, CompletionTokens: 30, ReasoningTokens: 12, CachedTokens: 10, TotalTokens: 80}, resp.Usage)
}

// Providers that number every streamed tool call 0, or send no index at all, still
// give one call per call id: the calls are not merged into one call (names and
// arguments run together) that no tool answers to.
func TestStreamToolCallsWithoutDistinctIndex(t *testing.T) {
	for name, index := range map[string]string{"all index 0": `"index":0,`, "no index": ""} {
		t.Run(name, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
				sse(w,
					`data: {"choices":[{"index":0,"delta":{"tool_calls":[{`+index+`"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\"city\":"}}]}}]}`+"\n\n",
					`data: {"choices":[{"index":0,"delta":{"tool_calls":[{`+index+`"function":{"arguments":"\"Oslo\"}"}}]}}]}`+"\n\n",
					`data: {"choices":[{"index":0,"delta":{"tool_calls":[{`+index+`"id":"call_2","type":"function","function":{"name":"search","arguments":"{}"}}]}}]}`+"\n\n",
					`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`+"\n\n",
					"data: [DONE]\n\n")
			})
			c, _ := client(t, srv.URL)
			resp, err := team.Collect(c.ChatStream(context.Background(), hi()))
			require.NoError(t, err)
			assert.Equal(t, []team.ToolCall{
				{ID: "call_1", Name: "weather", Args: json.RawMessage(`{"city":"Oslo"}`)},
				{ID: "call_2", Name: "search", Args: json.RawMessage(`{}`)},
			}, resp.Message.ToolCalls)
		})
	}
}

// A request for several candidate answers (n > 1 through Extra): the stream answers
// with the first choice, as Chat does, instead of splicing the candidates' text and
// tool calls together.
func TestStreamFirstChoiceOnly(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		sse(w,
			`data: {"choices":[{"index":0,"delta":{"content":"Hel"}},{"index":1,"delta":{"content":"Bon"}}]}`+"\n\n",
			`data: {"choices":[{"index":1,"delta":{"content":"jour"}}]}`+"\n\n",
			`data: {"choices":[{"index":0,"delta":{"content":"lo"}}]}`+"\n\n",
			`data: {"choices":[{"index":1,"delta":{"tool_calls":[{"index":0,"id":"c9","function":{"name":"search","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`+"\n\n",
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n",
			"data: [DONE]\n\n")
	})
	c, _ := client(t, srv.URL)
	req := &team.ChatRequest{Messages: []team.Message{team.UserMessage("hi")}, Options: team.ChatOptions{Extra: map[string]any{"n": 2}}}
	resp, err := team.Collect(c.ChatStream(context.Background(), req))
	require.NoError(t, err)
	assert.Equal(t, float64(2), srv.Bodies()[0]["n"])
	assert.Equal(t, "Hello", resp.Message.Content)
	assert.Empty(t, resp.Message.ToolCalls)
	assert.Equal(t, "stop", resp.FinishReason)
}

// A gateway that ignores "stream" and answers with one JSON response: the answer is
// one delta.
func TestStreamJSONAnswer(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { writeJSON(w, 200, toolCallResponse) })
	c, _ := client(t, srv.URL)
	var deltas []team.Delta
	for d, err := range c.ChatStream(context.Background(), hi()) {
		require.NoError(t, err)
		deltas = append(deltas, d)
	}
	assert.Len(t, deltas, 1)
	resp := collected(t, deltas)
	assert.Equal(t, "The user wants weather.", resp.Message.Reasoning)
	assert.Equal(t, team.ToolCall{ID: "call_a", Name: "weather", Args: json.RawMessage(`{"city":"Oslo"}`)}, resp.Message.ToolCalls[0])
	assert.Equal(t, int64(160), resp.Usage.TotalTokens)
}

func TestStreamFailures(t *testing.T) {
	t.Run("error event", func(t *testing.T) {
		srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
			sse(w, streamLines[1], `data: {"error":{"message":"model overloaded"}}`+"\n\n")
		})
		c, _ := client(t, srv.URL)
		_, err := team.Collect(c.ChatStream(context.Background(), hi()))
		require.ErrorIs(t, err, team.ErrSourceUnavailable)
		assert.ErrorContains(t, err, "model overloaded")
	})
	t.Run("cut short", func(t *testing.T) {
		srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { sse(w, streamLines[:4]...) })
		c, _ := client(t, srv.URL)
		_, err := team.Collect(c.ChatStream(context.Background(), hi()))
		require.ErrorIs(t, err, team.ErrSourceUnavailable)
		assert.ErrorContains(t, err, "before the answer was complete")
	})
	t.Run("no choices", func(t *testing.T) {
		// Chat fails a response without choices; a stream that ends without one is not
		// an empty answer either.
		for name, lines := range map[string][]string{
			"done only":  {"data: [DONE]\n\n"},
			"usage only": {`data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":0}}` + "\n\n", "data: [DONE]\n\n"},
		} {
			srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { sse(w, lines...) })
			c, _ := client(t, srv.URL)
			_, err := team.Collect(c.ChatStream(context.Background(), hi()))
			var te *team.Error
			require.ErrorAs(t, err, &te, name)
			assert.Equal(t, team.TypeBadResponse, te.Type, name)
		}
	})
	t.Run("bad event", func(t *testing.T) {
		srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { sse(w, "data: {nope\n\n") })
		c, _ := client(t, srv.URL)
		_, err := team.Collect(c.ChatStream(context.Background(), hi()))
		var te *team.Error
		require.ErrorAs(t, err, &te)
		assert.Equal(t, team.TypeBadResponse, te.Type)
	})
	t.Run("stop early", func(t *testing.T) {
		release := make(chan struct{})
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			sse(w, streamLines[1:4]...)
			select { // hold the stream open until the client goes away
			case <-r.Context().Done():
			case <-release:
			}
		})
		defer close(release)
		c, _ := client(t, srv.URL)
		n := 0
		for _, err := range c.ChatStream(context.Background(), hi()) {
			require.NoError(t, err)
			n++
			break
		}
		assert.Equal(t, 1, n)
	})
	t.Run("auth before the stream", func(t *testing.T) {
		srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
			writeJSON(w, 401, `{"error":{"message":"bad key"}}`)
		})
		c, clk := client(t, srv.URL)
		_, err := team.Collect(c.ChatStream(context.Background(), hi()))
		require.ErrorIs(t, err, team.ErrAuthDenied)
		assert.ErrorContains(t, err, "bad key")
		assert.Empty(t, clk.Waits())
	})
	t.Run("invalid request", func(t *testing.T) {
		c, _ := client(t, "http://127.0.0.1:1")
		_, err := team.Collect(c.ChatStream(context.Background(), &team.ChatRequest{Messages: []team.Message{{Role: "narrator"}}}))
		require.ErrorIs(t, err, team.ErrInvalidQuery)
	})
}

// A stream that fails before the caller has seen any of the answer (an error event, a
// connection lost, a stream that ends early) is retried like a failed request; once
// the caller has seen part of it, the failure ends the stream, with the type of its
// cause and not retryable: a retry would repeat what the caller already has.
func TestStreamFailureRetryBeforeFirstToken(t *testing.T) {
	role := `data: {"model":"gpt-s","choices":[{"index":0,"delta":{"role":"assistant"}}]}` + "\n\n"
	abort := func(w http.ResponseWriter, lines ...string) {
		sse(w, lines...)
		panic(http.ErrAbortHandler) // the connection drops mid-stream
	}
	before := map[string]func(http.ResponseWriter){
		"error event": func(w http.ResponseWriter) {
			sse(w, role, `data: {"error":{"message":"overloaded","type":"server_error"}}`+"\n\n")
		},
		"rate limited event": func(w http.ResponseWriter) {
			sse(w, `data: {"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`+"\n\n")
		},
		"connection lost": func(w http.ResponseWriter) { abort(w, role) },
		"ended early":     func(w http.ResponseWriter) { sse(w, role) },
	}
	for name, fail := range before {
		t.Run("before: "+name, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, n int) {
				if n == 1 {
					fail(w)
					return
				}
				sse(w, streamLines...)
			})
			c, clk := client(t, srv.URL)
			resp, err := team.Collect(c.ChatStream(context.Background(), hi()))
			require.NoError(t, err)
			assert.Equal(t, "Hello", resp.Message.Content)
			assert.Len(t, srv.Bodies(), 2)
			assert.Equal(t, []time.Duration{time.Second}, clk.Waits())
		})
	}
	after := map[string]struct {
		fail func(http.ResponseWriter)
		typ  team.ErrorType
	}{
		"error event": {func(w http.ResponseWriter) {
			sse(w, streamLines[1], `data: {"error":{"message":"model overloaded","type":"server_error"}}`+"\n\n")
		}, team.TypeSourceUnavailable},
		"rate limited event": {func(w http.ResponseWriter) {
			sse(w, streamLines[3], `data: {"error":{"message":"slow down","code":"rate_limit_exceeded"}}`+"\n\n")
		}, team.TypeRateLimited},
		"connection lost": {func(w http.ResponseWriter) { abort(w, streamLines[1], streamLines[3]) }, team.TypeSourceUnavailable},
		"ended early":     {func(w http.ResponseWriter) { sse(w, streamLines[:4]...) }, team.TypeSourceUnavailable},
	}
	for name, c := range after {
		t.Run("after: "+name, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { c.fail(w) })
			cl, clk := client(t, srv.URL)
			seen := 0
			var err error
			for d, e := range cl.ChatStream(context.Background(), hi()) {
				if e != nil {
					err = e
					break
				}
				seen += len(d.Content) + len(d.Reasoning)
			}
			assert.Positive(t, seen, "the caller saw part of the answer")
			var te *team.Error
			require.ErrorAs(t, err, &te)
			assert.Equal(t, c.typ, te.Type)
			assert.False(t, te.Retryable(), "a retry would repeat what the caller has seen")
			assert.Contains(t, te.Message, "after part of the answer")
			assert.Len(t, srv.Bodies(), 1)
			assert.Empty(t, clk.Waits())
		})
	}
}

// collected assembles deltas already read from a stream into a response.
func collected(t *testing.T, deltas []team.Delta) *team.ChatResponse {
	t.Helper()
	resp, err := team.Collect(func(yield func(team.Delta, error) bool) {
		for _, d := range deltas {
			if !yield(d, nil) {
				return
			}
		}
	})
	require.NoError(t, err)
	return resp
}
