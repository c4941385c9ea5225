package session

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/flowteam/flowteam/redact"
)

// DefaultMask replaces the value of a redacted variable in a saved snapshot: the
// mask every writer of text uses (redact.Mask).
const DefaultMask = redact.Mask

// redactSnapshot masks s (a copy the caller owns) with red, which has learned the
// secret values of s's variables: the variables under a sensitive key or declared
// secret are masked whole and named in s.Redacted (sorted); in the other variables,
// the suspend reason and the error messages, secret values and pattern matches are
// masked where they appear. s's maps and slices are replaced, never modified.
func redactSnapshot(s *Snapshot, red *redact.Redactor) {
	s.Redacted = nil
	vars := make(map[string]any, len(s.Vars))
	for k, v := range s.Vars {
		if red.Sensitive(k) {
			vars[k] = redact.Mask
			s.Redacted = append(s.Redacted, k)
		} else {
			vars[k] = red.Value(v)
		}
	}
	slices.Sort(s.Redacted)
	s.Vars = vars
	s.Reason = red.String(s.Reason)
	if len(s.Errors) > 0 {
		errs := slices.Clone(s.Errors)
		for i := range errs {
			errs[i].Message = red.String(errs[i].Message)
		}
		s.Errors = errs
	}
}

// Cipher seals snapshot bodies with AES-GCM (crypto/cipher).
//
// A sealed snapshot keeps its header in clear (format, instance, graph, hash, status,
// version, timestamps, sources, called hashes, lease: what a store needs to check
// versions and list instances, and what an operator or a resume needs to find and
// check an instance) and stores everything else (variables, frontier, FlowTrace,
// reason, errors, dropped and redacted names, meta, run id) in Sealed:
//
//	Sealed = 0x02 || nonce (12 bytes, random) || AES-GCM(key, nonce, body JSON, aad)
//	aad    = "flowteam-session\x00" || format || "\x00" || instance || "\x00" || graph || "\x00" || hash || "\x00" || status
//	         || for each called graph, by id: "\x00called\x00" || id || "\x00" || hash
//
// The additional data binds the body to its instance, definitions and status: a body
// copied into another instance's snapshot, or under another definition hash (of the
// root or of a called graph), does not open, nor does one whose status was changed in
// the clear header (a running instance marked suspended so that a resume takes it
// over). Snapshots sealed by earlier builds (first byte 0x01, additional data without
// the status) still open with whatever status their header says, also when one is
// put back later.
//
// The version, the timestamps and the lease are not bound (a store stamps the first
// two after the body is sealed). So someone who can write to the store can put back
// an older sealed body of the same instance, definitions and status under the current
// version, or forge a lease; the seal keeps bodies secret and whole, the store's
// access control keeps them current.
//
// A fresh random nonce is drawn for every seal; with one key, stay well below 2^32
// seals (NIST SP 800-38D). Rotating keys means opening with the old Cipher and sealing
// with the new one.
type Cipher struct {
	aead cipher.AEAD
}

// sealVersion is the first byte of Sealed. Version 2 binds the status; version 1
// (earlier builds) did not, and is still opened.
const sealVersion = 2

// ErrDecrypt is returned when a sealed snapshot or sealed data (OpenData) does not
// open: wrong key, or the body, its header or its context was altered.
var ErrDecrypt = errors.New("cannot open sealed data")

// NewCipher returns a Cipher for an AES key of 16, 24 or 32 bytes (AES-128, -192,
// -256).
func NewCipher(key []byte) (*Cipher, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("session: cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("session: cipher: %w", err)
	}
	return &Cipher{aead: aead}, nil
}

// aad is the additional data of a body sealed with seal version v.
func aad(v byte, s *Snapshot) []byte {
	b := fmt.Appendf(nil, "flowteam-session\x00%d\x00%s\x00%s\x00%s", FormatVersion, s.Instance, s.Graph, s.Hash)
	if v >= 2 {
		b = fmt.Appendf(b, "\x00%s", s.Status)
	}
	// The hashes of the called graphs are bound to the body as the root's is. A
	// snapshot without them (sealed before they were recorded) has the data it had.
	for _, id := range slices.Sorted(maps.Keys(s.Called)) {
		b = fmt.Appendf(b, "\x00called\x00%s\x00%s", id, s.Called[id])
	}
	return b
}

// Seal returns a copy of s whose body is encrypted into Sealed. A variable that
// cannot be serialized is an *UnserializableError naming it.
func (c *Cipher) Seal(s *Snapshot) (*Snapshot, error) {
	if s.Sealed != nil {
		return nil, errors.New("session: seal: snapshot is already sealed")
	}
	plain, err := marshal(bodyOf(s), s)
	if err != nil {
		return nil, err
	}
	out := &Snapshot{Format: s.Format, Instance: s.Instance, Graph: s.Graph, Hash: s.Hash, Status: s.Status,
		Version: s.Version, Created: s.Created, Updated: s.Updated, Expires: s.Expires, Sources: s.Sources,
		Called: s.Called, Lease: s.Lease}
	if out.Sealed, err = c.seal(sealVersion, plain, aad(sealVersion, s)); err != nil {
		return nil, fmt.Errorf("session: seal: %w", err)
	}
	return out, nil
}

