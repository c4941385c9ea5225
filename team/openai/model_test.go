package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/team/openai"
	"github.com/flowteam/flowteam/testkit"
	"github.com/flowteam/flowteam/trace"
)

const toolCallResponse = `{
  "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-test-2024",
  "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
    "role": "assistant", "content": null, "reasoning_content": "The user wants weather.",
    "tool_calls": [
      {"id": "call_a", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Oslo\"}"}},
      {"id": "call_b", "type": "function", "function": {"name": "search", "arguments": "not json"}}
    ]}}],
  "usage": {"prompt_tokens": 120, "completion_tokens": 40, "total_tokens": 160,
    "prompt_tokens_details": {"cached_tokens": 64}, "completion_tokens_details": {"reasoning_tokens": 25}}
}`

// A request with history, tools and options; a response with tool calls and the full
// usage, reasoning tokens and cached tokens included.
func TestChatToolCalls(t *testing.T) {
	var header string
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		header = r.Header.Get("X-Team")
		writeJSON(w, 200, toolCallResponse)
	})
	c, _ := client(t, srv.URL, openai.WithHeader("X-Team", "desk"))
	temp := 0.2
	req := &team.ChatRequest{
		Messages: []team.Message{
			team.SystemMessage("be brief"),
			team.UserMessage("weather?"),
			{Role: team.RoleAssistant, ToolCalls: []team.ToolCall{{ID: "call_0", Name: "weather", Args: json.RawMessage(`{"city":"Rome"}`)}}},
			{Role: team.RoleTool, ToolCallID: "call_0", Name: "weather", Content: `{"status":"success","result":{"tempC":20}}`},
			team.UserMessage("and Oslo?"),
		},
		Tools:   []team.ToolDef{{Name: "weather", Description: "weather of a city", Parameters: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"city": {Type: "string"}}, Required: []string{"city"}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}}},
		Options: team.ChatOptions{Temperature: &temp, MaxTokens: 256, ToolChoice: "auto", Stop: []string{"END"}, Extra: map[string]any{"seed": 7}},
	}
	resp, err := c.Chat(context.Background(), req)
	require.NoError(t, err)

	assert.Equal(t, "Bearer "+testKey, srv.Auth()[0])
	assert.Equal(t, "desk", header)
	body, _ := json.Marshal(srv.Bodies()[0])
	assert.JSONEq(t, `{
	  "model": "gpt-test", "temperature": 0.2, "max_tokens": 256, "tool_choice": "auto", "stop": ["END"], "seed": 7,
	  "messages": [
	    {"role": "system", "content": "be brief"},
	    {"role": "user", "content": "weather?"},
	    {"role": "assistant", "tool_calls": [{"id": "call_0", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Rome\"}"}}]},
	    {"role": "tool", "tool_call_id": "call_0", "content": "{\"status\":\"success\",\"result\":{\"tempC\":20}}"},
	    {"role": "user", "content": "and Oslo?"}
	  ],
	  "tools": [{"type": "function", "function": {"name": "weather", "description": "weather of a city",
	    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": false}}}]
	}`, string(body))

	assert.Equal(t, "gpt-test-2024", resp.Model)
	assert.Equal(t, "tool_calls", resp.FinishReason)
	assert.Equal(t, "The user wants weather.", resp.Message.Reasoning)
	assert.Equal(t, team.Usage{PromptTokens: 120, CompletionTokens: 40, ReasoningTokens: 25, CachedTokens: 64, TotalTokens: 160}, resp.Usage)
	require.Len(t, resp.Message.ToolCalls, 2)
	assert.Equal(t, team.ToolCall{ID: "call_a", Name: "weather", Args: json.RawMessage(`{"city":"Oslo"}`)}, resp.Message.ToolCalls[0])
	// Arguments that are not JSON are kept as a JSON string, for the schema check to refuse.
	assert.Equal(t, json.RawMessage(`"not json"`), resp.Message.ToolCalls[1].Args)
}

