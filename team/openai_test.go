package team_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/trace"
)

const testKey = "sk-test-secret"

// fakeSleeper records the waits instead of sleeping.
type fakeSleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (f *fakeSleeper) Sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	f.waits = append(f.waits, d)
	f.mu.Unlock()
	return ctx.Err()
}

func (f *fakeSleeper) Waits() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.waits...)
}

// server is an httptest server whose handler is given per test; it records the
// request bodies.
type server struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
	auth   []string
}

func newServer(t *testing.T, h func(w http.ResponseWriter, r *http.Request, n int)) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(data, &body)
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		n := len(s.bodies)
		s.mu.Unlock()
		h(w, r, n)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) Bodies() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bodies
}

func client(t *testing.T, url string, mod func(*team.OpenAIConfig)) (*team.OpenAI, *fakeSleeper) {
	t.Helper()
	sl := &fakeSleeper{}
	cfg := team.OpenAIConfig{BaseURL: url + "/v1/", APIKey: testKey, Model: "gpt-test", Sleep: sl.Sleep,
		Retry: team.RetryPolicy{MaxAttempts: 3, Backoff: time.Second, MaxBackoff: 10 * time.Second}}
	if mod != nil {
		mod(&cfg)
	}
	c, err := team.NewOpenAI(cfg)
	require.NoError(t, err)
	return c, sl
}

func writeJSON(w http.ResponseWriter, status int, v string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, v)
}

const toolCallResponse = `{
  "id": "chatcmpl-1", "model": "gpt-test-2024",
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
func TestOpenAIChatToolCalls(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { writeJSON(w, 200, toolCallResponse) })
	c, _ := client(t, srv.URL, nil)
	temp := 0.2
	req := &team.ChatRequest{
		Messages: []team.Message{
			team.SystemMessage("be brief"),
			team.UserMessage("weather?"),
			{Role: team.RoleAssistant, ToolCalls: []team.ToolCall{{ID: "call_0", Name: "weather", Args: json.RawMessage(`{"city":"Rome"}`)}}},
			{Role: team.RoleTool, ToolCallID: "call_0", Name: "weather", Content: `{"status":"success","result":{"tempC":20}}`},
			team.UserMessage("and Oslo?"),
		},
		Tools:   []team.ToolDef{{Name: "weather", Description: "weather of a city", Parameters: team.Object(map[string]*team.Schema{"city": team.String("")})}},
		Options: team.ChatOptions{Temperature: &temp, MaxTokens: 256, ToolChoice: "auto", Extra: map[string]any{"seed": 7}},
	}
	resp, err := c.Chat(context.Background(), req)
	require.NoError(t, err)

	assert.Equal(t, "Bearer "+testKey, srv.auth[0])
	body, _ := json.Marshal(srv.Bodies()[0])
	assert.JSONEq(t, `{
	  "model": "gpt-test", "temperature": 0.2, "max_tokens": 256, "tool_choice": "auto", "seed": 7,
	  "messages": [
	    {"role": "system", "content": "be brief"},
	    {"role": "user", "content": "weather?"},
	    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_0", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Rome\"}"}}]},
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

// sse writes server-sent events, flushing each.
func sse(w http.ResponseWriter, lines ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	for _, l := range lines {
		_, _ = io.WriteString(w, l)
		w.(http.Flusher).Flush()
	}
}

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

// Streaming: content, reasoning and tool calls arrive in fragments and assemble; the
// usage comes last; a rate limit before the stream is retried like any request.
func TestOpenAIStream(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, n int) {
		if n == 1 {
			w.Header().Set("Retry-After", "2")
			writeJSON(w, 429, `{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`)
			return
		}
		sse(w, streamLines...)
	})
	c, sl := client(t, srv.URL, nil)
	var deltas []team.Delta
	var acc team.Accumulator
	for d, err := range c.ChatStream(context.Background(), &team.ChatRequest{Messages: []team.Message{team.UserMessage("hi")}}) {
		require.NoError(t, err)
		deltas = append(deltas, d)
		acc.Add(d)
	}
	assert.Equal(t, []time.Duration{2 * time.Second}, sl.Waits())
	body := srv.Bodies()[1]
	assert.Equal(t, true, body["stream"])
	assert.Equal(t, map[string]any{"include_usage": true}, body["stream_options"])

	assert.Equal(t, "Thinking.", deltas[0].Reasoning)
	assert.Equal(t, "Hel", deltas[1].Content)
	resp := acc.Response()
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
func TestOpenAIStreamToolCallsWithoutDistinctIndex(t *testing.T) {
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
			c, _ := client(t, srv.URL, nil)
			resp, err := team.Collect(c.ChatStream(context.Background(), &team.ChatRequest{Messages: []team.Message{team.UserMessage("hi")}}))
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
func TestOpenAIStreamFirstChoiceOnly(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		sse(w,
			`data: {"choices":[{"index":0,"delta":{"content":"Hel"}},{"index":1,"delta":{"content":"Bon"}}]}`+"\n\n",
			`data: {"choices":[{"index":1,"delta":{"content":"jour"}}]}`+"\n\n",
			`data: {"choices":[{"index":0,"delta":{"content":"lo"}}]}`+"\n\n",
			`data: {"choices":[{"index":1,"delta":{"tool_calls":[{"index":0,"id":"c9","function":{"name":"search","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`+"\n\n",
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n",
			"data: [DONE]\n\n")
	})
	c, _ := client(t, srv.URL, nil)
	req := &team.ChatRequest{Messages: []team.Message{team.UserMessage("hi")}, Options: team.ChatOptions{Extra: map[string]any{"n": 2}}}
	resp, err := team.Collect(c.ChatStream(context.Background(), req))
	require.NoError(t, err)
	assert.Equal(t, "Hello", resp.Message.Content)
	assert.Empty(t, resp.Message.ToolCalls)
	assert.Equal(t, "stop", resp.FinishReason)
}