// errMalformed is open's error for bytes that are not sealed data of a known version:
// too short to hold a nonce and a tag, or of another version byte.
var errMalformed = errors.New("malformed")

// seal returns v || nonce || AES-GCM(key, nonce, plain, ad) with a fresh random nonce:
// the layout of a snapshot's Sealed and of SealData's output.
func (c *Cipher) seal(v byte, plain, ad []byte) ([]byte, error) {
	ns := c.aead.NonceSize()
	sealed := make([]byte, 1+ns, 1+ns+len(plain)+c.aead.Overhead())
	sealed[0] = v
	if _, err := rand.Read(sealed[1:]); err != nil {
		return nil, err
	}
	return c.aead.Seal(sealed, sealed[1:], plain, ad), nil
}

// open decrypts what seal sealed with a version from 1 to maxV, with the additional
// data ad returns for that version. Bytes that cannot be sealed data of such a version
// are errMalformed; any other error is the AEAD's (wrong key, or altered).
func (c *Cipher) open(sealed []byte, maxV byte, ad func(v byte) []byte) ([]byte, error) {
	ns := c.aead.NonceSize()
	if len(sealed) < 1+ns+c.aead.Overhead() || sealed[0] < 1 || sealed[0] > maxV {
		return nil, errMalformed
	}
	return c.aead.Open(nil, sealed[1:1+ns], sealed[1+ns:], ad(sealed[0]))
}

// Open returns a copy of the sealed snapshot s with its body decrypted and decoded as
// strictly as Decode does. A snapshot that is not sealed is returned as is; a sealed
// one with body fields in clear as well is an error wrapping ErrCorrupt.
func (c *Cipher) Open(s *Snapshot) (*Snapshot, error) {
	if s.Sealed == nil {
		return s, nil
	}
	if s.hasClearBody() {
		// Decode refuses this too; a Store that does not use it must not get
		// unauthenticated fields mixed into the ones the seal vouches for.
		return nil, fmt.Errorf("%w: instance %q: sealed snapshot with a clear body", ErrCorrupt, s.Instance)
	}
	// The version byte is not authenticated itself, but it selects the additional
	// data: a version 2 body relabelled 1 is opened without its status and fails.
	plain, err := c.open(s.Sealed, sealVersion, func(v byte) []byte { return aad(v, s) })
	switch {
	case errors.Is(err, errMalformed):
		return nil, fmt.Errorf("%w: instance %q: malformed sealed body", ErrDecrypt, s.Instance)
	case err != nil:
		return nil, fmt.Errorf("%w: instance %q: wrong key, or the snapshot was altered", ErrDecrypt, s.Instance)
	}
	out := *s
	out.Sealed = nil
	var body sealedBody
	if err := unmarshal(plain, &body); err != nil {
		return nil, fmt.Errorf("instance %q: sealed body: %w", s.Instance, err)
	}
	body.into(&out)
	if err := out.checkBody(); err != nil {
		return nil, fmt.Errorf("%w: instance %q: sealed body: %v", ErrCorrupt, s.Instance, err)
	}
	return &out, nil
}

// dataVersion is the first byte of SealData's output.
const dataVersion = 1

// dataAAD is the additional data of SealData: a label of its own, so that sealed data
// never opens as a snapshot body nor one as data, and the context.
func dataAAD(context string) []byte { return append([]byte("flowteam-data\x00"), context...) }

// SealData encrypts data that is not a snapshot, such as the updates of a queued
// resume, bound to context (the instance it belongs to):
//
//	sealed = 0x01 || nonce (12 bytes, random) || AES-GCM(key, nonce, data, "flowteam-data\x00" || context)
//
// OpenData opens it with the same context only: sealed data moved to another
// instance's record does not open.
func (c *Cipher) SealData(data []byte, context string) ([]byte, error) {
	sealed, err := c.seal(dataVersion, data, dataAAD(context))
	if err != nil {
		return nil, fmt.Errorf("session: seal data: %w", err)
	}
	return sealed, nil
}

// OpenData returns the data SealData sealed with context. A wrong key, another
// context, or bytes altered or cut short are an error wrapping ErrDecrypt.
func (c *Cipher) OpenData(sealed []byte, context string) ([]byte, error) {
	data, err := c.open(sealed, dataVersion, func(byte) []byte { return dataAAD(context) })
	switch {
	case errors.Is(err, errMalformed):
		return nil, fmt.Errorf("%w: %q: malformed sealed data", ErrDecrypt, context)
	case err != nil:
		return nil, fmt.Errorf("%w: %q: wrong key, or the data was altered or sealed for another", ErrDecrypt, context)
	}
	return data, nil
}