// A named tool choice, a tool without parameters, a model override, no key; a
// provider (DeepSeek) reporting cache hits at the top level of the usage.
func TestChatOptions(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		writeJSON(w, 200, `{"model":"m2","choices":[{"index":0,"message":{"role":"assistant","content":"ok","reasoning":"hm"},"finish_reason":"stop"}],
		  "usage":{"prompt_tokens":10,"completion_tokens":2,"prompt_cache_hit_tokens":6}}`)
	})
	c, err := openai.New("gpt-test", openai.WithBaseURL(srv.URL+"/v1"))
	require.NoError(t, err)
	resp, err := c.Chat(context.Background(), &team.ChatRequest{
		Messages: []team.Message{team.UserMessage("hi")},
		Tools:    []team.ToolDef{{Name: "now"}},
		Options:  team.ChatOptions{Model: "m2", ToolChoice: "now"},
	})
	require.NoError(t, err)
	assert.Empty(t, srv.Auth()[0])
	body, _ := json.Marshal(srv.Bodies()[0])
	assert.JSONEq(t, `{"model": "m2", "messages": [{"role": "user", "content": "hi"}],
	  "tool_choice": {"type": "function", "function": {"name": "now"}},
	  "tools": [{"type": "function", "function": {"name": "now", "parameters": {"type": "object", "properties": {}}}}]}`, string(body))
	assert.Equal(t, "hm", resp.Message.Reasoning)
	assert.Equal(t, team.Usage{PromptTokens: 10, CompletionTokens: 2, CachedTokens: 6, TotalTokens: 12}, resp.Usage)

	_, err = c.Chat(context.Background(), &team.ChatRequest{Messages: []team.Message{{Role: "narrator"}}})
	require.ErrorIs(t, err, team.ErrInvalidQuery)
	assert.Len(t, srv.Bodies(), 1, "an invalid request is not sent")
}

// SDK options pass through, but none turns the SDK's own retries back on.
func TestRequestOptions(t *testing.T) {
	var project string
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		project = r.Header.Get("OpenAI-Project")
		writeJSON(w, 500, `{}`)
	})
	c, _ := client(t, srv.URL, openai.WithRetry(flow.RetryPolicy{Max: 1}),
		openai.WithRequestOptions(option.WithProject("p1"), option.WithMaxRetries(5)))
	_, err := c.Chat(context.Background(), &team.ChatRequest{})
	require.ErrorIs(t, err, team.ErrSourceUnavailable)
	assert.Equal(t, "p1", project)
	assert.Len(t, srv.Bodies(), 1)
}

// Every error class, without retries: type, retryable, status, provider code and
// message; never the API key.
func TestErrorClasses(t *testing.T) {
	cases := []struct {
		status    int
		body      string
		typ       team.ErrorType
		retryable bool
		code      string
	}{
		{400, `{"error":{"message":"messages must not be empty","type":"invalid_request_error","code":null}}`, team.TypeInvalidQuery, false, "invalid_request_error"},
		{422, `{"error":{"message":"bad schema"}}`, team.TypeInvalidQuery, false, ""},
		{401, `{"error":{"message":"Incorrect API key provided","code":"invalid_api_key"}}`, team.TypeAuthDenied, false, "invalid_api_key"},
		{401, `{"error":{"message":"Incorrect API key provided: sk-test-secret","code":"invalid_api_key"}}`, team.TypeAuthDenied, false, "invalid_api_key"},
		{403, `{"error":{"message":"region not allowed"}}`, team.TypeAuthDenied, false, ""},
		{404, `{"error":{"message":"model gpt-x does not exist","code":"model_not_found"}}`, team.TypeNotFound, false, "model_not_found"},
		{408, ``, team.TypeTimeout, true, ""},
		{429, `{"error":{"message":"Rate limit reached","code":"rate_limit_exceeded"}}`, team.TypeRateLimited, true, "rate_limit_exceeded"},
		{429, `{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}`, team.TypeRateLimited, false, "insufficient_quota"},
		{500, `{"error":{"message":"internal"}}`, team.TypeSourceUnavailable, true, ""},
		{502, `<html>bad gateway</html>`, team.TypeSourceUnavailable, true, ""},
		{503, `{"error":{"message":"overloaded","code":503}}`, team.TypeSourceUnavailable, true, "503"},
		{504, ``, team.TypeTimeout, true, ""},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d %s", c.status, c.code), func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { writeJSON(w, c.status, c.body) })
			cl, clk := client(t, srv.URL, openai.WithRetry(flow.RetryPolicy{Max: 1}))
			_, err := cl.Chat(context.Background(), &team.ChatRequest{Messages: []team.Message{team.UserMessage("x")}})
			var te *team.Error
			require.ErrorAs(t, err, &te)
			assert.Equal(t, c.typ, te.Type)
			assert.Equal(t, c.retryable, te.Retryable())
			assert.Equal(t, c.status, te.Status)
			assert.Equal(t, c.code, te.Code)
			assert.Equal(t, 1, te.Attempts)
			assert.NotEmpty(t, te.Message)
			assert.NotContains(t, err.Error(), testKey)
			assert.Empty(t, clk.Waits())
			assert.Len(t, srv.Bodies(), 1, "the SDK does not retry on its own")
		})
	}
}

