package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// Mask replaces every redacted value.
const Mask = "***"

// MinValueLen is the length, in bytes, below which a secret value is masked by key
// only: masking every "1" or "on" in the text written would make it unreadable and
// would tell the value anyway.
const MinValueLen = 4

// DefaultKeys returns the keys every Redactor masks: password, passwd, secret, token,
// api_key, apikey, authorization, cookie and private_key.
func DefaultKeys() []string {
	return []string{"password", "passwd", "secret", "token", "api_key", "apikey", "authorization", "cookie", "private_key"}
}

// Redactor masks secrets in what is written: by key, by value and by pattern (see the
// package doc). It is immutable and safe for concurrent use; With and ForVars return
// new Redactors. A nil *Redactor masks nothing.
type Redactor struct {
	keys     []string            // normalized; a key ending with one is sensitive
	names    map[string]struct{} // normalized names of the variables declared secret
	patterns []*regexp.Regexp
	values   []string          // secret values, MinValueLen bytes or more, each once
	needles  []string          // the values and their escaped forms
	repl     *strings.Replacer // masks the needles; nil without values
	// last memoizes ForVars: the runs of a process mostly hold the same secrets, and
	// building a Redactor for them costs microseconds.
	last atomic.Pointer[learned]
}

// learned is a ForVars result: the values found and the Redactor masking them.
type learned struct {
	found []string
	r     *Redactor
}

// Option configures a Redactor.
type Option func(*Redactor)

// Keys adds sensitive keys to the default ones.
func Keys(keys ...string) Option {
	return func(r *Redactor) {
		for _, k := range keys {
			if n := normalize(k); n != "" {
				r.keys = append(r.keys, n)
			}
		}
	}
}

// Secrets declares the named variables secret: their values are masked under their
// name, as a key's are, and wherever they appear in text (see ForVars). A name
// matches a key exactly, ignoring case and separators.
func Secrets(names ...string) Option {
	return func(r *Redactor) {
		for _, k := range names {
			if n := normalize(k); n != "" {
				if r.names == nil {
					r.names = make(map[string]struct{})
				}
				r.names[n] = struct{}{}
			}
		}
	}
}

// Patterns masks every match of the regular expressions in what is written.
func Patterns(res ...*regexp.Regexp) Option {
	return func(r *Redactor) { r.patterns = append(r.patterns, res...) }
}

// Values masks the given secret values wherever they appear (those shorter than
// MinValueLen are ignored).
func Values(values ...string) Option {
	return func(r *Redactor) { r.values = append(r.values, values...) }
}

// New returns a Redactor for the default keys and the options.
func New(opts ...Option) *Redactor {
	r := &Redactor{}
	Keys(DefaultKeys()...)(r)
	return r.apply(opts)
}

// With returns a Redactor for r's rules plus the options' (for a nil r, New's).
func (r *Redactor) With(opts ...Option) *Redactor {
	if r == nil {
		return New(opts...)
	}
	c := &Redactor{keys: slices.Clone(r.keys), patterns: slices.Clone(r.patterns), values: slices.Clone(r.values)}
	for n := range r.names {
		Secrets(n)(c)
	}
	return c.apply(opts)
}

// apply applies opts and prepares the value replacer.
func (r *Redactor) apply(opts []Option) *Redactor {
	for _, o := range opts {
		o(r)
	}
	r.values = slices.DeleteFunc(r.values, func(v string) bool { return len(v) < MinValueLen })
	slices.Sort(r.values)
	r.values = slices.Compact(r.values)
	r.needles, r.repl = replacer(r.values)
	return r
}

// replacer returns a Replacer of every value and of its JSON-escaped (with and
// without HTML escaping) and URL-escaped forms by Mask, the longer needles first so
// that a value containing another is masked whole.
func replacer(values []string) ([]string, *strings.Replacer) {
	var needles []string
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, v := range values {
		q, _ := json.Marshal(v)
		b.Reset()
		_ = enc.Encode(v) // a string always encodes
		plain := strings.TrimSuffix(b.String(), "\n")
		needles = append(needles, v, string(q[1:len(q)-1]), plain[1:len(plain)-1], url.QueryEscape(v), url.PathEscape(v))
	}
	if len(needles) == 0 {
		return nil, nil
	}
	slices.SortFunc(needles, func(a, b string) int { return len(b) - len(a) })
	needles = slices.Compact(needles)
	args := make([]string, 0, 2*len(needles))
	for _, n := range needles {
		args = append(args, n, Mask)
	}
	return needles, strings.NewReplacer(args...)
}

