package openai_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/team/openai"
)

// A model on an OpenAI-compatible server (here a fake one), streaming its answer.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"Hello"}}]}`+"\n\n")
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":", world"},"finish_reason":"stop"}]}`+"\n\n")
		io.WriteString(w, `data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`+"\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()

	model, err := openai.New("gpt-4o-mini", openai.WithBaseURL(srv.URL+"/v1"), openai.WithAPIKey("sk-..."))
	if err != nil {
		fmt.Println(err)
		return
	}
	req := &team.ChatRequest{Messages: []team.Message{team.UserMessage("Say hello.")}}
	resp, err := team.Collect(func(yield func(team.Delta, error) bool) {
		for d, err := range model.ChatStream(context.Background(), req) {
			if err == nil {
				fmt.Printf("%q\n", d.Content)
			}
			if !yield(d, err) {
				return
			}
		}
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Message.Content, "-", resp.Usage.TotalTokens, "tokens")
	// Output:
	// "Hello"
	// ", world"
	// ""
	// Hello, world - 7 tokens
}
