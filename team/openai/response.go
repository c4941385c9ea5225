package openai

import (
	"encoding/json"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/respjson"

	"github.com/flowteam/flowteam/team"
)

// parseResponse reads a chat-completion response body.
func parseResponse(data []byte) (*team.ChatResponse, *team.Error) {
	if ae := parseAPIError(data); ae != nil {
		return nil, ae.error()
	}
	var r oai.ChatCompletion
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, &team.Error{Type: team.TypeBadResponse, Message: "response is not JSON: " + err.Error(), Err: err}
	}
	if len(r.Choices) == 0 {
		return nil, &team.Error{Type: team.TypeBadResponse, Message: "response has no choices"}
	}
	ch := r.Choices[0]
	msg := ch.Message
	out := &team.ChatResponse{Model: r.Model, FinishReason: ch.FinishReason, Usage: usage(r.Usage),
		Message: team.Message{Role: team.RoleAssistant, Content: msg.Content, Reasoning: reasoning(msg.JSON.ExtraFields)}}
	for _, tc := range msg.ToolCalls {
		out.Message.ToolCalls = append(out.Message.ToolCalls,
			team.ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: rawArgs([]byte(tc.Function.Arguments))})
	}
	return out, nil
}

// usage converts the token accounting. Some providers (DeepSeek) report cache hits
// at the top level, as prompt_cache_hit_tokens.
func usage(u oai.CompletionUsage) team.Usage {
	out := team.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens,
		ReasoningTokens: u.CompletionTokensDetails.ReasoningTokens, CachedTokens: u.PromptTokensDetails.CachedTokens}
	if out.CachedTokens == 0 {
		if f, ok := u.JSON.ExtraFields["prompt_cache_hit_tokens"]; ok {
			_ = json.Unmarshal([]byte(f.Raw()), &out.CachedTokens)
		}
	}
	if out.TotalTokens == 0 {
		out.TotalTokens = out.PromptTokens + out.CompletionTokens
	}
	return out
}

// reasoning returns a thinking model's reasoning text, which the chat-completions
// schema does not name: reasoning_content (DeepSeek, vLLM) or reasoning (Ollama,
// OpenRouter).
func reasoning(extra map[string]respjson.Field) string {
	for _, name := range []string{"reasoning_content", "reasoning"} {
		var s string
		if f, ok := extra[name]; ok && json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// rawArgs turns a model's argument text into a RawMessage that is always valid JSON:
// text that does not parse is kept as a JSON string, so it reaches the tool's schema
// check (and fails there, visibly) instead of breaking every encoder downstream.
func rawArgs(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	if json.Valid(b) {
		return json.RawMessage(b)
	}
	s, _ := json.Marshal(string(b))
	return json.RawMessage(s)
}
