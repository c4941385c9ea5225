package interceptor_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
)

type creds struct {
	User     string `json:"user"`
	Password string `json:"password"`
}

// Secrets in every place a run can put them (attributes at any depth and in any map
// or slice type, error messages, suspend reasons, JSON inside strings, key spelling
// variants, a configured key) never reach a sink or a span.
func TestRedactionEverywhere(t *testing.T) {
	secret := regexp.MustCompile(`S3CR3T\d*`)
	attrs := func(c *flow.Context, n *flow.Node, end *flow.NodeEnd) map[string]any {
		return map[string]any{
			"PASSWORD": "S3CR3T1",
			"nested":   map[string]any{"Api-Key": "S3CR3T2", "list": []any{map[string]any{"x_access_token": "S3CR3T3"}}},
			"strmap":   map[string]string{"client.secret": "S3CR3T4", "note": "token=S3CR3T5"},
			"maps":     []map[string]any{{"authorization": "S3CR3T6"}},
			"strmaps":  []map[string]string{{"apiKey": "S3CR3T7"}},
			"deep":     map[string]map[string]string{"db": {"pwd": "S3CR3T8"}},
			"body":     `{"user":"ann","password":"S3CR3T9"}`,
			"ssn":      "S3CR3T10",
			"creds":    creds{User: "ann", Password: "S3CR3T11"},
			"credsp":   &creds{User: "ann", Password: "S3CR3T12"},
			"ints":     map[string]int{"pin": 1234, "secret": 31337},
			"ok":       "visible",
		}
	}
	var lines, logs bytes.Buffer
	mem := interceptor.NewMemory()
	a := interceptor.NewAudit(interceptor.WithSink(mem), interceptor.WithSink(interceptor.NewJSONL(&lines)),
		interceptor.WithSink(interceptor.NewSlog(slog.New(slog.NewJSONHandler(&logs, nil)))),
		interceptor.WithRedactKeys("ssn"), interceptor.WithAttrs(attrs), quiet())
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	tr := interceptor.NewTracing(tp, interceptor.WithRedactKeys("ssn"))
	e := flow.NewEngine(flow.WithInterceptor(a, 0), flow.WithInterceptor(tr, 1))

	s := flow.NewSpec("r")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("soft").LinkTo("wait")
	s.Activity("soft").DoFunc(func(context.Context, *flow.Context, *flow.Node) error {
		return flow.MarkRecoverable(fmt.Errorf(`call failed: Authorization: Bearer S3CR3T20; body {\"api_key\":\"S3CR3T21\"} ssn=S3CR3T22`))
	}).LinkTo("j")
	s.Activity("wait").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if c.Value("go") == nil {
			c.Suspend(`need approval: {"Token": "S3CR3T23", "SSN": "S3CR3T24"} password: S3CR3T25`)
		}
		return nil
	}).LinkTo("j")
	s.Parallel("j").LinkTo("boom")
	s.Activity("boom").DoFunc(func(context.Context, *flow.Context, *flow.Node) error {
		return errors.New("db: user=ann PASSWORD='S3CR3T26' X-Api-Key: S3CR3T27")
	}).LinkTo("e")
	s.End("e")
	g := build(t, s)
	fc := flow.NewContext("i")
	res, err := e.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	require.Equal(t, flow.StatusSuspended, res.Status)
	fc.Set("go", true)
	res, err = e.Resume(context.Background(), res.Frontier, fc)
	require.Error(t, err)
	require.Equal(t, flow.StatusFailed, res.Status)

	recs := mem.Records()
	require.NoError(t, recs.Verify())
	mj, err := json.Marshal(recs)
	require.NoError(t, err)
	var spans bytes.Buffer
	for _, sp := range exp.GetSpans() {
		fmt.Fprintf(&spans, "%s %v %v %v\n", sp.Name, sp.Attributes, sp.Events, sp.Status)
	}
	for name, out := range map[string]string{"memory": string(mj), "jsonl": lines.String(), "slog": logs.String(), "spans": spans.String()} {
		assert.Empty(t, secret.FindAllString(out, -1), "%s leaks secrets:\n%s", name, out)
		assert.NotContains(t, out, "31337", name)
	}
	assert.Contains(t, lines.String(), "visible", "what is not secret stays")
	assert.Contains(t, lines.String(), "ann", "what is not secret stays")
}

