package team_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/team"
)

// toolbox holds tools that record their calls.
type toolbox struct {
	mu    sync.Mutex
	calls []string // "name:args"
}

func (b *toolbox) record(name string, args any) {
	data, _ := json.Marshal(args)
	b.mu.Lock()
	b.calls = append(b.calls, name+":"+string(data))
	b.mu.Unlock()
}

func (b *toolbox) Calls() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.calls...)
}

type cityArgs struct {
	City string `json:"city" jsonschema:"city name"`
}

type weather struct {
	City  string `json:"city"`
	TempC int    `json:"tempC"`
}

func (b *toolbox) weather() team.Tool {
	return team.NewTool("weather", "Current weather of a city",
		nil,
		func(_ context.Context, a cityArgs) (weather, error) {
			b.record("weather", a)
			return weather{City: a.City, TempC: 21}, nil
		})
}

type queryArgs struct {
	Query string `json:"query" jsonschema:"what to look for"`
}

// search finds nothing: an empty list is a valid success.
func (b *toolbox) search() team.Tool {
	return team.NewTool("search", "Search the archive",
		nil,
		func(_ context.Context, a queryArgs) ([]string, error) {
			b.record("search", a)
			return []string{}, nil
		})
}

type transferArgs struct {
	To     string `json:"to" jsonschema:"account"`
	Amount int    `json:"amount" jsonschema:"amount in EUR"`
}

// transfer is sensitive above 1000.
func (b *toolbox) transfer() team.Tool {
	t := team.NewTool("transfer", "Transfer money",
		nil,
		func(_ context.Context, a transferArgs) (map[string]any, error) {
			b.record("transfer", a)
			return map[string]any{"ok": true, "amount": a.Amount}, nil
		})
	t.Sensitive = func(raw json.RawMessage) (bool, string) {
		var a transferArgs
		_ = json.Unmarshal(raw, &a)
		return a.Amount > 1000, "transfers above 1000 EUR need approval"
	}
	return t
}

type pathArgs struct {
	Path string `json:"path" jsonschema:"file path"`
}

// remove always needs a decision.
func (b *toolbox) remove() team.Tool {
	t := team.NewTool("remove", "Delete a file",
		nil,
		func(_ context.Context, a pathArgs) (any, error) {
			b.record("remove", a)
			return nil, nil
		})
	t.Sensitive = team.Always("deleting files needs approval")
	return t
}

// failing tools: a typed, retryable error; an untyped error; a panic.
func (b *toolbox) flaky() team.Tool {
	return team.NewTool("flaky", "Sometimes rate limited", nil, func(_ context.Context, _ struct{}) (any, error) {
		b.record("flaky", nil)
		return nil, &team.Error{Type: team.TypeRateLimited, Retry: true, Message: "quota of 10/min used"}
	})
}

func (b *toolbox) broken() team.Tool {
	return team.NewTool("broken", "Always fails", nil, func(_ context.Context, _ struct{}) (any, error) {
		b.record("broken", nil)
		return nil, errors.New("disk on fire")
	})
}

func (b *toolbox) panicky() team.Tool {
	return team.NewTool("panicky", "Panics", nil, func(_ context.Context, _ struct{}) (any, error) {
		b.record("panicky", nil)
		panic("nil map")
	})
}

// observation parses a tool message.
func observation(t *testing.T, m team.Message) team.Observation {
	t.Helper()
	require.Equal(t, team.RoleTool, m.Role)
	o, err := team.ParseObservation(m.Content)
	require.NoError(t, err, "tool message content must be a JSON observation: %s", m.Content)
	return o
}

// toolMessages returns the tool messages of a request, by tool-call id.
func toolMessages(req team.ChatRequest) map[string]team.Message {
	out := map[string]team.Message{}
	for _, m := range req.Messages {
		if m.Role == team.RoleTool {
			out[m.ToolCallID] = m
		}
	}
	return out
}

func kinds(evs []team.Event) []team.EventKind {
	out := make([]team.EventKind, len(evs))
	for i, e := range evs {
		out[i] = e.Kind
	}
	return out
}

// callIDs returns the ids of the calls of p waiting for a decision.
func callIDs(p *team.Pending) []string {
	ids := make([]string, len(p.Calls))
	for i, c := range p.Calls {
		ids[i] = c.ID
	}
	return ids
}
