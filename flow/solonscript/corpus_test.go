package solonscript_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/flow/solonscript"
)

// The testdata files are Solon Flow 4.0.3's own test resources whose scripts the expr
// evaluator does not accept. Every expected value below is worked out from the graph.

func load(t *testing.T, name string, opts ...flow.Option) (*flow.Engine, *flow.Graph) {
	t.Helper()
	eng := flow.NewEngine(opts...)
	g, err := eng.LoadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return eng, g
}

func solon(opts ...solonscript.Option) flow.Option {
	return flow.WithEvaluator(solonscript.New(opts...))
}

// The rule chain scores s.amount: >= 100 sets 0, then (100, 500] sets 100, (500, 1000]
// sets 500; below 100 nothing sets a score.
func TestRuleChainScores(t *testing.T) {
	eng, g := load(t, "demo__rule__rule.chain.yml", solon())
	for _, tc := range []struct {
		amount int
		score  any
	}{{50, nil}, {300, int64(100)}, {800, int64(500)}, {2000, int64(0)}} {
		s := map[string]any{"amount": tc.amount}
		res, err := eng.EvalGraph(context.Background(), g, flow.NewContextWith("", map[string]any{"s": s}))
		require.NoError(t, err, "amount %d", tc.amount)
		assert.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, tc.score, s["score"], "amount %d", tc.amount)
	}
}

// recorder is a Go task that records the nodes it runs at.
type recorder struct {
	mu    sync.Mutex
	nodes []string
}

func (r *recorder) Run(_ context.Context, _ *flow.Context, n *flow.Node) error {
	r.mu.Lock()
	r.nodes = append(r.nodes, n.ID)
	r.mu.Unlock()
	return nil
}

func (r *recorder) sorted() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(slices.Values(r.nodes))
}

// flow_case8's exclusive gateway s3 takes s3_2 (a parallel split into s3_2_1, which
// goes on to s4, and s3_2_2) when "type1".equals(dataType), else its default s3_1;
// both ways reach s4 and the parallel s5 (s5_1 and s5_2).
func TestFlowCase8Route(t *testing.T) {
	for _, tc := range []struct {
		dataType string
		want     []string
	}{
		{"type1", []string{"s1", "s2", "s3_2_1", "s3_2_2", "s4", "s5_1", "s5_2"}},
		{"type2", []string{"s1", "s2", "s3_1", "s4", "s5_1", "s5_2"}},
	} {
		rec := &recorder{}
		eng, g := load(t, "flow__flow_case8.graph.yml", solon(), flow.WithTask("a", rec))
		res, err := eng.EvalGraph(context.Background(), g, flow.NewContextWith("", map[string]any{"dataType": tc.dataType}))
		require.NoError(t, err, tc.dataType)
		assert.Equal(t, flow.StatusCompleted, res.Status)
		assert.Equal(t, tc.want, rec.sorted(), tc.dataType)
	}
}

func logTo(buf *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
}

// printed returns the messages System.out.println logged.
func printed(buf *bytes.Buffer) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if _, msg, ok := strings.Cut(l, "msg="); ok {
			msg, _, _ = strings.Cut(msg, " ")
			out = append(out, msg)
		}
	}
	return out
}

// for_case1 and for_case2 put an AtomicInteger 0 in demo, then n1 prints it and loops
// back to itself while demo.incrementAndGet() < 5: it prints 0 to 4 and leaves demo at
// 5. for_case1's n1 is an exclusive gateway without a default link, so the last test
// fails the run with exclusive_no_match (Solon ends the branch silently); for_case2's
// n1 is an activity, whose branch ends.
func TestForCaseCounters(t *testing.T) {
	for _, tc := range []struct {
		file   string
		status flow.Status
	}{{"flow__for_case1.graph.yml", flow.StatusFailed}, {"flow__for_case2.graph.yml", flow.StatusCompleted}} {
		var buf bytes.Buffer
		eng, g := load(t, tc.file, solon(solonscript.WithLogger(logTo(&buf))))
		fc := flow.NewContext("")
		res, err := eng.EvalGraph(context.Background(), g, fc)
		assert.Equal(t, tc.status, res.Status, tc.file)
		if tc.status == flow.StatusFailed {
			var ne *flow.NodeError
			require.ErrorAs(t, err, &ne)
			assert.Equal(t, "n1", ne.Node)
			assert.ErrorIs(t, err, flow.ErrNoRoute)
		}
		demo, ok := flow.GetAs[*solonscript.Counter](fc, "demo")
		require.True(t, ok, tc.file)
		assert.Equal(t, int64(5), demo.Get(), tc.file)
		assert.Equal(t, []string{"0", "1", "2", "3", "4"}, printed(&buf), tc.file)
	}
}

