package session_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/session/storetest"
)

// TestDamagedSealedSnapshot: a sealed body with a flipped bit, cut short, moved under
// other definition hashes, or whose status was changed in the clear header, does not
// open (ErrDecrypt); the resume runs nothing and the stored snapshot stays as it was.
func TestDamagedSealedSnapshot(t *testing.T) {
	ctx := t.Context()
	c, err := session.NewCipher([]byte("0123456789abcdef0123456789abcdef"))
	require.NoError(t, err)
	for name, damage := range map[string]func(s *session.Snapshot){
		"flipped bit":                  func(s *session.Snapshot) { s.Sealed[len(s.Sealed)/2] ^= 0x04 },
		"flipped nonce":                func(s *session.Snapshot) { s.Sealed[3] ^= 0x80 },
		"flipped tag":                  func(s *session.Snapshot) { s.Sealed[len(s.Sealed)-1] ^= 0x01 },
		"cut short":                    func(s *session.Snapshot) { s.Sealed = s.Sealed[:len(s.Sealed)-1] },
		"only a nonce":                 func(s *session.Snapshot) { s.Sealed = s.Sealed[:13] },
		"empty":                        func(s *session.Snapshot) { s.Sealed = []byte{} },
		"downgraded to seal version 1": func(s *session.Snapshot) { s.Sealed[0] = 1 },
		"unknown seal version":         func(s *session.Snapshot) { s.Sealed[0] = 3 },
		"another status":               func(s *session.Snapshot) { s.Status = session.StatusFailed },
		"another hash": func(s *session.Snapshot) {
			s.Hash = strings.Repeat("0", 64)
		},
		"another graph": func(s *session.Snapshot) { s.Graph = "leave2" },
		"a called graph's hash added": func(s *session.Snapshot) {
			s.Called = map[string]string{"check": strings.Repeat("0", 64)}
		},
	} {
		t.Run(name, func(t *testing.T) {
			eng, cnt := flow.NewEngine(), newCounter()
			approvalGraph(t, eng, cnt, "Manager")
			mem := session.NewMemoryStore()
			r := session.NewRunner(eng, mem, session.WithCipher(c))
			_, err := r.Run(ctx, "leave", flow.NewContext("sealed-1"))
			require.NoError(t, err)
			stored, err := mem.Load(ctx, "sealed-1")
			require.NoError(t, err)
			damaged := stored.Clone()
			damage(damaged)
			_, err = c.Open(damaged)
			require.ErrorIs(t, err, session.ErrDecrypt)
			assert.ErrorContains(t, err, `"sealed-1"`)

			// Stored so (a save that expects the stored version), it does not resume.
			require.NoError(t, mem.Save(ctx, damaged, stored.Version))
			before, err := mem.Load(ctx, "sealed-1")
			require.NoError(t, err)
			_, err = r.Resume(ctx, "sealed-1", map[string]any{"approved": true})
			require.Error(t, err)
			if name != "another graph" { // that one is not registered
				assert.ErrorIs(t, err, session.ErrDecrypt)
			}
			assert.Equal(t, 1, cnt.get("manager"), "nothing ran")
			after, err := mem.Load(ctx, "sealed-1")
			require.NoError(t, err)
			assert.Equal(t, before, after)
		})
	}
}

// TestSealVersion1StillOpens: a snapshot sealed by an earlier build (seal version 1,
// whose additional data does not bind the status) still opens and resumes, and the
// resume seals it again as version 2.
func TestSealVersion1StillOpens(t *testing.T) {
	ctx := t.Context()
	data, err := os.ReadFile(filepath.Join("testdata", "sealed-v1.json"))
	require.NoError(t, err)
	old, err := session.Decode(data)
	require.NoError(t, err)
	require.EqualValues(t, 1, old.Sealed[0])
	c, err := session.NewCipher([]byte("0123456789abcdef0123456789abcdef"))
	require.NoError(t, err)
	opened, err := c.Open(old)
	require.NoError(t, err)
	assert.Equal(t, "confidential-4242", opened.Vars["salary"])
	assert.Equal(t, "waiting for the manager", opened.Reason)

	eng, cnt := flow.NewEngine(), newCounter()
	approvalGraph(t, eng, cnt, "Manager")
	mem := session.NewMemoryStore()
	require.NoError(t, mem.Save(ctx, old, 0))
	r := session.NewRunner(eng, mem, session.WithCipher(c))
	res, err := r.Resume(ctx, "sealed-v1", map[string]any{"approved": true})
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, "confidential-4242", res.Context.Value("salary"))
	stored, err := mem.Load(ctx, "sealed-v1")
	require.NoError(t, err)
	assert.EqualValues(t, 2, stored.Sealed[0], "sealed again with the current seal version")
}

