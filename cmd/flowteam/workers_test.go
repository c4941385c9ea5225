package main

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/worker"
)

func TestWorkersShowsDeadLetters(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := worker.Stats{Depth: 2, DeadLetters: 1}
	dead := []worker.DeadLetter{{ID: "9-0", Entry: "5-0", Instance: "poison", Deliveries: 5, Consumer: "w2", Time: at},
		{ID: "10-0", Entry: "6-0", Instance: "pay", Consumer: "w1", Time: at, Sealed: true,
			Reason: "its updates could not be opened (no key)"}}

	var text bytes.Buffer
	require.NoError(t, writeWorkersText(&text, "default", st, nil, dead))
	assert.Contains(t, text.String(), "queue default: depth 2, pending 0, wake-ups 0, dead letters 1\n")
	assert.Contains(t, text.String(),
		"dead letter 9-0: instance poison, delivered 5 times, last to w2, at 2026-01-02T03:04:05Z\n")
	assert.Contains(t, text.String(), "dead letter 10-0: instance pay, delivered 0 times, last to w1, at "+
		"2026-01-02T03:04:05Z: entry its updates could not be opened (no key)\n")

	var js bytes.Buffer
	require.NoError(t, writeWorkersJSON(&js, "default", st, nil, dead))
	var out struct {
		DeadLetters int64               `json:"deadLetters"`
		Recent      []worker.DeadLetter `json:"recentDeadLetters"`
	}
	require.NoError(t, json.Unmarshal(js.Bytes(), &out))
	assert.Equal(t, int64(1), out.DeadLetters)
	assert.Equal(t, dead, out.Recent)
	assert.Contains(t, js.String(), `"sealedUpdates": true`)

	js.Reset()
	require.NoError(t, writeWorkersJSON(&js, "default", worker.Stats{}, nil, nil))
	assert.Contains(t, js.String(), `"recentDeadLetters": []`)
}