// fetcher is the Go side of the fetch demos: 2 communities, 3 albums each, 4 courses
// each. The list tasks put lists (for loop nodes) or iterators (for scripts).
type fetcher struct {
	iterators bool
	mu        sync.Mutex
	content   []string
}

func (f *fetcher) list(c *flow.Context, key string, items []any) {
	if f.iterators {
		c.Set(key, solonscript.NewIterator(items))
	} else {
		c.Set(key, items)
	}
}

func (f *fetcher) options() []flow.Option {
	ids := func(prefix string, n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s%d", prefix, i+1)
		}
		return out
	}
	task := func(fn func(c *flow.Context)) flow.TaskFunc {
		return func(_ context.Context, c *flow.Context, _ *flow.Node) error { fn(c); return nil }
	}
	noop := task(func(*flow.Context) {})
	return []flow.Option{
		flow.WithTask("fetchBanduCommunity", task(func(c *flow.Context) { f.list(c, "communityIds", ids("c", 2)) })),
		flow.WithTask("fetchBanduAlbum", task(func(c *flow.Context) {
			f.list(c, "albumIds", ids(fmt.Sprint(c.Value("communityId"), "/a"), 3))
		})),
		flow.WithTask("fetchBanduCourse", task(func(c *flow.Context) {
			f.list(c, "courseIds", ids(fmt.Sprint(c.Value("albumId"), "/k"), 4))
		})),
		flow.WithTask("fetchBanduContent", task(func(c *flow.Context) {
			f.mu.Lock()
			f.content = append(f.content, fmt.Sprint(c.Value("courseId")))
			f.mu.Unlock()
		})),
		flow.WithTask("downloadBanduAttachment", noop),
		flow.WithTask("convertBanduAttachment", noop),
		flow.WithTask("markdownBanduAttachment", noop),
	}
}

// loop-demo1-fetch_full nests three loops (communities, albums, courses): a counts the
// album iterations (6), b the community iterations (2), c the runs (1); the content
// task runs once per course (24).
func TestLoopDemoCounters(t *testing.T) {
	f := &fetcher{}
	eng, g := load(t, "flow__loop-demo1-fetch_full.yml", append(f.options(), solon())...)
	fc := flow.NewContext("")
	res, err := eng.EvalGraph(context.Background(), g, fc)
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	for key, want := range map[string]int64{"a": 6, "b": 2, "c": 1} {
		n, ok := flow.GetAs[*solonscript.Counter](fc, key)
		require.True(t, ok, key)
		assert.Equal(t, want, n.Get(), key)
	}
	assert.Len(t, f.content, 24)
}

// fetch-demo-script does the same walk in one script, with context.runTask and the
// iterators the tasks put: the content task runs once per course, in order.
func TestFetchDemoScriptRunsTasks(t *testing.T) {
	f := &fetcher{iterators: true}
	eng, g := load(t, "lab__fetch-demo-script.yml", append(f.options(), solon())...)
	res, err := eng.EvalGraph(context.Background(), g, flow.NewContext(""))
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	require.Len(t, f.content, 24)
	assert.Equal(t, "c1/a1/k1", f.content[0])
	assert.Equal(t, "c1/a1/k4", f.content[3])
	assert.Equal(t, "c2/a3/k4", f.content[23])
}

// listener is an interceptor that sees the events tasks publish.
type listener struct {
	flow.NopInterceptor
	mu     sync.Mutex
	events []string
}

func (l *listener) OnEvent(_ context.Context, _ *flow.Context, n *flow.Node, topic string, payload any) {
	l.mu.Lock()
	l.events = append(l.events, fmt.Sprintf("%s %s %v", n.ID, topic, payload))
	l.mu.Unlock()
}

// event_case1 runs @DemoCom, then n-2 sends "hello" on demo.topic.
func TestEventCase1ListenerSeesEvent(t *testing.T) {
	l := &listener{}
	rec := &recorder{}
	eng, g := load(t, "flow__event_case1.yml", solon(), flow.WithTask("DemoCom", rec), flow.WithInterceptor(l, 0))
	res, err := eng.EvalGraph(context.Background(), g, flow.NewContext(""))
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)
	assert.Equal(t, []string{"n-1"}, rec.sorted())
	assert.Equal(t, []string{"n-2 demo.topic hello"}, l.events)
}
