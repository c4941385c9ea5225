package interceptor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/flowteam/flowteam/trace"
)

// Mask replaces a redacted value.
const Mask = "***"

// DefaultSensitiveKeys returns the keys every Redactor masks unless built with
// NewRedactorKeys: passwords and passphrases, secrets and secret keys, tokens, API
// keys, credentials, authorization headers, cookies and private keys.
func DefaultSensitiveKeys() []string {
	return []string{
		"password", "passwd", "pwd", "passphrase", "secret", "secret_key", "token", "api_key", "apikey",
		"authorization", "auth", "credential", "credentials", "private_key", "access_key", "cookie",
		"set_cookie", "session_key", "signature",
	}
}

// Redactor masks the values of sensitive keys. A key is sensitive when, ignoring case
// and the separators '_', '-', '.' and ' ', it ends with one of the configured keys:
// with "token", "token", "Access-Token" and "csrf_token" are sensitive, "tokens" and
// "tokenizer" are not; with "api_key", "X-Api-Key" and "apiKey" are.
//
// It masks map values (at any depth, in maps and slices) and, in free text such as
// error messages and suspend reasons, the values of key=value, key: value and JSON
// "key": value pairs, including "Authorization: Bearer <token>". A nil *Redactor masks
// nothing. A Redactor is immutable and safe for concurrent use.
type Redactor struct {
	keys []string // normalized
}

// NewRedactor returns a Redactor for the default keys plus extra.
func NewRedactor(extra ...string) *Redactor {
	return NewRedactorKeys(append(DefaultSensitiveKeys(), extra...)...)
}

// NewRedactorKeys returns a Redactor for exactly the given keys (no defaults).
func NewRedactorKeys(keys ...string) *Redactor { return (&Redactor{}).add(keys) }

// With returns a Redactor for r's keys plus keys (for a nil r, the default keys plus
// keys).
func (r *Redactor) With(keys ...string) *Redactor {
	if r == nil {
		return NewRedactor(keys...)
	}
	return (&Redactor{keys: slices.Clone(r.keys)}).add(keys)
}

// add appends keys to those of r, a Redactor being built.
func (r *Redactor) add(keys []string) *Redactor {
	for _, k := range keys {
		if n := normalizeKey(k); n != "" {
			r.keys = append(r.keys, n)
		}
	}
	return r
}

// normalizeKey lower-cases k and drops the separators that spellings of one key differ
// by.
func normalizeKey(k string) string { return string(appendNormalized(nil, k)) }

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

// Sensitive reports whether values under key must be masked.
func (r *Redactor) Sensitive(key string) bool {
	if r == nil || len(r.keys) == 0 {
		return false
	}
	var buf [64]byte
	n := appendNormalized(buf[:0], key)
	for _, k := range r.keys {
		if len(n) >= len(k) && string(n[len(n)-len(k):]) == k {
			return true
		}
	}
	return false
}

// Value returns v with the values of sensitive keys masked in every map at any depth
// (map[string]any, map[string]string, []any), and string values redacted as text. A
// map or struct whose "name" or "key" entry is a sensitive key has its "value" entry
// masked ({"name": "Authorization", "value": "***"}), as String does in text. Maps
// and slices are copied, never modified. An error, a fmt.Stringer, a []byte or a value
// of a named string type whose text has something to mask is replaced by its masked
// text (a string); so is a fmt.Formatter, by what it prints with %+v, if that or what
// it prints with %v or %s, or its Error or String text, has something to mask (a text
// sink prints what Format writes, not the String text). A value of another composite
// type (a struct, a pointer, []map[string]any, map[string]int...) with something to
// mask is replaced by its masked JSON encoding, decoded into maps and slices; if its
// JSON encoding has nothing to mask, or it has none (a map[any]any, a struct with a
// func field), it is looked at as fmt prints it (map keys as text, struct fields by Go
// name, unexported ones included, the struct a pointer at the top points to but not
// what pointers below it point to) and, if that has something to mask, replaced by
// that form with values masked. Other values are returned as they are.
//
// Value looks at most maxDepth maps and slices deep, and never into one it is already
// inside of: what lies deeper, or where a value contains itself, is masked whole
// (Mask), as Value cannot tell what it holds, and a sink printing it would recurse
// forever.
func (r *Redactor) Value(v any) any {
	if r == nil {
		return v
	}
	var path [8]ref
	w := walk{path: path[:0]}
	return r.value(v, &w)
}

// maxDepth bounds how many maps and slices deep Value looks.
const maxDepth = 32

// walk is the state of one Value call: the maps and slices it is inside
// of, and how many values it has masked so far (which tells whether a part changed).
type walk struct {
	path   []ref
	masked int
}

// ref identifies a map or slice on a walk's path.
type ref struct {
	typ reflect.Type
	ptr uintptr
	n   int // a slice's length: a slice and its prefix share a pointer
}

