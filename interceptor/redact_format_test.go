package interceptor_test

import (
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flowteam/flowteam/interceptor"
)

// verbose prints a secret only through its Format method, as errors with details do
// under %+v: its String text has nothing to mask.
type verbose struct{ key string }

func (v verbose) String() string { return "request" }

func (v verbose) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('+') {
		_, _ = io.WriteString(f, "request api_key="+v.key)
		return
	}
	_, _ = io.WriteString(f, "request")
}

// plainVerbose prints a secret with %v and %s but not with %+v.
type plainVerbose struct{ key string }

func (v plainVerbose) Format(f fmt.State, verb rune) {
	if f.Flag('+') {
		_, _ = io.WriteString(f, "request")
		return
	}
	_, _ = io.WriteString(f, "request token="+v.key)
}

type holder struct {
	Name string
	Req  verbose
}

// A value whose Format method prints more than its String method is masked as fmt
// prints it: a slog text handler (and %v, %+v anywhere) calls Format, not String.
func TestRedactorFormatter(t *testing.T) {
	r := interceptor.NewRedactor()
	assert.Equal(t, "request api_key=***", r.Value(verbose{"S3CR3T1"}))
	assert.Equal(t, "request", r.Value(plainVerbose{"S3CR3T1"}), "masked in every verb's form")
	for _, v := range []any{
		r.Value(verbose{"S3CR3T1"}), r.Value(plainVerbose{"S3CR3T2"}),
		r.Value(map[string]any{"req": verbose{"S3CR3T3"}}), r.Value(holder{Name: "ann", Req: verbose{"S3CR3T4"}}),
		r.Value(map[any]any{1: plainVerbose{"S3CR3T5"}}),
	} {
		for _, verb := range []string{"%v", "%+v", "%s"} {
			assert.NotContains(t, fmt.Sprintf(verb, v), "S3CR3T", verb)
		}
	}
	out := sinkOutputs(t, map[string]any{"req": verbose{"S3CR3T1"}, "other": plainVerbose{"S3CR3T2"}, "h": holder{Req: verbose{"S3CR3T3"}}})
	for name, s := range out {
		assert.NotContains(t, s, "S3CR3T", name)
	}
}