// normalize lower-cases k and drops the separators that spellings of one key differ
// by ('_', '-', '.' and ' ').
func normalize(k string) string { return string(appendNormalized(nil, k)) }

func appendNormalized(dst []byte, k string) []byte {
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c == '_' || c == '-' || c == '.' || c == ' ':
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// Sensitive reports whether the value under key is masked whole: key ends with a
// sensitive key ("X-Api-Key", "csrf_token"; not "tokens"), or is the name of a
// variable declared secret, ignoring case and separators.
func (r *Redactor) Sensitive(key string) bool {
	if r == nil {
		return false
	}
	var buf [64]byte
	n := appendNormalized(buf[:0], key)
	if _, ok := r.names[string(n)]; ok {
		return true
	}
	for _, k := range r.keys {
		if len(n) >= len(k) && string(n[len(n)-len(k):]) == k {
			return true
		}
	}
	return false
}

// String returns s with the secret values (and their JSON- and URL-escaped forms) and
// the matches of the patterns replaced by Mask.
func (r *Redactor) String(s string) string {
	if r == nil || s == "" {
		return s
	}
	// Looking for each needle first is several times faster than the Replacer's
	// scan when, as in most text, there is none.
	for _, n := range r.needles {
		if strings.Contains(s, n) {
			s = r.repl.Replace(s)
			break
		}
	}
	for _, re := range r.patterns {
		s = re.ReplaceAllLiteralString(s, Mask)
	}
	return s
}

// Map returns a redacted copy of m (see Value); m is not modified.
func (r *Redactor) Map(m map[string]any) map[string]any {
	if r == nil || m == nil {
		return m
	}
	return r.Value(m).(map[string]any)
}

// maxDepth bounds how deep Value looks: deeper, or in a value that contains itself,
// what it finds is masked whole, as Value cannot tell what it holds.
const maxDepth = 32

// Value returns v with the values under sensitive keys masked in maps at any depth
// and strings masked as String does. Maps and slices are copied, never modified. An
// error or a fmt.Stringer whose text has something to mask is replaced by its masked
// text; a value of another type (a struct, a pointer, a typed map or slice) whose
// JSON encoding has something to mask is replaced by that encoding, decoded into
// maps and slices and masked. Other values are returned as they are.
func (r *Redactor) Value(v any) any {
	if r == nil {
		return v
	}
	return r.value(v, 0)
}

func (r *Redactor) value(v any, depth int) any {
	if depth > maxDepth {
		return Mask
	}
	switch t := v.(type) {
	case nil, bool, int, int64, float64, json.Number:
		return v
	case string:
		return r.String(t)
	case map[string]any:
		if t == nil {
			return v // a nil map or list stays nil, as every writer encodes it
		}
		out := make(map[string]any, len(t))
		for k, x := range t {
			if r.Sensitive(k) {
				out[k] = Mask
			} else {
				out[k] = r.value(x, depth+1)
			}
		}
		return out
	case map[string]string:
		if t == nil {
			return v
		}
		out := make(map[string]string, len(t))
		for k, x := range t {
			if r.Sensitive(k) {
				out[k] = Mask
			} else {
				out[k] = r.String(x)
			}
		}
		return out
	case []any:
		if t == nil {
			return v
		}
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = r.value(x, depth+1)
		}
		return out
	case []string:
		if t == nil {
			return v
		}
		out := make([]string, len(t))
		for i, x := range t {
			out[i] = r.String(x)
		}
		return out
	case error, fmt.Stringer:
		return r.textOr(v, textOf(t))
	}
	return r.other(v, depth)
}

// textOf returns the text of an error or a fmt.Stringer; "" if its method panics (a
// nil receiver), as fmt then prints the panic, not the value.
func textOf(v any) (s string) {
	defer func() {
		if recover() != nil {
			s = ""
		}
	}()
	if e, ok := v.(error); ok {
		return e.Error()
	}
	return v.(fmt.Stringer).String()
}