// enter pushes v (a map or slice) on the path, unless the path is too deep
// or already holds v (a cycle): then it counts a masked value and reports false.
func (w *walk) enter(v reflect.Value) bool {
	k := ref{typ: v.Type(), ptr: v.Pointer()}
	if v.Kind() == reflect.Slice {
		k.n = v.Len()
	}
	if len(w.path) >= maxDepth || slices.Contains(w.path, k) {
		w.masked++
		return false
	}
	w.path = append(w.path, k)
	return true
}

func (w *walk) leave() { w.path = w.path[:len(w.path)-1] }

// text returns s redacted, counting it if it changed.
func (r *Redactor) text(s string, w *walk) string {
	m := r.String(s)
	if m != s {
		w.masked++
	}
	return m
}

// textOr returns s, the text of v, redacted if that masks something, else v, which
// keeps its type.
func (r *Redactor) textOr(v any, s string, w *walk) any {
	if m := r.text(s, w); m != s {
		return m
	}
	return v
}

func (r *Redactor) value(v any, w *walk) any {
	switch t := v.(type) {
	case map[string]any:
		if !w.enter(reflect.ValueOf(t)) {
			return Mask
		}
		out := make(map[string]any, len(t))
		for k, x := range t {
			if r.Sensitive(k) {
				out[k] = Mask
				w.masked++
			} else {
				out[k] = r.value(x, w)
			}
		}
		maskNamed(r, out, any(Mask), w)
		w.leave()
		return out
	case map[string]string:
		out := make(map[string]string, len(t))
		for k, x := range t {
			if r.Sensitive(k) {
				out[k] = Mask
				w.masked++
			} else {
				out[k] = r.text(x, w)
			}
		}
		maskNamed(r, out, Mask, w)
		return out
	case []any:
		if !w.enter(reflect.ValueOf(t)) {
			return Mask
		}
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = r.value(x, w)
		}
		w.leave()
		return out
	case []string:
		out := make([]string, len(t))
		for i, x := range t {
			out[i] = r.text(x, w)
		}
		return out
	case string:
		return r.text(t, w)
	case nil, bool, int, int64, float64, json.Number:
		return v
	}
	return r.other(v, w)
}

// other redacts a value of a type value does not list: a struct, a pointer, a map or
// slice of another type. What a JSON sink writes of it is its JSON encoding, and what
// a text sink writes (a slog text handler, anything printing with %v) is what fmt
// prints: both are redacted (see Value).
func (r *Redactor) other(v any, w *walk) any {
	// A text sink writes an error, a Stringer or a Formatter as its text, which its
	// JSON encoding does not show (an error's is mostly {}): a node's error kept as an
	// attribute must not bring back the secret its record's error message had masked.
	text, masked, isText := r.printed(v)
	if masked {
		w.masked++
		return text
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map, reflect.Slice, reflect.Array, reflect.Struct, reflect.Pointer, reflect.Interface:
	case reflect.String:
		// A string of a named type is text as much as a string is.
		return r.textOr(v, rv.String(), w)
	default:
		return v // a number, a bool: nothing under a key
	}
	if _, ok := v.(json.Marshaler); !ok && rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Uint8 {
		// Bytes are text (a body): JSON writes them in base64, fmt as numbers or text.
		return r.textOr(v, string(rv.Bytes()), w)
	}
	before := w.masked
	if m, ok := r.viaJSON(v, w); w.masked > before {
		if ok {
			return m
		}
		if isText {
			return text // what fmt prints, in place of an encoding error that needs masking
		}
	} else if isText {
		return v // fmt prints its text, which has nothing to mask
	}
	// fmt prints the struct a pointer points to at the top (&{...}), and pointers
	// below it as addresses.
	pv := rv
	if pv.Kind() == reflect.Pointer && !pv.IsNil() {
		pv = pv.Elem()
	}
	if m := r.plain(pv, w); w.masked > before {
		return m
	}
	return v
}