func TestTransportErrors(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		release := make(chan struct{})
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		})
		defer close(release)
		c, clk := client(t, srv.URL, openai.WithTimeout(20*time.Millisecond))
		_, err := c.Chat(context.Background(), &team.ChatRequest{})
		require.ErrorIs(t, err, team.ErrTimeout)
		var te *team.Error
		require.ErrorAs(t, err, &te)
		assert.True(t, te.Retryable())
		assert.Equal(t, 3, te.Attempts)
		assert.Equal(t, []time.Duration{time.Second, 2 * time.Second}, clk.Waits())
	})
	t.Run("connection refused", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		c, _ := client(t, url, openai.WithRetry(flow.RetryPolicy{Max: 1}))
		_, err := c.Chat(context.Background(), &team.ChatRequest{})
		require.ErrorIs(t, err, team.ErrSourceUnavailable)
		assert.True(t, team.AsError(err, "").Retryable())
	})
	t.Run("cancelled", func(t *testing.T) {
		srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { writeJSON(w, 200, toolCallResponse) })
		c, _ := client(t, srv.URL)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := c.Chat(ctx, &team.ChatRequest{})
		require.ErrorIs(t, err, team.ErrCancelled)
		assert.False(t, team.AsError(err, "").Retryable())
	})
	t.Run("cancelled with a cause", func(t *testing.T) {
		srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { writeJSON(w, 200, toolCallResponse) })
		c, _ := client(t, srv.URL)
		ctx, cancel := context.WithCancelCause(context.Background())
		shutdown := errors.New("shutting down")
		cancel(shutdown)
		_, err := c.Chat(ctx, &team.ChatRequest{})
		require.ErrorIs(t, err, team.ErrCancelled)
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorIs(t, err, shutdown)
	})
	t.Run("bad response", func(t *testing.T) {
		for _, body := range []string{`{"choices":[]}`, `{nope`} {
			srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { writeJSON(w, 200, body) })
			c, _ := client(t, srv.URL)
			_, err := c.Chat(context.Background(), &team.ChatRequest{})
			assert.Equal(t, team.TypeBadResponse, team.AsError(err, "").Type, body)
		}
	})
	t.Run("wrong path", func(t *testing.T) {
		srv := newServer(t, nil)
		c, err := openai.New("m", openai.WithBaseURL(srv.URL+"/v2"), openai.WithRetry(flow.RetryPolicy{Max: 1}))
		require.NoError(t, err)
		_, err = c.Chat(context.Background(), &team.ChatRequest{})
		require.ErrorIs(t, err, team.ErrNotFound)
	})
	_, err := openai.New("")
	assert.Error(t, err)
	_, err = openai.New("m", openai.WithBaseURL(""))
	assert.Error(t, err)
}