func TestOpenAIStreamFailures(t *testing.T) {
	t.Run("error event", func(t *testing.T) {
		srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
			sse(w, streamLines[1], `data: {"error":{"message":"model overloaded"}}`+"\n\n")
		})
		c, _ := client(t, srv.URL, nil)
		_, err := team.Collect(c.ChatStream(context.Background(), &team.ChatRequest{}))
		require.ErrorIs(t, err, team.ErrSourceUnavailable)
		assert.ErrorContains(t, err, "model overloaded")
	})
	t.Run("cut short", func(t *testing.T) {
		srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { sse(w, streamLines[:4]...) })
		c, _ := client(t, srv.URL, nil)
		_, err := team.Collect(c.ChatStream(context.Background(), &team.ChatRequest{}))
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
			c, _ := client(t, srv.URL, nil)
			_, err := team.Collect(c.ChatStream(context.Background(), &team.ChatRequest{}))
			var te *team.Error
			require.ErrorAs(t, err, &te, name)
			assert.Equal(t, team.TypeBadResponse, te.Type, name)
		}
	})
	t.Run("bad event", func(t *testing.T) {
		srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { sse(w, "data: {nope\n\n") })
		c, _ := client(t, srv.URL, nil)
		_, err := team.Collect(c.ChatStream(context.Background(), &team.ChatRequest{}))
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
		c, _ := client(t, srv.URL, nil)
		n := 0
		for _, err := range c.ChatStream(context.Background(), &team.ChatRequest{}) {
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
		c, sl := client(t, srv.URL, nil)
		_, err := team.Collect(c.ChatStream(context.Background(), &team.ChatRequest{}))
		require.ErrorIs(t, err, team.ErrAuthDenied)
		assert.Empty(t, sl.Waits())
	})
}

// Every error class, without retries: type, retryable, status, provider code and
// message; never the API key.
func TestOpenAIErrorClasses(t *testing.T) {
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
			cl, sl := client(t, srv.URL, func(cfg *team.OpenAIConfig) { cfg.Retry = team.NoRetry })
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
			assert.Empty(t, sl.Waits())
		})
	}
}

func TestOpenAITransportErrors(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		release := make(chan struct{})
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		})
		defer close(release)
		c, sl := client(t, srv.URL, func(cfg *team.OpenAIConfig) { cfg.Timeout = 20 * time.Millisecond })
		_, err := c.Chat(context.Background(), &team.ChatRequest{})
		require.ErrorIs(t, err, team.ErrTimeout)
		var te *team.Error
		require.ErrorAs(t, err, &te)
		assert.True(t, te.Retryable())
		assert.Equal(t, 3, te.Attempts)
		assert.Equal(t, []time.Duration{time.Second, 2 * time.Second}, sl.Waits())
	})
	t.Run("connection refused", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		c, _ := client(t, url, func(cfg *team.OpenAIConfig) { cfg.Retry = team.NoRetry })
		_, err := c.Chat(context.Background(), &team.ChatRequest{})
		require.ErrorIs(t, err, team.ErrSourceUnavailable)
		assert.True(t, team.AsError(err, "").Retryable())
	})
	t.Run("cancelled", func(t *testing.T) {
		srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { writeJSON(w, 200, toolCallResponse) })
		c, _ := client(t, srv.URL, nil)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := c.Chat(ctx, &team.ChatRequest{})
		require.ErrorIs(t, err, team.ErrCancelled)
		assert.False(t, team.AsError(err, "").Retryable())
	})
	t.Run("bad response", func(t *testing.T) {
		srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { writeJSON(w, 200, `{"choices":[]}`) })
		c, _ := client(t, srv.URL, nil)
		_, err := c.Chat(context.Background(), &team.ChatRequest{})
		assert.Equal(t, team.TypeBadResponse, team.AsError(err, "").Type)
	})
	t.Run("wrong path", func(t *testing.T) {
		srv := newServer(t, nil)
		c, err := team.NewOpenAI(team.OpenAIConfig{BaseURL: srv.URL + "/v2", Model: "m", Retry: team.NoRetry})
		require.NoError(t, err)
		_, err = c.Chat(context.Background(), &team.ChatRequest{})
		require.ErrorIs(t, err, team.ErrNotFound)
	})
	_, err := team.NewOpenAI(team.OpenAIConfig{Model: "m"})
	assert.Error(t, err)
	_, err = team.NewOpenAI(team.OpenAIConfig{BaseURL: "http://x"})
	assert.Error(t, err)
}

