package flow

import "testing"

// Graphs that name the expr evaluator on an engine whose default is another share one
// ExprEvaluator: its configuration is built once, not per graph.
func TestNamedExprEvaluatorShared(t *testing.T) {
	e := NewEngine(WithEvaluator(struct{ *ExprEvaluator }{NewExprEvaluator()}))
	a, err := e.evaluatorFor(&Graph{ID: "a", Evaluator: DefaultEvaluatorName})
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.evaluatorFor(&Graph{ID: "b", Evaluator: DefaultEvaluatorName})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := a.(*ExprEvaluator); !ok || a != b {
		t.Fatalf("want one *ExprEvaluator for both graphs, got %p and %p", a, b)
	}
}