// Retries: Retry-After (seconds, or a date taken against the response's Date)
// replaces the backoff; a wait longer than allowed is not taken; retries are
// bounded; non-retryable errors are not retried.
func TestRetry(t *testing.T) {
	ok := `{"choices":[{"index":0,"message":{"role":"assistant","content":"fine"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
	now := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name     string
		failures []func(w http.ResponseWriter)
		max      int
		waits    []time.Duration
		err      *team.Error // nil: success
	}{
		{
			name: "retry-after seconds",
			failures: []func(w http.ResponseWriter){
				func(w http.ResponseWriter) { w.Header().Set("Retry-After", "7"); writeJSON(w, 429, `{}`) },
				func(w http.ResponseWriter) { w.Header().Set("Retry-After", "1.5"); writeJSON(w, 429, `{}`) },
			},
			waits: []time.Duration{7 * time.Second, 1500 * time.Millisecond},
		},
		{
			name: "retry-after date",
			failures: []func(w http.ResponseWriter){
				func(w http.ResponseWriter) {
					w.Header().Set("Date", now.Format(http.TimeFormat))
					w.Header().Set("Retry-After", now.Add(30*time.Second).Format(http.TimeFormat))
					writeJSON(w, 503, `{}`)
				},
			},
			waits: []time.Duration{30 * time.Second},
		},
		{
			name: "exponential backoff",
			failures: []func(w http.ResponseWriter){
				func(w http.ResponseWriter) { writeJSON(w, 500, `{}`) },
				func(w http.ResponseWriter) { writeJSON(w, 502, `{}`) },
				func(w http.ResponseWriter) { writeJSON(w, 503, `{}`) },
			},
			max:   4,
			waits: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second},
		},
		{
			name: "bounded",
			failures: []func(w http.ResponseWriter){
				func(w http.ResponseWriter) { writeJSON(w, 500, `{}`) },
				func(w http.ResponseWriter) { writeJSON(w, 500, `{}`) },
				func(w http.ResponseWriter) { writeJSON(w, 500, `{"error":{"message":"still down"}}`) },
			},
			waits: []time.Duration{time.Second, 2 * time.Second},
			err:   &team.Error{Type: team.TypeSourceUnavailable, Retry: true, Status: 500, Attempts: 3, Message: "still down"},
		},
		{
			name: "retry-after too long",
			failures: []func(w http.ResponseWriter){
				func(w http.ResponseWriter) {
					w.Header().Set("Retry-After", "3600")
					writeJSON(w, 429, `{"error":{"message":"later"}}`)
				},
			},
			err: &team.Error{Type: team.TypeRateLimited, Retry: true, Status: 429, Attempts: 1, RetryAfter: time.Hour, Message: "later"},
		},
		{
			name: "not retryable",
			failures: []func(w http.ResponseWriter){
				func(w http.ResponseWriter) { writeJSON(w, 403, `{"error":{"message":"no"}}`) },
			},
			err: &team.Error{Type: team.TypeAuthDenied, Status: 403, Attempts: 1, Message: "no"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, n int) {
				if n <= len(c.failures) {
					c.failures[n-1](w)
					return
				}
				writeJSON(w, 200, ok)
			})
			p := testRetry
			if c.max > 0 {
				p.Max = c.max
			}
			cl, clk := client(t, srv.URL, openai.WithRetry(p))
			cnt := &counter{}
			resp, err := cl.Chat(trace.WithCounterSink(context.Background(), cnt), &team.ChatRequest{})
			assert.Equal(t, c.waits, clk.Waits())
			assert.Equal(t, len(c.waits), cnt.Get(trace.CountRetry), "retries are counted")
			if c.err == nil {
				require.NoError(t, err)
				assert.Equal(t, "fine", resp.Message.Content)
				assert.Len(t, srv.Bodies(), len(c.failures)+1)
				return
			}
			var te *team.Error
			require.ErrorAs(t, err, &te)
			assert.Equal(t, c.err, te)
			assert.Len(t, srv.Bodies(), te.Attempts, "one request an attempt: the SDK does not retry on its own")
		})
	}
}

// A Retry-After too large for a time.Duration is a wait longer than allowed: the
// rate limit is returned at once, not retried at once as if no wait had been asked.
func TestRetryAfterHuge(t *testing.T) {
	for _, v := range []string{"1e10", "99999999999999999999"} {
		srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
			w.Header().Set("Retry-After", v)
			writeJSON(w, 429, `{"error":{"message":"slow down"}}`)
		})
		c, clk := client(t, srv.URL)
		_, err := c.Chat(context.Background(), &team.ChatRequest{})
		var te *team.Error
		require.ErrorAs(t, err, &te, v)
		assert.Equal(t, team.TypeRateLimited, te.Type, v)
		assert.Equal(t, 1, te.Attempts, v)
		assert.Greater(t, te.RetryAfter, time.Hour, v)
		assert.Empty(t, clk.Waits(), v)
	}
}

// A context that ends while the client waits to retry ends the call at once.
func TestRetryWaitCancelled(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { writeJSON(w, 500, `{}`) })
	ctx, cancel := context.WithCancel(context.Background())
	c, err := openai.New("m", openai.WithBaseURL(srv.URL+"/v1"), openai.WithClock(cancelClock(cancel)))
	require.NoError(t, err)
	_, err = c.Chat(ctx, &team.ChatRequest{})
	require.ErrorIs(t, err, team.ErrCancelled)
	assert.Len(t, srv.Bodies(), 1)
}

// A cancellation with a cause keeps the context's error in the chain (flow tells a
// call cut short from a failed one by it) and says the cause.
func TestRetryWaitCancelledWithCause(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { writeJSON(w, 500, `{}`) })
	ctx, cancel := context.WithCancelCause(context.Background())
	shutdown := errors.New("shutting down")
	c, err := openai.New("m", openai.WithBaseURL(srv.URL+"/v1"),
		openai.WithClock(cancelClock(func() { cancel(shutdown) })))
	require.NoError(t, err)
	_, err = c.Chat(ctx, &team.ChatRequest{})
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, shutdown)
	assert.Contains(t, err.Error(), "shutting down")
}

// cancelClock cancels the call when asked to wait, and never fires.
type cancelClock context.CancelFunc

func (c cancelClock) After(time.Duration) <-chan time.Time {
	c()
	return nil
}

// An error object in a 200 response is the provider failing the request, like a 5xx
// without the status: retried, and classified by its code where it has one.
func TestErrorInOKResponse(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, n int) {
		if n == 1 {
			writeJSON(w, 200, `{"error":{"message":"internal","type":"server_error"}}`)
			return
		}
		writeJSON(w, 200, toolCallResponse)
	})
	c, clk := client(t, srv.URL)
	_, err := c.Chat(context.Background(), &team.ChatRequest{})
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{time.Second}, clk.Waits())

	bad := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		writeJSON(w, 200, `{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}`)
	})
	c, clk = client(t, bad.URL)
	_, err = c.Chat(context.Background(), &team.ChatRequest{})
	var te *team.Error
	require.ErrorAs(t, err, &te)
	assert.Equal(t, team.TypeInvalidQuery, te.Type)
	assert.Equal(t, "context_length_exceeded", te.Code)
	assert.Empty(t, clk.Waits(), "a request the provider calls invalid is not retried")
}

type cityArgs struct {
	City string `json:"city" jsonschema:"city name"`
}

type weather struct {
	City  string `json:"city"`
	TempC int    `json:"tempC"`
}

// A ReAct agent over the model: the tool call's id and result go back to the
// provider in its own format.
func TestReActOverModel(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, n int) {
		if n == 1 {
			writeJSON(w, 200, `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_9","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Oslo\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`)
			return
		}
		writeJSON(w, 200, `{"choices":[{"index":0,"message":{"role":"assistant","content":"4 degrees"},"finish_reason":"stop"}],"usage":{"prompt_tokens":30,"completion_tokens":2,"total_tokens":32,"prompt_tokens_details":{"cached_tokens":10}}}`)
	})
	c, _ := client(t, srv.URL)
	tool := team.NewTool("weather", "Current weather of a city",
		nil,
		func(_ context.Context, a cityArgs) (weather, error) { return weather{City: a.City, TempC: 21}, nil })
	agent, err := team.NewReActAgent("weatherman", c, team.WithTools(tool))
	require.NoError(t, err)
	evs, err := testkit.Events(context.Background(), agent, "Oslo?", nil)
	require.NoError(t, err)
	ans := evs[len(evs)-1].Answer
	assert.Equal(t, "4 degrees", ans.Content)
	assert.Equal(t, int64(47), ans.Metrics.TotalTokens)
	assert.Equal(t, int64(10), ans.Metrics.CachedTokens)

	msgs := srv.Bodies()[1]["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	assert.Equal(t, "tool", last["role"])
	assert.Equal(t, "call_9", last["tool_call_id"])
	assert.JSONEq(t, `{"status":"success","result":{"city":"Oslo","tempC":21}}`, last["content"].(string))
	assert.Equal(t, "Bearer "+testKey, srv.Auth()[1])
}
