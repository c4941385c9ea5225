package interceptor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flowteam/flowteam/interceptor"
)

// An unquoted attribute value ends where its start tag does: `<input name=password
// value=x>` masks x and keeps the '>' (or "/>") and the text after it. A '>' in a
// value outside a tag is part of it.
func TestRedactorStringUnquotedAttrValue(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`<input name=password value=x>`, `<input name=password value=***>`},
		{`<input name=password value=x> Remember me`, `<input name=password value=***> Remember me`},
		{`<input type=password value=hunter2/><p>hi</p>`, `<input type=password value=***/><p>hi</p>`},
		{`<user password=hunter2>bob</user>`, `<user password=***>bob</user>`},
		{`<add key=token value=abc>`, `<add key=token value=***>`},
		// Not in a tag: the '>' is part of the value.
		{`password=a>b rest`, `password=*** rest`},
		{`x > 1 and password=a>b`, `x > 1 and password=***`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}
