package interceptor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/interceptor/otelflow"
	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/trace"
)

type creds struct {
	User     string `json:"user"`
	Password string `json:"password"`
}

// Secrets in every place a run can put them (attributes under sensitive keys at any
// depth, the values of secret variables quoted in error messages, suspend reasons
// and attributes, their JSON-escaped forms, pattern matches) never reach a sink or a
// span.
func TestRedactionEverywhere(t *testing.T) {
	secret := regexp.MustCompile(`S3CR3T\d*`)
	attrs := func(c *flow.Context, n *flow.Node, end *flow.NodeEnd) map[string]any {
		return map[string]any{
			"PASSWORD": "S3CR3T1",
			"nested":   map[string]any{"Api-Key": "S3CR3T2", "list": []any{map[string]any{"x_access_token": "S3CR3T3"}}},
			"strmap":   map[string]string{"client.secret": "S3CR3T4", "note": "employee S3CR3T5"},
			"ssn":      "S3CR3T10",
			"creds":    creds{User: "ann", Password: "S3CR3T11"},
			"ints":     map[string]int{"pin": 1234, "secret": 31337},
			"ok":       "visible",
			"card":     "card 4111-1111",
		}
	}
	red := redact.New(redact.Secrets("employee"), redact.Keys("ssn"), redact.Patterns(regexp.MustCompile(`\d{4}-\d{4}`)))
	var lines, logs bytes.Buffer
	mem := interceptor.NewMemory()
	a := interceptor.NewAudit(interceptor.WithSink(mem), interceptor.WithSink(interceptor.NewJSONL(&lines)),
		interceptor.WithSink(interceptor.NewSlog(slog.New(slog.NewJSONHandler(&logs, nil)))),
		interceptor.WithRedactor(red), interceptor.WithAttrs(attrs), quiet())
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	tr := otelflow.NewTracing(tp, otelflow.WithRedactor(red))
	e := flow.NewEngine(flow.WithInterceptor(a, 0), flow.WithInterceptor(tr, 1))

	s := flow.NewSpec("r")
	s.Start("s").LinkTo("p")
	s.Parallel("p").LinkTo("soft").LinkTo("wait")
	s.Activity("soft").DoFunc(func(context.Context, *flow.Context, *flow.Node) error {
		return flow.MarkRecoverable(errors.New(`call failed: Authorization: Bearer S3CR3T20; body {"user":"S3CR3T21 \"x\""}`))
	}).LinkTo("j")
	s.Activity("wait").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
		if c.Value("go") == nil {
			c.Set("token", "S3CR3T23") // set during the run: learned when the text is written
			c.Suspend("need approval for employee S3CR3T5 with S3CR3T23, card 1234-5678")
		}
		return nil
	}).LinkTo("j")
	s.Parallel("j").LinkTo("boom")
	s.Activity("boom").DoFunc(func(context.Context, *flow.Context, *flow.Node) error {
		return errors.New("db: user=ann PASSWORD='S3CR3T26' at https://h/?k=S3CR3T27%2Bx")
	}).LinkTo("e")
	s.End("e")
	g := build(t, s)
	fc := flow.NewContextWith("i", map[string]any{"employee": "S3CR3T5", "auth": map[string]any{"authorization": "Bearer S3CR3T20"},
		"body": map[string]any{"password": `S3CR3T21 "x"`}, "db_password": "S3CR3T26", "apiKey": "S3CR3T27+x"})
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
		assert.NotContains(t, out, "1234-5678", name)
	}
	assert.Contains(t, lines.String(), "visible", "what is not secret stays")
	assert.Contains(t, lines.String(), "ann", "what is not secret stays")
	susp := mem.ByStatus(trace.Suspended).Nodes()
	require.Len(t, susp, 1)
	assert.Equal(t, "need approval for employee *** with ***, card ***", susp[0].Reason)
}

// WithRedactKeys adds to the keys configured before it, rather than replacing them,
// and WithRedactor(nil) masks nothing.
func TestWithRedactKeysAdds(t *testing.T) {
	run := func(opts ...interceptor.Option) map[string]any {
		mem := interceptor.NewMemory()
		opts = append(opts, interceptor.WithSink(mem), quiet(), interceptor.WithAttrs(
			func(*flow.Context, *flow.Node, *flow.NodeEnd) map[string]any {
				return map[string]any{"pin": "1", "ssn": "2", "iban": "3", "password": "4"}
			}))
		e := flow.NewEngine(flow.WithInterceptor(interceptor.NewAudit(opts...), 0))
		_, err := e.EvalGraph(context.Background(), chain(t, 1), flow.NewContext("i"))
		require.NoError(t, err)
		return mem.ByNode("n0").Terminal()[0].Attrs
	}
	assert.Equal(t, map[string]any{"pin": "***", "ssn": "***", "iban": "***", "password": "***"},
		run(interceptor.WithRedactor(redact.New(redact.Keys("pin"))), interceptor.WithRedactKeys("ssn"), interceptor.WithRedactKeys("iban")))
	assert.Equal(t, map[string]any{"pin": "1", "ssn": "2", "iban": "3", "password": "4"}, run(interceptor.WithRedactor(nil)))
}

// BenchmarkRedactRecord measures what the audit does to a failed node's record: learn
// the secrets of the node's variables, then mask the error message, the suspend
// reason and the attributes.
func BenchmarkRedactRecord(b *testing.B) {
	red := redact.New(redact.Secrets("employee"))
	vars := map[string]any{"employee": "Ada Lovelace", "days": 5, "apiKey": "k-123456", "status": "submitted",
		"request": map[string]any{"from": "2026-01-05", "to": "2026-01-09"}}
	rec := trace.Record{Status: trace.Failed, Reason: "waiting for the manager to approve 5 days for Ada Lovelace",
		Error: &trace.ErrorInfo{Message: "calendar: 403 for key k-123456"},
		Attrs: map[string]any{"days": 5, "token": "t-1", "note": "no secret here"}}
	b.ReportAllocs()
	for b.Loop() {
		r := red.ForVars(vars)
		_ = r.String(rec.Reason)
		_ = r.String(rec.Error.Message)
		_ = r.Map(rec.Attrs)
	}
}