// Values of other types keep their type unless something in them is masked.
func TestRedactorValueOtherTypes(t *testing.T) {
	r := interceptor.NewRedactor()
	type named struct{ Name string }
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, v := range []any{named{"ann"}, &named{"ann"}, now, []int{1, 2}, map[string]int{"n": 1}, int32(7), make(chan int)} {
		assert.Equal(t, v, r.Value(v), "%T", v)
	}
	assert.Equal(t, []any{map[string]any{"user": "ann", "password": interceptor.Mask}},
		r.Value([]creds{{User: "ann", Password: "pw"}}))
	assert.Equal(t, map[string]any{"pin": json.Number("1"), "secret": interceptor.Mask}, r.Value(map[string]int{"pin": 1, "secret": 2}))
}

// WithRedactKeys adds to the keys configured before it, rather than replacing them.
func TestWithRedactKeysAdds(t *testing.T) {
	mem := interceptor.NewMemory()
	a := interceptor.NewAudit(interceptor.WithSink(mem), quiet(),
		interceptor.WithRedactor(interceptor.NewRedactorKeys("pin")), interceptor.WithRedactKeys("ssn"), interceptor.WithRedactKeys("iban"))
	e := flow.NewEngine(flow.WithInterceptor(a, 0))
	s := flow.NewSpec("k")
	s.Start("s").LinkTo("x")
	s.Activity("x").DoFunc(func(context.Context, *flow.Context, *flow.Node) error {
		return errors.New("pin=1 ssn=2 iban=3 password=4")
	}).LinkTo("e")
	s.End("e")
	_, err := e.EvalGraph(context.Background(), build(t, s), flow.NewContext("i"))
	require.Error(t, err)
	failed := mem.ByStatus("FAILED").Nodes()
	require.Len(t, failed, 1)
	assert.Equal(t, "pin=*** ssn=*** iban=*** password=4", failed[0].Error.Message, "the keys of all three options, and only those")
}

// secretStringer prints a secret as key=value text, as some request types do.
type secretStringer struct{ token string }

func (s secretStringer) String() string { return "request token=" + s.token }

// A node's error kept as an attribute (or another value printed through its Error or
// String method) is masked as its record's error message is: a slog text handler
// prints it as text, where the JSON form of an error ({}) shows nothing to mask.
func TestRedactionErrorAttrs(t *testing.T) {
	var logs bytes.Buffer
	mem := interceptor.NewMemory()
	a := interceptor.NewAudit(interceptor.WithSink(mem), interceptor.WithSink(interceptor.NewSlog(slog.New(slog.NewTextHandler(&logs, nil)))), quiet(),
		interceptor.WithAttrs(func(_ *flow.Context, _ *flow.Node, end *flow.NodeEnd) map[string]any {
			if end == nil || end.Err == nil {
				return nil
			}
			return map[string]any{"cause": end.Err, "req": secretStringer{"S3CR3T2"}, "list": []any{end.Err}}
		}))
	s := flow.NewSpec("k")
	s.Start("s").LinkTo("x")
	s.Activity("x").DoFunc(func(context.Context, *flow.Context, *flow.Node) error {
		return errors.New("login failed: password=S3CR3T1")
	}).LinkTo("e")
	s.End("e")
	_, err := flow.NewEngine(flow.WithInterceptor(a, 0)).EvalGraph(context.Background(), build(t, s), flow.NewContext("i"))
	require.Error(t, err)
	assert.NotContains(t, logs.String(), "S3CR3T", "the slog sink leaks")
	failed := mem.ByStatus("FAILED").Nodes()
	require.Len(t, failed, 1)
	assert.Equal(t, `node "x" in graph "k": task_failed: login failed: password=***`, failed[0].Attrs["cause"])
	assert.Equal(t, "request token=***", failed[0].Attrs["req"])
	assert.NotContains(t, fmt.Sprint(failed[0].Attrs), "S3CR3T", "the memory sink keeps the secret")

	// Nothing to mask: the value keeps its type.
	r := interceptor.NewRedactor()
	plainErr := errors.New("not found")
	assert.Equal(t, plainErr, r.Value(plainErr))
	var nilStringer *namedStringer
	assert.Equal(t, nilStringer, r.Value(nilStringer), "a String method that panics is left to the sink")
}

