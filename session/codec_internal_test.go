package session

import (
	"math"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
)

// plainValues are values of every kind plain accepts, with the strings and numbers
// whose encoding depends on options: escapes, U+2028, fractions, exponents.
func plainValues() map[string]any {
	return map[string]any{
		"nil": nil, "t": true, "f": false, "s": "<b>&</b> \"q\" \\ \n\t \u2028 \x01 caf\u00e9 \U0001F600",
		"i": -7, "i8": int8(-8), "i16": int16(16), "i32": int32(-32), "i64": int64(1) << 62,
		"u": uint(7), "u8": uint8(8), "u16": uint16(16), "u32": uint32(32), "u64": uint64(math.MaxUint64),
		"half": 0.5, "small": 1e-9, "three": 3.0, "neg": -2.5e15, "below2^53": float64(1<<53 - 1),
		"when":  time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600)),
		"list":  []any{int64(1), "two", 3.25, []any{}, map[string]any{}},
		"obj":   map[string]any{"b": map[string]any{"z": nil, "a": []any{false}}, "a": "x"},
		"empty": map[string]any{}, "none": []any{}, "nilMap": map[string]any(nil), "nilList": []any(nil),
	}
}

// TestPlainOptionsWriteAsMarshalOptions: for a snapshot of plain values, the two
// option sets write the same bytes, so which one Encode took cannot be seen.
func TestPlainOptionsWriteAsMarshalOptions(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)
	s := &Snapshot{Format: FormatVersion, Instance: "i", Graph: "g", Hash: "h", Status: StatusSuspended, Version: 1,
		Created: at, Updated: at, Vars: plainValues(), Frontier: &flow.FrontierState{Graph: "g",
			Frames: []flow.FrameState{{Kind: "loop", Items: []any{int64(1), 2.5, "x", plainValues()}}}}}
	require.True(t, plainSnapshot(s))
	fast, err := json.Marshal(wire(s), plainOptions)
	require.NoError(t, err)
	full, err := json.Marshal(wire(s), marshalOptions)
	require.NoError(t, err)
	assert.Equal(t, string(full), string(fast))
}

// TestPlain names the values that need marshalOptions' functions or checks.
func TestPlain(t *testing.T) {
	for name, v := range plainValues() {
		assert.True(t, plain(v, 0), name)
	}
	assert.True(t, plain(math.NaN(), 0), "NaN: both option sets refuse it")
	cyclic := []any{nil}
	cyclic[0] = cyclic
	deep := any("x")
	for range maxPlainDepth + 1 {
		deep = []any{deep}
	}
	for name, v := range map[string]any{
		"integral float64 from 2^53": float64(1 << 53), "negative": -float64(1 << 60), "1e300": 1e300,
		"infinity": math.Inf(1), "float32": float32(0.5),
		"a struct": struct{}{}, "a pointer": new(int), "a typed map": map[string]int{}, "a typed slice": []string{},
		"nested": map[string]any{"a": []any{float32(1)}}, "cyclic": cyclic, "too deep": deep,
	} {
		assert.False(t, plain(v, 0), name)
	}
}
