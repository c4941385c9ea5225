package solonscript_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/flow/solonscript"
	"github.com/flowteam/flowteam/testkit"
)

// BenchmarkSolonCase1 runs Solon's benchmark graph (an exclusive gateway on a > b, then
// context.put of a + b or a - b; a=3, b=4) on the expr evaluator and on this one. As
// written, case1's scripts are expr's too, so the solon evaluator compiles them with
// expr; java is the same graph with its tasks written as Java statements
// (`int r = a - b; context.put("result", r);`), which goja runs.
func BenchmarkSolonCase1(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "benchmark__case1.yml"))
	if err != nil {
		b.Fatal(err)
	}
	java := strings.NewReplacer(`'context.put("result", a + b);'`, `'int r = a + b; context.put("result", r);'`,
		`'context.put("result", a - b);'`, `'int r = a - b; context.put("result", r);'`).Replace(string(data))
	for _, bc := range []struct {
		name string
		ev   flow.Evaluator
		doc  string
	}{
		{"expr", flow.NewExprEvaluator(), string(data)},
		{"solon", solonscript.New(), string(data)},
		{"solon-java", solonscript.New(), java},
	} {
		b.Run(bc.name, func(b *testing.B) {
			g, err := flow.LoadGraph("case1.yml", []byte(bc.doc))
			if err != nil {
				b.Fatal(err)
			}
			eng := flow.NewEngine(flow.WithEvaluator(bc.ev))
			ctx := context.Background()
			vars := map[string]any{"a": 3, "b": 4}
			b.ReportAllocs()
			defer testkit.ReportCPU(b, 0)()
			for b.Loop() {
				fc := flow.NewContextWith("", vars)
				if _, err := eng.EvalGraph(ctx, g, fc); err != nil {
					b.Fatal(err)
				}
				if v, _ := fc.GetInt("result"); v != -1 {
					b.Fatalf("result %v, want -1", fc.Value("result"))
				}
			}
		})
	}
}
