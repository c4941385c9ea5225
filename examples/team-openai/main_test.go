package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// With the environment set (never in CI), the example runs against the real API.
func TestLiveAPI(t *testing.T) {
	cfg, err := ConfigFromEnv(os.Getenv)
	if err != nil {
		t.Skipf("no API configured: %v", err)
	}
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, cfg, DefaultPrompt))
	t.Log(out.String())
	assert.Contains(t, out.String(), "answer: ")
}

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{}
	_, err := ConfigFromEnv(func(k string) string { return env[k] })
	require.Error(t, err)
	assert.Contains(t, err.Error(), EnvBaseURL+" and "+EnvModel)
	env[EnvBaseURL], env[EnvModel] = "http://localhost:11434/v1", "llama3.1"
	cfg, err := ConfigFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	assert.Equal(t, Config{BaseURL: "http://localhost:11434/v1", Model: "llama3.1"}, cfg)
}

// fakeAPI is an OpenAI-compatible server that plays the desk: it answers each agent
// from what its request holds (the supervisor's route tool, the researcher's lookup
// tool, the writer's and reviewer's instructions), streaming when asked to.
type fakeAPI struct {
	mu       sync.Mutex
	requests int
	auth     []string
}

type fakeMsg struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type fakeReq struct {
	Model    string    `json:"model"`
	Messages []fakeMsg `json:"messages"`
	Tools    []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	Stream bool `json:"stream"`
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	var req fakeReq
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.requests++
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	tool := ""
	if len(req.Tools) > 0 {
		tool = req.Tools[0].Function.Name
	}
	last := req.Messages[len(req.Messages)-1]
	var content, callName, callArgs string
	switch {
	case tool == "route":
		switch work := last.Content; {
		case !strings.Contains(work, "[researcher]"):
			callName, callArgs = "route", `{"to":"researcher","task":"find the market size"}`
		case !strings.Contains(work, "[writer]"):
			callName, callArgs = "route", `{"to":"writer","task":"write the brief"}`
		case !strings.Contains(work, "[reviewer]"):
			content = "reviewer"
		default:
			content = "FINISH"
		}
	case tool == "lookup" && last.Role == "tool":
		content = "The market is about 20bn EUR, +9% a year."
	case tool == "lookup":
		callName, callArgs = "lookup", `{"topic":"e-bike market"}`
	case strings.Contains(req.Messages[0].Content, "You are a writer"):
		content = "E-bikes: a 20bn EUR market growing 9% a year."
	default:
		content = "APPROVED"
	}
	usage := map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
		"completion_tokens_details": map[string]any{"reasoning_tokens": 2}}
	msg := map[string]any{"role": "assistant", "content": content}
	finish := "stop"
	if callName != "" {
		msg["tool_calls"] = []map[string]any{{"index": 0, "id": fmt.Sprintf("call_%d", f.requests), "type": "function",
			"function": map[string]string{"name": callName, "arguments": callArgs}}}
		finish = "tool_calls"
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "usage": usage,
			"choices": []map[string]any{{"message": msg, "finish_reason": finish}}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	chunk(map[string]any{"model": req.Model, "choices": []map[string]any{{"delta": msg}}})
	chunk(map[string]any{"model": req.Model, "choices": []map[string]any{{"delta": map[string]any{}, "finish_reason": finish}}})
	chunk(map[string]any{"model": req.Model, "choices": []any{}, "usage": usage})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// The example runs the desk over HTTP against a fake API: the requests, the streaming,
// the tool calls and the key all go through the real client.
func TestRunAgainstFakeAPI(t *testing.T) {
	api := &fakeAPI{}
	srv := httptest.NewServer(api)
	defer srv.Close()
	var out bytes.Buffer
	err := run(context.Background(), &out, Config{BaseURL: srv.URL + "/v1", APIKey: "sk-test", Model: "fake"}, DefaultPrompt)
	require.NoError(t, err)
	got := out.String()
	t.Log(got)
	assert.Contains(t, got, "→ researcher find the market size\n")
	assert.Contains(t, got, `· lookup {"topic":"e-bike market"} → success`)
	assert.Contains(t, got, "  [writer] E-bikes: a 20bn EUR market growing 9% a year.\n")
	assert.Contains(t, got, "→ finish (finish_marker)\n")
	assert.Contains(t, got, "answer: E-bikes: a 20bn EUR market growing 9% a year.\nroute: researcher → writer → reviewer\n")
	assert.Contains(t, got, "tokens: 120 (think 16), model calls 8\n")
	assert.Equal(t, 8, api.requests)
	for _, a := range api.auth {
		assert.Equal(t, "Bearer sk-test", a)
	}
}