type namedStringer struct{ s string }

func (n *namedStringer) String() string { return n.s }

// note is a string type of an application's, such as a reason or a message.
type note string

// A string of a named type is masked as text, as a string is.
func TestRedactorNamedString(t *testing.T) {
	r := interceptor.NewRedactor()
	assert.Equal(t, "retry with token=***", r.Value(note("retry with token=abc")))
	assert.Equal(t, map[string]any{"why": "password: ***"}, r.Value(map[string]any{"why": note("password: hunter2")}))
	assert.Equal(t, note("nothing to hide"), r.Value(note("nothing to hide")), "the value keeps its type")
}

// A []byte attribute is text as much as a string is (a request or response body):
// masked as text, whatever form a sink writes it in (base64 in JSON, the bytes as
// text or numbers with fmt).
func TestRedactorBytes(t *testing.T) {
	r := interceptor.NewRedactor()
	assert.Equal(t, "login password=***", r.Value([]byte("login password=hunter2")))
	assert.Equal(t, map[string]any{"body": `{"token":"***"}`}, r.Value(map[string]any{"body": []byte(`{"token":"abc"}`)}))
	assert.Equal(t, []byte("nothing to hide"), r.Value([]byte("nothing to hide")), "the value keeps its type")
	assert.Equal(t, map[string]any{"token": interceptor.Mask}, r.Value(json.RawMessage(`{"token":"abc"}`)), "JSON is masked as JSON")

	out := sinkOutputs(t, map[string]any{"body": []byte("login password=S3CR3T1"), "raw": json.RawMessage(`{"secret":"S3CR3T2"}`)})
	for name, s := range out {
		assert.NotContains(t, s, "S3CR3T", name)
		assert.NotContains(t, s, base64.StdEncoding.EncodeToString([]byte("login password=S3CR3T1")), name)
		assert.NotContains(t, s, fmt.Sprint([]byte("S3CR3T")[1:5]), name)
	}
}

// sinkOutputs runs a one-node graph whose records carry attrs and returns what the
// memory (as %+v), JSONL, slog JSON and slog text sinks wrote.
func sinkOutputs(t *testing.T, attrs map[string]any) map[string]string {
	t.Helper()
	var lines, logsJSON, logsText bytes.Buffer
	mem := interceptor.NewMemory()
	a := interceptor.NewAudit(interceptor.WithSink(mem), interceptor.WithSink(interceptor.NewJSONL(&lines)),
		interceptor.WithSink(interceptor.NewSlog(slog.New(slog.NewJSONHandler(&logsJSON, nil)))),
		interceptor.WithSink(interceptor.NewSlog(slog.New(slog.NewTextHandler(&logsText, nil)))), quiet(),
		interceptor.WithAttrs(func(*flow.Context, *flow.Node, *flow.NodeEnd) map[string]any { return attrs }))
	s := flow.NewSpec("k")
	s.Start("s").LinkTo("e")
	s.End("e")
	_, err := flow.NewEngine(flow.WithInterceptor(a, 0)).EvalGraph(context.Background(), build(t, s), flow.NewContext("i"))
	require.NoError(t, err)
	return map[string]string{"memory": fmt.Sprintf("%+v", mem.Records()), "jsonl": lines.String(),
		"slog json": logsJSON.String(), "slog text": logsText.String()}
}

type withFunc struct {
	User     string
	Password string
	Hook     func()
}