// TestEmptyClearFieldsBesideASealedBody: empty lists and maps beside a sealed body
// (written by a tool that does not omit them) hold nothing: the snapshot decodes,
// opens and encodes again as before.
func TestEmptyClearFieldsBesideASealedBody(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "sealed-v1.json"))
	require.NoError(t, err)
	padded := bytes.Replace(data, []byte(`{"format":1,`), []byte(`{"format":1,"vars":{},"errors":[],"dropped":[],"redacted":[],`), 1)
	require.NotEqual(t, data, padded)
	s, err := session.Decode(padded)
	require.NoError(t, err)
	c, err := session.NewCipher([]byte("0123456789abcdef0123456789abcdef"))
	require.NoError(t, err)
	opened, err := c.Open(s)
	require.NoError(t, err)
	assert.Equal(t, "confidential-4242", opened.Vars["salary"])
	_, err = session.Encode(s)
	require.NoError(t, err)
}

// TestOpenRejectsAClearBesideTheSealedBody: a sealed snapshot that also carries body
// fields in clear (added by hand, or by a Store that does not check what it loads) is
// corrupt: Open does not mix unauthenticated fields into what it decrypted.
func TestOpenRejectsAClearBesideTheSealedBody(t *testing.T) {
	c, err := session.NewCipher([]byte("0123456789abcdef0123456789abcdef"))
	require.NoError(t, err)
	for name, add := range map[string]func(s *session.Snapshot){
		"vars":     func(s *session.Snapshot) { s.Vars = map[string]any{"admin": true} },
		"frontier": func(s *session.Snapshot) { s.Frontier = storetest.NewSnapshot("x").Frontier },
		"errors":   func(s *session.Snapshot) { s.Errors = []session.ErrorRecord{{Code: "x", Message: "y"}} },
		"redacted": func(s *session.Snapshot) { s.Redacted = []string{"approved"} },
		"meta":     func(s *session.Snapshot) { s.Meta = []string{"durability=on-exit"} },
		"reason":   func(s *session.Snapshot) { s.Reason = "planted" },
	} {
		snap := storetest.NewSnapshot("open-1")
		snap.Frontier, snap.Errors, snap.Vars, snap.Reason = nil, nil, map[string]any{"a": int64(1)}, ""
		sealed, err := c.Seal(snap)
		require.NoError(t, err, name)
		add(sealed)
		opened, err := c.Open(sealed)
		require.ErrorIs(t, err, session.ErrCorrupt, name)
		assert.Nil(t, opened, name)
	}
}

// TestSealData: data sealed for one context opens with the key and that context
// only; another key, another context, a flipped byte, a cut or an unknown version
// byte are ErrDecrypt, and the data is not in the sealed bytes.
func TestSealData(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	c, err := session.NewCipher(key)
	require.NoError(t, err)
	other, err := session.NewCipher([]byte("fedcba9876543210fedcba9876543210"))
	require.NoError(t, err)
	data := []byte(`{"card":"4242-4242-4242-4242"}`)
	sealed, err := c.SealData(data, "order-42")
	require.NoError(t, err)
	assert.NotContains(t, string(sealed), "4242")
	again, err := c.SealData(data, "order-42")
	require.NoError(t, err)
	assert.NotEqual(t, sealed, again, "a fresh nonce for every seal")
	snap, err := c.Seal(storetest.NewSnapshot("order-42"))
	require.NoError(t, err)

	for _, tc := range []struct {
		name    string
		c       *session.Cipher
		sealed  func() []byte
		context string
		want    []byte
	}{
		{"round trip", c, func() []byte { return sealed }, "order-42", data},
		{"empty data", c, func() []byte { b, _ := c.SealData(nil, "order-42"); return b }, "order-42", []byte{}},
		{"wrong key", other, func() []byte { return sealed }, "order-42", nil},
		{"wrong context", c, func() []byte { return sealed }, "order-43", nil},
		{"empty context", c, func() []byte { return sealed }, "", nil},
		{"tampered byte", c, func() []byte { b := bytes.Clone(sealed); b[len(b)/2] ^= 0x01; return b }, "order-42", nil},
		{"tampered tag", c, func() []byte { b := bytes.Clone(sealed); b[len(b)-1] ^= 0x80; return b }, "order-42", nil},
		{"truncated", c, func() []byte { return sealed[:len(sealed)-1] }, "order-42", nil},
		{"only a nonce", c, func() []byte { return sealed[:13] }, "order-42", nil},
		{"empty", c, func() []byte { return nil }, "order-42", nil},
		{"unknown version", c, func() []byte { b := bytes.Clone(sealed); b[0] = 2; return b }, "order-42", nil},
		{"a sealed snapshot body", c, func() []byte { return snap.Sealed }, "order-42", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.c.OpenData(tc.sealed(), tc.context)
			if tc.want == nil {
				require.ErrorIs(t, err, session.ErrDecrypt)
				assert.Nil(t, got)
				assert.NotContains(t, err.Error(), "4242")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, string(tc.want), string(got))
		})
	}
}