// Retries: Retry-After (seconds or a date) replaces the backoff; a wait longer than
// allowed is not taken; retries are bounded; non-retryable errors are not retried.
func TestOpenAIRetry(t *testing.T) {
	ok := `{"choices":[{"message":{"content":"fine"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
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
			cl, sl := client(t, srv.URL, func(cfg *team.OpenAIConfig) {
				cfg.Now = func() time.Time { return now }
				if c.max > 0 {
					cfg.Retry.MaxAttempts = c.max
				}
			})
			cnt := &counter{}
			resp, err := cl.Chat(trace.WithCounterSink(context.Background(), cnt), &team.ChatRequest{})
			assert.Equal(t, c.waits, sl.Waits())
			assert.Equal(t, len(c.waits), cnt.n[trace.CountRetry], "retries are counted")
			if c.err == nil {
				require.NoError(t, err)
				assert.Equal(t, "fine", resp.Message.Content)
				assert.Len(t, srv.Bodies(), len(c.failures)+1)
				return
			}
			var te *team.Error
			require.ErrorAs(t, err, &te)
			assert.Equal(t, c.err, te)
		})
	}
}

// A Retry-After too large for a time.Duration is a wait longer than allowed: the
// rate limit is returned at once, not retried at once as if no wait had been asked.
func TestOpenAIRetryAfterHuge(t *testing.T) {
	for _, v := range []string{"1e10", "99999999999999999999"} {
		srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
			w.Header().Set("Retry-After", v)
			writeJSON(w, 429, `{"error":{"message":"slow down"}}`)
		})
		c, sl := client(t, srv.URL, nil)
		_, err := c.Chat(context.Background(), &team.ChatRequest{})
		var te *team.Error
		require.ErrorAs(t, err, &te, v)
		assert.Equal(t, team.TypeRateLimited, te.Type, v)
		assert.Equal(t, 1, te.Attempts, v)
		assert.Greater(t, te.RetryAfter, time.Hour, v)
		assert.Empty(t, sl.Waits(), v)
	}
}

// A ReAct agent over the OpenAI-compatible client: the tool call's id and result go
// back to the provider in its own format.
func TestReActOverOpenAI(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, n int) {
		if n == 1 {
			writeJSON(w, 200, `{"choices":[{"message":{"content":null,"tool_calls":[{"id":"call_9","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Oslo\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`)
			return
		}
		writeJSON(w, 200, `{"choices":[{"message":{"content":"4 degrees"},"finish_reason":"stop"}],"usage":{"prompt_tokens":30,"completion_tokens":2,"total_tokens":32,"prompt_tokens_details":{"cached_tokens":10}}}`)
	})
	c, _ := client(t, srv.URL, nil)
	box := &toolbox{}
	agent, err := team.NewReActAgent("weatherman", c, team.WithTools(box.weather()))
	require.NoError(t, err)
	evs, err := team.Events(context.Background(), agent, "Oslo?", nil)
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
	assert.True(t, strings.HasPrefix(srv.auth[1], "Bearer "))
}

// A stream that fails before the caller has seen any of the answer (an error event, a
// connection lost, a stream that ends early) is retried like a failed request; once
// the caller has seen part of it, the failure ends the stream, with the type of its
// cause and not retryable: a retry would repeat what the caller already has.
func TestOpenAIStreamFailureRetryBeforeFirstToken(t *testing.T) {
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
			c, sl := client(t, srv.URL, nil)
			resp, err := team.Collect(c.ChatStream(context.Background(), &team.ChatRequest{}))
			require.NoError(t, err)
			assert.Equal(t, "Hello", resp.Message.Content)
			assert.Len(t, srv.Bodies(), 2)
			assert.Equal(t, []time.Duration{time.Second}, sl.Waits())
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
			cl, sl := client(t, srv.URL, nil)
			seen := 0
			var err error
			for d, e := range cl.ChatStream(context.Background(), &team.ChatRequest{}) {
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
			assert.Empty(t, sl.Waits())
		})
	}
}

// An error object in a 200 response is the provider failing the request, like a 5xx
// without the status: retried, and classified by its code where it has one.
func TestOpenAIErrorInOKResponse(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, n int) {
		if n == 1 {
			writeJSON(w, 200, `{"error":{"message":"internal","type":"server_error"}}`)
			return
		}
		writeJSON(w, 200, toolCallResponse)
	})
	c, sl := client(t, srv.URL, nil)
	_, err := c.Chat(context.Background(), &team.ChatRequest{})
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{time.Second}, sl.Waits())

	bad := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		writeJSON(w, 200, `{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}`)
	})
	c, sl = client(t, bad.URL, nil)
	_, err = c.Chat(context.Background(), &team.ChatRequest{})
	var te *team.Error
	require.ErrorAs(t, err, &te)
	assert.Equal(t, team.TypeInvalidQuery, te.Type)
	assert.Equal(t, "context_length_exceeded", te.Code)
	assert.Empty(t, sl.Waits(), "a request the provider calls invalid is not retried")
}
