package session_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEncodeAllocatesAboutItsSize: the encoder's buffer is sized for the snapshot,
// not grown from 1 KB (a 1 MB snapshot cost about 5 MB of allocations).
func TestEncodeAllocatesAboutItsSize(t *testing.T) {
	for _, c := range []struct {
		name string
		vars map[string]any
	}{
		{"strings", func() map[string]any {
			m := map[string]any{}
			for i := range 64 {
				m[string(rune('a'+i%26))+strings.Repeat("k", i)] = strings.Repeat("x", 16<<10)
			}
			return m
		}()},
		{"nested", func() map[string]any {
			list := make([]any, 20000)
			for i := range list {
				list[i] = map[string]any{"id": int64(i), "name": "item", "ok": true, "rate": 0.25}
			}
			return map[string]any{"items": list}
		}()},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := saved("big")
			s.Vars = c.vars
			var data []byte
			used := allocated(func() { data = encode(t, s) })
			require.Less(t, used, uint64(len(data))*2, "encoding %d bytes", len(data))
		})
	}
}
