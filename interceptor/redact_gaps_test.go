package interceptor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flowteam/flowteam/interceptor"
)

// Free-text forms a review found leaking: an XML element's text, a plain value with a
// quote inside, a YAML single-quoted value with a doubled quote, and the credentials of an
// authorization header folded onto the next line.
func TestRedactorStringGaps(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		// XML elements: the element's text is the value.
		{"<password>x</password>", "<password>***</password>"},
		{"<req><user>bob</user><api_key>k-123</api_key></req>", "<req><user>bob</user><api_key>***</api_key></req>"},
		{`<Password type="plain">hunter2</Password> rest`, `<Password type="plain">***</Password> rest`},
		{"<ns:token>abc</ns:token>", "<ns:token>***</ns:token>"},
		{"<secret>a b\nc</secret>", "<secret>***</secret>"},
		{"<password/><user>bob</user>", "<password/><user>bob</user>"},
		{"<tokens>5</tokens> a > b", "<tokens>5</tokens> a > b"},
		{"<password>unclosed", "<password>***"},
		{"<password>unclosed\n<user>bob</user>", "<password>***"}, // as an unclosed quote
		{"<password>x</passwords></password>", "<password>***</password>"},
		{"<a>b > c <password>x</password>", "<a>b > c <password>***</password>"},
		// A quote inside a plain value is part of it; one that closes the message's
		// quoted string ends it.
		{`password=ab"cd`, `password=***`},
		{`password=ab"cd rest`, `password=*** rest`},
		{`msg="password=hunter2" next`, `msg="password=***" next`},
		{`{"error":"login failed password=hunter2"}`, `{"error":"login failed password=***"}`},
		// YAML single-quoted scalars escape a quote by doubling it.
		{"password: 'it''s secret'", "password: '***'"},
		{"password: 'it''s secret'\nuser: bob", "password: '***'\nuser: bob"},
		{"password: '' user: bob", "password: '***' user: bob"},
		// A folded header: the credentials on the next line.
		{"Authorization: Bearer\n  eyJhbGciOi.x.y\nHost: h", "Authorization: ***\nHost: h"},
		{"Authorization: Bearer\r\n\teyJhbGciOi.x.y", "Authorization: ***"},
		{"Authorization: Basic\n\nnext", "Authorization: ***\n\nnext"},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// Digest credentials are a list of auth-params (the response is a hash of the
// password, the nonce lets it be checked offline): the value of the header runs over
// all of them. A quoted value followed by more of the value (`"ab"cd`) is masked
// whole.
func TestRedactorStringAuthParams(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`Authorization: Digest username="bob", realm="a b", nonce="n1", response="6629fae4"` + "\nHost: h", "Authorization: ***\nHost: h"},
		{`authorization=Digest username=bob,response=abc end`, `authorization=*** end`},
		{"Authorization: Basic dXNlcjpwYXNz==, next=1", "Authorization: ***, next=1"},
		{`password="ab"cd rest`, `password=*** rest`},
		{`<user password="x">bob</user>`, `<user password="***">bob</user>`},
		{`{"password":"x","n":1}`, `{"password":"***","n":1}`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}
