package redact_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flowteam/flowteam/redact"
)

func TestSensitiveKeys(t *testing.T) {
	r := redact.New(redact.Keys("pin"), redact.Secrets("employee"))
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"password", true}, {"PASSWORD", true}, {"db_password", true}, {"passwd", true},
		{"secret", true}, {"clientSecret", true}, {"token", true}, {"Access-Token", true},
		{"api_key", true}, {"apiKey", true}, {"X-Api-Key", true}, {"api.key", true}, {"apikey", true},
		{"Authorization", true}, {"cookie", true}, {"Set-Cookie", true}, {"private_key", true},
		{"privateKey", true}, {"pin", true}, {"PIN", true}, {"employee", true}, {"Employee", true},
		{"tokens", false}, {"tokenizer", false}, {"name", false}, {"key", false}, {"days", false},
		{"employees", false}, {"former_employee", false}, {"", false},
	} {
		assert.Equal(t, tc.want, r.Sensitive(tc.key), tc.key)
	}
	assert.False(t, (*redact.Redactor)(nil).Sensitive("password"), "a nil Redactor masks nothing")
}

func TestMaskByKey(t *testing.T) {
	r := redact.New()
	for _, tc := range []struct {
		name string
		in   any
		want any
	}{
		{"top level", map[string]any{"password": "hunter22", "user": "bob"}, map[string]any{"password": "***", "user": "bob"}},
		{"nested", map[string]any{"db": map[string]any{"Token": 12345}}, map[string]any{"db": map[string]any{"Token": "***"}}},
		{"in a list", []any{map[string]any{"cookie": "c=1"}}, []any{map[string]any{"cookie": "***"}}},
		{"string map", map[string]string{"authorization": "Bearer x", "host": "h"}, map[string]string{"authorization": "***", "host": "h"}},
		{"whole subtree", map[string]any{"secret": map[string]any{"a": 1}}, map[string]any{"secret": "***"}},
		{"struct through JSON", struct {
			User     string `json:"user"`
			Password string `json:"password"`
		}{"bob", "pw"}, map[string]any{"user": "bob", "password": "***"}},
		{"struct with nothing to mask", struct{ A int }{1}, struct{ A int }{1}},
		{"struct with nothing to mask, fields not in key order", struct {
			Z string
			A int64
		}{"z", 1}, struct {
			Z string
			A int64
		}{"z", 1}},
		{"struct masked, an int64 kept exact", struct {
			ID       int64  `json:"id"`
			Password string `json:"password"`
		}{1234567890123456789, "pw"}, map[string]any{"id": json.Number("1234567890123456789"), "password": "***"}},
		{"scalars", 42, 42},
		{"nil map stays nil", map[string]any(nil), map[string]any(nil)},
		{"nil string map stays nil", map[string]string(nil), map[string]string(nil)},
		{"nil list stays nil", []any(nil), []any(nil)},
		{"nil string list stays nil", []string(nil), []string(nil)},
	} {
		assert.Equal(t, tc.want, r.Value(tc.in), tc.name)
	}
	in := map[string]any{"password": "x"}
	r.Map(in)
	assert.Equal(t, "x", in["password"], "the input is not modified")
}

func TestMaskByValue(t *testing.T) {
	base := redact.New(redact.Secrets("employee"))
	vars := map[string]any{"employee": "Ada Lovelace", "apiKey": "k-123456", "days": 5,
		"nested": map[string]any{"token": "tok-abcdef"}, "pin": "12", "short_secret": "abc"}
	r := base.ForVars(vars)
	for _, tc := range []struct{ name, in, want string }{
		{"declared variable", "waiting for Ada Lovelace to approve", "waiting for *** to approve"},
		{"variable a key rule masks", "GET /?key=k-123456", "GET /?key=***"},
		{"nested under a key", "bearer tok-abcdef", "bearer ***"},
		{"URL-escaped", "name=Ada+Lovelace&x=1", "name=***&x=1"},
		{"path-escaped", "/users/Ada%20Lovelace", "/users/***"},
		{"short values by key only", "abc 12", "abc 12"},
		{"not a secret", "days: 5", "days: 5"},
	} {
		assert.Equal(t, tc.want, r.String(tc.in), tc.name)
	}
	q := base.ForVars(map[string]any{"secret": "a\"b\\c\nd", "employee": "R&D <team>"})
	assert.Equal(t, `{"m":"***"}`, q.String(`{"m":"a\"b\\c\nd"}`), "the JSON-escaped form")
	assert.Equal(t, `{"m":"*** and ***"}`, q.String(`{"m":"R\u0026D \u003cteam\u003e and R&D <team>"}`), "HTML-escaped by JSON or not")
	assert.Equal(t, `{"m":"a\"***"}`, q.String(`{"m":"a\"R&D <team>"}`))
	assert.Same(t, base, base.ForVars(map[string]any{"days": 5, "pin": "12"}), "nothing to learn: the same Redactor")
	assert.Equal(t, "Ada Lovelace", base.String("Ada Lovelace"), "ForVars does not change its receiver")
	assert.Equal(t, "id ***", redact.New().ForVars(map[string]any{"token": 12345678.0}).String("id 12345678"), "numbers as they print")
	typed := redact.New().ForVars(map[string]any{"api_key": uint32(424242), "token": int32(-5150), "secret": float32(2.5e7)})
	assert.Equal(t, "*** *** ***", typed.String("424242 -5150 25000000"), "numbers of every type")
}

