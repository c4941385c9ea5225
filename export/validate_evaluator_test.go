package export_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/export"
	"github.com/flowteam/flowteam/flow"
)

// anyScript is an evaluator that accepts every script, as a language unlike expr's.
type anyScript struct{}

func (anyScript) CompileCondition(string) (flow.Expression, error) { return nil, nil }
func (anyScript) CompileScript(string) (flow.Expression, error)    { return nil, nil }

func TestValidateNamedEvaluator(t *testing.T) {
	doc := "id: g\nevaluator: %s\nlayout:\n  - {type: start}\n  - {task: 'if (x) { y(); }'}\n  - {type: end}\n"
	spec := func(name string) *flow.GraphSpec {
		s, err := flow.ParseDefinition("g.yml", []byte(fmt.Sprintf(doc, name)))
		require.NoError(t, err)
		return s
	}
	assert.Empty(t, export.ValidateSpecs([]*flow.GraphSpec{spec("custom")}, export.WithNamedEvaluator("custom", anyScript{})))

	fs := export.ValidateSpecs([]*flow.GraphSpec{spec("groovy")}, export.WithNamedEvaluator("custom", anyScript{}))
	require.Len(t, fs, 1)
	assert.Equal(t, export.CodeEvaluatorUnknown, fs[0].Code)
	assert.Contains(t, fs[0].Message, `names evaluator "groovy", which is not known (known: expr, custom)`)

	fs = export.ValidateSpecs([]*flow.GraphSpec{spec("expr")}, export.WithNamedEvaluator("custom", anyScript{}))
	require.NotEmpty(t, fs)
	assert.Equal(t, export.CodeTaskCompile, fs[0].Code)
}

// The evaluator a definition names is written back.
func TestYAMLKeepsEvaluator(t *testing.T) {
	g, err := flow.LoadGraph("g.yml", []byte("id: g\nevaluator: solon\nlayout:\n  - {type: start}\n  - {type: end}\n"))
	require.NoError(t, err)
	out, err := export.YAML(g)
	require.NoError(t, err)
	assert.Contains(t, string(out), "evaluator: solon\n")
	back, err := flow.LoadGraph("back.yml", out)
	require.NoError(t, err)
	assert.Equal(t, "solon", back.Evaluator)
}

// A graph's links are compared in the language of the evaluator it names: with one
// that is not expr, "a>1" and "(a > 1)" are two conditions, not a duplicate link; with
// expr they are one.
func TestValidateNamedEvaluatorComparesLinksAsText(t *testing.T) {
	doc := "id: g\nevaluator: %s\nlayout:\n  - {id: s, type: start, link: [{nextId: e, when: 'a>1'}, {nextId: e, when: '(a > 1)'}]}\n  - {id: e, type: end}\n"
	codes := func(name string) []string {
		s, err := flow.ParseDefinition("g.yml", []byte(fmt.Sprintf(doc, name)))
		require.NoError(t, err)
		var out []string
		for _, f := range export.ValidateSpecs([]*flow.GraphSpec{s}, export.WithNamedEvaluator("custom", anyScript{})) {
			out = append(out, f.Code)
		}
		return out
	}
	assert.NotContains(t, codes("custom"), export.CodeLinkDuplicate)
	assert.Contains(t, codes("expr"), export.CodeLinkDuplicate)
}