// textOr returns s masked if that changes it, else v.
func (r *Redactor) textOr(v any, s string) any {
	if m := r.String(s); m != s {
		return m
	}
	return v
}

// other redacts a value of a type value does not list, through its JSON encoding (what
// a JSON sink writes of it). A MarshalJSON that panics leaves v as it is.
func (r *Redactor) other(v any, depth int) (out any) {
	defer func() {
		if recover() != nil {
			out = v
		}
	}()
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String:
		return r.textOr(v, rv.String())
	case reflect.Map, reflect.Slice, reflect.Array, reflect.Struct, reflect.Pointer:
	default:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	// Numbers decode as json.Number, so that an int64 id is written back as it was,
	// not rounded through a float64.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var g any
	if dec.Decode(&g) != nil {
		return v
	}
	m := r.value(g, depth)
	// Compared as decoded, not re-encoded: a map encodes its keys sorted, a struct its
	// fields in declaration order.
	if reflect.DeepEqual(m, g) {
		return v // nothing masked: keep the value and its type
	}
	return m
}

// ForVars returns a Redactor that also masks, as text, the values found in vars that
// are secret: those of the variables declared secret and those under sensitive keys
// at any depth (strings, and numbers as they print). It returns r itself when vars
// holds no such value of MinValueLen bytes or more, so that calling it where text is
// written costs little.
func (r *Redactor) ForVars(vars map[string]any) *Redactor {
	if r == nil {
		return nil
	}
	var found []string
	for k, v := range vars {
		found = r.secretsIn(found, k, v, 0)
	}
	found = slices.DeleteFunc(found, func(v string) bool {
		_, known := slices.BinarySearch(r.values, v) // r.values is sorted (apply)
		return len(v) < MinValueLen || known
	})
	if len(found) == 0 {
		return r
	}
	slices.Sort(found)
	found = slices.Compact(found)
	if l := r.last.Load(); l != nil && slices.Equal(l.found, found) {
		return l.r
	}
	l := &learned{found: found, r: r.With(Values(found...))}
	r.last.Store(l)
	return l.r
}

// secretsIn appends the secret values under key k: all of v's scalars if k is
// sensitive, else those under sensitive keys inside v.
func (r *Redactor) secretsIn(dst []string, k string, v any, depth int) []string {
	if depth > maxDepth {
		return dst
	}
	if k != "" && r.Sensitive(k) {
		return appendScalars(dst, v, depth)
	}
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			dst = r.secretsIn(dst, k, x, depth+1)
		}
	case map[string]string:
		for k, x := range t {
			if r.Sensitive(k) {
				dst = append(dst, x)
			}
		}
	case []any:
		for _, x := range t {
			dst = r.secretsIn(dst, "", x, depth+1)
		}
	}
	return dst
}

// appendScalars appends the strings and numbers in v, at any depth, as text.
func appendScalars(dst []string, v any, depth int) []string {
	if depth > maxDepth {
		return dst
	}
	switch t := v.(type) {
	case string:
		return append(dst, t)
	case int:
		return append(dst, strconv.Itoa(t))
	case int64:
		return append(dst, strconv.FormatInt(t, 10))
	case float64:
		b, _ := json.Marshal(t) // as JSON writes it: 12345678, not 1.2345678e+07
		return append(dst, string(b))
	case json.Number:
		return append(dst, t.String())
	case map[string]any:
		for _, x := range t {
			dst = appendScalars(dst, x, depth+1)
		}
	case map[string]string:
		for _, x := range t {
			dst = append(dst, x)
		}
	case []any:
		for _, x := range t {
			dst = appendScalars(dst, x, depth+1)
		}
	case []string:
		dst = append(dst, t...)
	case fmt.Stringer:
		dst = append(dst, textOf(t))
	default:
		return appendNumber(dst, v)
	}
	return dst
}

// appendNumber appends v as text if it is a number of a type appendScalars does not
// list (an int32, a uint64, a float32...), as JSON and fmt write it.
func appendNumber(dst []string, v any) []string {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return append(dst, strconv.FormatInt(rv.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return append(dst, strconv.FormatUint(rv.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		if b, err := json.Marshal(v); err == nil {
			return append(dst, string(b))
		}
	}
	return dst
}