// viaJSON returns v's JSON encoding, decoded into maps and slices (numbers as
// json.Number) and redacted; false if v has no JSON encoding. Where the encoding
// fails, a JSON sink writes the error instead (the JSONL sink's "!error", slog's
// "!ERROR:"), and a MarshalJSON method's error may quote what it failed on: if that
// text has something to mask, it counts as masked, so that v is replaced.
func (r *Redactor) viaJSON(v any, w *walk) (any, bool) {
	b, err := json.Marshal(v)
	if err != nil {
		r.text(err.Error(), w)
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var g any
	if d.Decode(&g) != nil {
		return nil, false
	}
	return r.value(g, w), true
}

// plain returns v as fmt prints it, as plain data with values masked: maps with their
// keys as text, structs as maps of every field by Go name (fmt prints unexported
// fields too), errors, Stringers and Formatters as their text, bytes as text, and a
// pointer (which fmt prints as an address below the top), a func or a channel as its
// type. Not following pointers also keeps it out of the internals of live objects (a
// client, a context) that other goroutines change.
func (r *Redactor) plain(v reflect.Value, w *walk) any {
	if !v.IsValid() {
		return nil
	}
	if v.CanInterface() && v.Type().NumMethod() > 0 {
		if text, masked, ok := r.printed(v.Interface()); ok {
			if masked {
				w.masked++
			}
			return text
		}
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return r.plain(v.Elem(), w)
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return v.Type().String()
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		if !w.enter(v) {
			return Mask
		}
		defer w.leave()
		out := make(map[string]any, v.Len())
		for it := v.MapRange(); it.Next(); {
			k := r.keyText(it.Key(), w)
			if r.Sensitive(k) {
				out[k] = Mask
				w.masked++
			} else {
				out[k] = r.plain(it.Value(), w)
			}
		}
		maskNamed(r, out, any(Mask), w)
		return out
	case reflect.Struct:
		t := v.Type()
		out := make(map[string]any, t.NumField())
		for i := range t.NumField() {
			if name := t.Field(i).Name; r.Sensitive(name) {
				out[name] = Mask
				w.masked++
			} else {
				out[name] = r.plain(v.Field(i), w)
			}
		}
		maskNamed(r, out, any(Mask), w)
		return out
	case reflect.Slice:
		if v.IsNil() {
			return nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return r.text(string(v.Bytes()), w)
		}
		if !w.enter(v) {
			return Mask
		}
		defer w.leave()
		return r.plainList(v, w)
	case reflect.Array:
		return r.plainList(v, w)
	case reflect.String:
		return r.text(v.String(), w)
	case reflect.Bool:
		return v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint()
	case reflect.Float32, reflect.Float64:
		return v.Float()
	case reflect.Complex64, reflect.Complex128:
		return fmt.Sprint(v.Complex()) // JSON has no complex numbers
	}
	return v.Type().String() // a func, a channel, an unsafe pointer: nothing to show
}

func (r *Redactor) plainList(v reflect.Value, w *walk) []any {
	out := make([]any, v.Len())
	for i := range out {
		out[i] = r.plain(v.Index(i), w)
	}
	return out
}

// keyText returns a map key as fmt prints it with %+v (a slog text handler's verb),
// redacted (a struct key may hold a secret too). Keys are comparable, so they hold no
// map or slice, and fmt prints pointers below the top as addresses: printing one ends.
func (r *Redactor) keyText(k reflect.Value, w *walk) string {
	var s string
	switch {
	case k.Kind() == reflect.String:
		s = k.String()
	case k.CanInterface():
		s = fmt.Sprintf("%+v", k.Interface())
	default:
		s = fmt.Sprintf("%+v", r.plain(k, w))
	}
	return r.text(s, w)
}

// printed returns, masked, the text fmt prints for v with %+v (a slog text handler's
// verb) if v prints as text: what a fmt.Formatter's Format method writes, else an
// error's Error or a fmt.Stringer's String text. A Formatter may write something else
// for another verb, and something else again than its Error or String text, which
// other writers print: if any of those has something to mask, masked is true and the
// masked %+v text, a plain string, stands for them all. ok is false for a value that
// prints otherwise.
func (r *Redactor) printed(v any) (text string, masked, ok bool) {
	texts := textsOf(v)
	if len(texts) == 0 {
		return "", false, false
	}
	text = r.String(texts[0])
	masked = text != texts[0]
	for _, t := range texts[1:] {
		if masked {
			break
		}
		masked = r.String(t) != t
	}
	return text, masked, true
}

// textsOf returns the texts of v that writers print, the one fmt prints with %+v
// first (see printed).
func textsOf(v any) []string {
	var texts []string
	if f, ok := v.(fmt.Formatter); ok {
		// fmt recovers a panicking Format itself, and prints the panic.
		texts = []string{fmt.Sprintf("%+v", f), fmt.Sprintf("%v", f), fmt.Sprintf("%s", f)}
	}
	if t, ok := textOf(v); ok {
		texts = append(texts, t)
	}
	return texts
}

// textOf returns the text of an error or a fmt.Stringer. A method that panics (a nil
// receiver) gives no text: fmt prints the panic, not the value.
func textOf(v any) (text string, ok bool) {
	defer func() {
		if recover() != nil {
			text, ok = "", false
		}
	}()
	switch t := v.(type) {
	case error:
		return t.Error(), true
	case fmt.Stringer:
		return t.String(), true
	}
	return "", false
}

// Map returns a redacted copy of m (see Value).
func (r *Redactor) Map(m map[string]any) map[string]any {
	if r == nil || m == nil {
		return m
	}
	return r.Value(m).(map[string]any)
}

// Record masks the free-text and attribute fields of rec in place: the error message,
// the suspend reason and Attrs. Ids, types and titles are structure, not data, and are
// left alone.
func (r *Redactor) Record(rec *trace.Record) {
	if r == nil {
		return
	}
	if rec.Error != nil {
		if m := r.String(rec.Error.Message); m != rec.Error.Message {
			e := *rec.Error
			e.Message = m
			rec.Error = &e
		}
	}
	rec.Reason = r.String(rec.Reason)
	if rec.Attrs != nil {
		rec.Attrs = r.Map(rec.Attrs)
	}
}
