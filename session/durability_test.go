package session_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/session"
)

func TestParseDurability(t *testing.T) {
	for in, want := range map[string]session.Durability{"": session.OnExit, "on-exit": session.OnExit, "On-Exit": session.OnExit,
		"per-node": session.PerNode, "PER-NODE": session.PerNode} {
		got, err := session.ParseDurability(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
		if in != "" {
			assert.Equal(t, want, must(session.ParseDurability(got.String())), "String reads back")
		}
	}
	_, err := session.ParseDurability("per node")
	assert.ErrorContains(t, err, `durability "per node": want on-exit or per-node`)
}

func must(d session.Durability, err error) session.Durability {
	if err != nil {
		panic(err)
	}
	return d
}
