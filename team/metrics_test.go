package team

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/flowteam/flowteam/trace"
)

func TestMetricsAndUsage(t *testing.T) {
	var m trace.Metrics
	u := Usage{PromptTokens: 10, CompletionTokens: 5, ReasoningTokens: 2, CachedTokens: 1, TotalTokens: 15}
	addUsage(&m, u)
	mergeMetrics(&m, trace.Metrics{Duration: time.Second, ModelCalls: 2, ToolCalls: 3, PromptTokens: 1, CompletionTokens: 1, ThinkTokens: 1, CachedTokens: 1, TotalTokens: 2})
	assert.Equal(t, trace.Metrics{Duration: time.Second, ModelCalls: 3, ToolCalls: 3, PromptTokens: 11, CompletionTokens: 6, ThinkTokens: 3, CachedTokens: 2, TotalTokens: 17}, m)
	assert.Equal(t, Usage{PromptTokens: 11, CompletionTokens: 6, ReasoningTokens: 3, CachedTokens: 2, TotalTokens: 17}, usageOf(m))
}