func TestMaskByPattern(t *testing.T) {
	r := redact.New(redact.Patterns(regexp.MustCompile(`sk-[a-z0-9]{6,}`), regexp.MustCompile(`\d{4}-\d{4}`)))
	for _, tc := range []struct{ in, want string }{
		{"key sk-abc123def in the prompt", "key *** in the prompt"},
		{"card 1234-5678", "card ***"},
		{"sk-ab is too short", "sk-ab is too short"},
	} {
		assert.Equal(t, tc.want, r.String(tc.in), tc.in)
	}
	assert.Equal(t, map[string]any{"note": "use ***"}, r.Value(map[string]any{"note": "use sk-zzzzzz9"}))
}

func TestMaskInValues(t *testing.T) {
	r := redact.New(redact.Values("s3cr3t-v4lue"))
	assert.Equal(t, "dial: ***", r.Value(errors.New("dial: s3cr3t-v4lue")), "an error becomes its masked text")
	err := errors.New("clean")
	assert.Equal(t, err, r.Value(err), "an error with nothing to mask is kept")
	assert.Equal(t, "***", r.Value(stringer{}), "a Stringer too")
	assert.Equal(t, []string{"a ***"}, r.Value([]string{"a s3cr3t-v4lue"}))
	type named string
	assert.Equal(t, "***", r.Value(named("s3cr3t-v4lue")))
	cyclic := []any{nil}
	cyclic[0] = cyclic
	assert.NotPanics(t, func() { r.Value(cyclic) }, "a value that contains itself ends")
	var nilR *redact.Redactor
	assert.Equal(t, "s3cr3t-v4lue", nilR.String("s3cr3t-v4lue"))
	assert.Nil(t, nilR.ForVars(map[string]any{"token": "abcdef"}))
}

type stringer struct{}

func (stringer) String() string { return "s3cr3t-v4lue" }

func TestWithKeepsRules(t *testing.T) {
	r := redact.New(redact.Secrets("employee"), redact.Values("value-one")).With(redact.Keys("pin"))
	assert.True(t, r.Sensitive("employee"))
	assert.True(t, r.Sensitive("pin"))
	assert.Equal(t, "***", r.String("value-one"))
	assert.True(t, (*redact.Redactor)(nil).With().Sensitive("password"), "nil With is New")
}

func Example() {
	r := redact.New(redact.Secrets("employee"), redact.Patterns(regexp.MustCompile(`sk-[a-z0-9]+`)))
	vars := map[string]any{"employee": "Ada Lovelace", "apiKey": "k-123456", "days": 5}
	r = r.ForVars(vars) // learn the secret values in scope
	fmt.Println(r.Map(vars))
	fmt.Println(r.String("waiting for Ada Lovelace, key k-123456, sk-9x"))
	// Output:
	// map[apiKey:*** days:5 employee:***]
	// waiting for ***, key ***, ***
}

func BenchmarkString(b *testing.B) {
	r := redact.New(redact.Secrets("employee")).ForVars(map[string]any{"employee": "Ada Lovelace", "token": "tok-abcdef"})
	s := "waiting for the manager to approve 5 days for Ada Lovelace"
	b.ReportAllocs()
	for b.Loop() {
		_ = r.String(s)
	}
}