type hidden struct {
	User     string
	password string
}

type cyclic struct {
	Name   string
	Token  string
	Next   *cyclic
	Notify func()
}

// Values with no JSON encoding (a map with non-string keys, a struct with a func
// field), and fields JSON leaves out but fmt prints (unexported ones), are masked:
// a slog text handler, or anything printing with %v, shows them. Values that contain
// themselves are cut where they do, instead of recursing forever; values with nothing
// to mask are kept as they are.
func TestRedactorNoJSON(t *testing.T) {
	r := interceptor.NewRedactor()
	secretFree := func(v any) {
		t.Helper()
		assert.NotContains(t, fmt.Sprintf("%+v", v), "hunter2")
	}
	v := r.Value(map[any]any{"password": "hunter2", 1: "one", "note": "token=hunter2"})
	secretFree(v)
	assert.Equal(t, map[string]any{"password": interceptor.Mask, "1": "one", "note": "token=***"}, v)
	v = r.Value(withFunc{User: "ann", Password: "hunter2"})
	secretFree(v)
	assert.Equal(t, map[string]any{"User": "ann", "Password": interceptor.Mask, "Hook": "func()"}, v)
	v = r.Value(map[string]any{"h": hidden{User: "ann", password: "hunter2"}})
	secretFree(v)
	assert.Equal(t, map[string]any{"h": map[string]any{"User": "ann", "password": interceptor.Mask}}, v)
	secretFree(r.Value(map[struct{ Password string }]int{{"hunter2"}: 1}))

	c := &cyclic{Name: "a", Token: "hunter2"}
	c.Next = c
	secretFree(r.Value(c))
	m := map[string]any{"name": "m"}
	m["self"] = m
	m["list"] = []any{m, m}
	got := r.Value(m)
	assert.Equal(t, map[string]any{"name": "m", "self": interceptor.Mask, "list": []any{interceptor.Mask, interceptor.Mask}}, got,
		"cut where it contains itself")
	l := []any{"x", nil}
	l[1] = l
	assert.NotPanics(t, func() { _ = fmt.Sprint(r.Value(l)) })
	mm := map[any]any{"token": "hunter2"}
	mm["self"] = mm
	secretFree(r.Value(mm))

	type plainFields struct {
		Name string
		note string
		Hook func()
	}
	type outer struct{ Inner *hidden }
	// outer's password is unexported (not in JSON) behind a pointer below the top,
	// which fmt prints as an address: no sink shows it.
	for _, keep := range []any{map[any]any{1: "one"}, plainFields{Name: "ann", note: "n"}, &plainFields{Name: "ann"}, map[int]string{1: "a"},
		outer{Inner: &hidden{User: "ann", password: "hunter2"}}} {
		assert.Equal(t, keep, r.Value(keep), "%T", keep)
	}

	out := sinkOutputs(t, map[string]any{"m": map[any]any{"password": "S3CR3T1"}, "f": withFunc{Password: "S3CR3T2"},
		"h": hidden{password: "S3CR3T3"}, "c": c})
	for name, s := range out {
		assert.NotContains(t, s, "S3CR3T", name)
	}
}

// badJSON fails to encode, quoting a secret in its error, as a careless MarshalJSON
// may.
type badJSON struct{ Key string }

func (b badJSON) MarshalJSON() ([]byte, error) {
	return nil, errors.New("cannot encode token=" + b.Key)
}

// A value whose JSON encoding fails with an error that quotes a secret is replaced:
// JSON sinks write the encoding error in its place.
func TestRedactorJSONErrorText(t *testing.T) {
	assert.Equal(t, map[string]any{"Key": "S3CR3T1"}, interceptor.NewRedactor().Value(badJSON{"S3CR3T1"}))
	out := sinkOutputs(t, map[string]any{"v": badJSON{"S3CR3T1"}})
	for _, name := range []string{"jsonl", "slog json"} {
		assert.NotContains(t, out[name], "token=S3CR3T1", name)
	}
}
