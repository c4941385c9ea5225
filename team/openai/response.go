package openai

import (
	"encoding/json"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/respjson"

	"github.com/flowteam/flowteam/team"
)

// parseResponse reads a chat-completion response body as one delta: Chat and a
// stream answered in one piece both assemble it with team.Collect.
func parseResponse(data []byte) (team.Delta, *team.Error) {
	if ae := parseAPIError(data); ae != nil {
		return team.Delta{}, ae.error()
	}
	var r oai.ChatCompletion
	if err := json.Unmarshal(data, &r); err != nil {
		return team.Delta{}, &team.Error{Type: team.TypeBadResponse, Message: "response is not JSON: " + err.Error(), Err: err}
	}
	if len(r.Choices) == 0 {
		return team.Delta{}, &team.Error{Type: team.TypeBadResponse, Message: "response has no choices"}
	}
	ch, u := r.Choices[0], usage(r.Usage)
	d := team.Delta{Model: r.Model, FinishReason: ch.FinishReason, Usage: &u,
		Content: ch.Message.Content, Reasoning: reasoning(ch.Message.JSON.ExtraFields)}
	for i, tc := range ch.Message.ToolCalls {
		d.ToolCalls = append(d.ToolCalls, team.ToolCallDelta{Index: i, ID: tc.ID, Name: tc.Function.Name, Args: tc.Function.Arguments})
	}
	return d, nil
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
