package interceptor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flowteam/flowteam/interceptor"
)

// In a MySQL string a backslash escapes the quote after it ('x\',1' is x',1), and
// in standard SQL so does a second quote right after it: a password quoted so ends at its
// real closing quote, and the statement goes on after it. JSON and Go's %q double
// the backslash ('x\\',1' in {"sql":"..."} is the same string).
func TestRedactorStringSQLEscapedQuote(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`create user a identified by 'x\',1', b identified by x2`, `create user a identified by '***', b identified by ***`},
		{`CREATE USER a IDENTIFIED BY 'x\'y z' ACCOUNT LOCK`, `CREATE USER a IDENTIFIED BY '***' ACCOUNT LOCK`},
		{`alter user a identified by 'n\'1 x' replace 'o\'1 y'`, `alter user a identified by '***' replace '***'`},
		{`create user a identified by 'x\\\' y', b identified by x2`, `create user a identified by '***', b identified by ***`},
		{`SET PASSWORD FOR bob = 'p\'w'`, `SET PASSWORD FOR bob = '***'`},
		{`SET PASSWORD FOR bob = 'p\'w x', 1`, `SET PASSWORD FOR bob = '***', 1`},
		{`UPDATE mysql.user SET authentication_string = PASSWORD('p\'w') WHERE user='bob'`,
			`UPDATE mysql.user SET authentication_string = PASSWORD('***') WHERE user='bob'`},
		{`UPDATE mysql.user SET authentication_string = PASSWORD('p\'w x') WHERE user='bob'`,
			`UPDATE mysql.user SET authentication_string = PASSWORD('***') WHERE user='bob'`},
		{`password=PASSWORD('p\'w x')`, `password=PASSWORD('***')`},
		// A doubled quote, the standard escape, at the start of the value too.
		{`create user a identified by 'x'',1', b identified by x2`, `create user a identified by '***', b identified by ***`},
		{`create user a identified by '''x,1', b identified by x2`, `create user a identified by '***', b identified by ***`},
		{`create user a identified by '''', b identified by x2`, `create user a identified by '***', b identified by ***`},
		// An escaped backslash before the quote: the quote closes the string.
		{`create user a identified by 'x\\', b identified by x2`, `create user a identified by '***', b identified by ***`},
		// As JSON and %q write it.
		{`{"sql":"create user a identified by 'x\\',1', b identified by x2"}`, `{"sql":"create user a identified by '***', b identified by ***"}`},
		{`{"sql":"SET PASSWORD FOR bob = 'p\\'w x'"}`, `{"sql":"SET PASSWORD FOR bob = '***'"}`},
		{`{"sql":"UPDATE u SET p = PASSWORD('p\\'w x') WHERE 1"}`, `{"sql":"UPDATE u SET p = PASSWORD('***') WHERE 1"}`},
		{`err="create user a identified by 'x\\',1', b identified by x2"`, `err="create user a identified by '***', b identified by ***"`},
		{`{"sql":"create user a identified by 'x\\\\', b identified by x2"}`, `{"sql":"create user a identified by '***', b identified by ***"}`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
	// A shell's single quotes take no escape ('x\' is x\): key=value quoting is left
	// as it is outside SQL.
	assert.Equal(t, `password='***' y'`, r.String(`password='x\' y'`))
}

// SQL in JSON in a %q-quoted message has its backslashes doubled twice: 'x\\\\',1'
// is the string x',1 there, and the JSON string's quotes are escaped (\").
func TestRedactorStringSQLEscapedQuoteTwoLayers(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`msg="{\"sql\":\"create user a identified by 'x\\\\',1', b identified by x2\"}"`,
			`msg="{\"sql\":\"create user a identified by '***', b identified by ***\"}"`},
		{`msg="{\"sql\":\"create user a identified by 'x\\\\\\\\', b identified by x2\"}"`,
			`msg="{\"sql\":\"create user a identified by '***', b identified by ***\"}"`},
		// One layer, and none: as before.
		{`{"sql":"create user a identified by 'x\\',1', b identified by x2"}`, `{"sql":"create user a identified by '***', b identified by ***"}`},
		{`create user a identified by 'x\\', b identified by x2`, `create user a identified by '***', b identified by ***`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}
