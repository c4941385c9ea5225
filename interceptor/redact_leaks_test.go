package interceptor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flowteam/flowteam/interceptor"
)

// An HTML password field says by its type, not its name, that its value is a
// password: <input type="password" value="..."> holds one whatever the field is
// called, its attributes in any order. Only the type "password" says so: an input of
// another type, or a "type" member that names a kind of thing (a lexer's token), does
// not, and the text after a password field without a value is not its value.
func TestRedactorStringPasswordInput(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`<input type="password" value="hunter2">`, `<input type="password" value="***">`},
		{`<input value="hunter2" type="password">`, `<input value="***" type="password">`},
		{`<input type='password' value='hunter2'>`, `<input type='password' value='***'>`},
		{`<input name="pwd" type="password" value="x"/>`, `<input name="pwd" type="password" value="***"/>`},
		{`<input type="password" name="new_pass" id="p1" value="hunter2">`, `<input type="password" name="new_pass" id="p1" value="***">`},
		{`<input value="hunter2" name="new_pass" type="password">`, `<input value="***" name="new_pass" type="password">`},
		{`<INPUT TYPE=PASSWORD VALUE="hunter2">`, `<INPUT TYPE=PASSWORD VALUE="***">`},
		{`{"type":"password","value":"hunter2"}`, `{"type":"password","value":"***"}`},
		// Not a password field: nothing to mask.
		{`<input type="text" name="user" value="bob">`, `<input type="text" name="user" value="bob">`},
		{`<input type="passwords" value="x">`, `<input type="passwords" value="x">`},
		{`{"type":"token","value":"IDENT"}`, `{"type":"token","value":"IDENT"}`},
		{`<label>Password <input type="password" name="p"> hint</label>`, `<label>Password <input type="password" name="p"> hint</label>`},
		{`<input type="password" name="p"><input type="text" value="bob">`, `<input type="password" name="p"><input type="text" value="bob">`},
		{`<input value="bob" name="user"><input type="password" name="p">`, `<input value="bob" name="user"><input type="password" name="p">`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
	assert.Equal(t, map[string]any{"type": "password", "value": interceptor.Mask},
		r.Map(map[string]any{"type": "password", "value": "hunter2"}))
	assert.Equal(t, map[string]any{"type": "token", "value": "IDENT"},
		r.Map(map[string]any{"type": "token", "value": "IDENT"}))
	assert.Equal(t, `<input type="password" value="x">`,
		interceptor.NewRedactorKeys("token").String(`<input type="password" value="x">`),
		"the value of a password field is the value of the key password")
}

// SQL in a form-encoded query string has '+' for its spaces and %27 for its quotes
// (CREATE+USER+bob+IDENTIFIED+BY+%27pw%27): the '+' between its keywords are spaces,
// and a bare value ends at the next one.
func TestRedactorStringSQLFormEncoded(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`CREATE+USER+bob+IDENTIFIED+BY+%27hunter2%27`, `CREATE+USER+bob+IDENTIFIED+BY+%27***%27`},
		{`IDENTIFIED%20BY%20%27hunter2%27`, `IDENTIFIED%20BY%20%27***%27`},
		{`q=ALTER+USER+bob+IDENTIFIED+BY+hunter2+ACCOUNT+LOCK&page=2`, `q=ALTER+USER+bob+IDENTIFIED+BY+***+ACCOUNT+LOCK&page=2`},
		{`q=CREATE+USER+bob+IDENTIFIED+WITH+caching_sha2_password+BY+%27pw%27`, `q=CREATE+USER+bob+IDENTIFIED+WITH+caching_sha2_password+BY+%27***%27`},
		{`ALTER+USER+bob+IDENTIFIED+BY+%27new1%27+REPLACE+%27old1%27`, `ALTER+USER+bob+IDENTIFIED+BY+%27***%27+REPLACE+%27***%27`},
		{`q=create+user+bob+identified+by+%27hunter2%27`, `q=create+user+bob+identified+by+%27***%27`},
		// Prose, and lower-case keywords before an unquoted value: nothing to mask.
		{`q=a+node+identified+by+its+id`, `q=a+node+identified+by+its+id`},
		{`q=the+run+identified+by+%22r-1%22`, `q=the+run+identified+by+%22r-1%22`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// MySQL before 8.0 sets a password with SET PASSWORD [FOR account] = 'pw' or =
// PASSWORD('pw') (OLD_PASSWORD before 5.7), and 8.0 may add REPLACE 'current': the
// values are masked whatever the account looks like, and only them. The argument of
// a PASSWORD call is a password wherever it stands (UPDATE mysql.user SET
// authentication_string = PASSWORD('pw')).
func TestRedactorStringSetPassword(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`SET PASSWORD FOR 'bob'@'%' = PASSWORD('hunter2')`, `SET PASSWORD FOR 'bob'@'%' = PASSWORD('***')`},
		{`SET PASSWORD = 'hunter2'`, `SET PASSWORD = '***'`},
		{`SET PASSWORD FOR bob = PASSWORD("hunter2")`, `SET PASSWORD FOR bob = PASSWORD("***")`},
		{`SET PASSWORD = PASSWORD('hunter2')`, `SET PASSWORD = PASSWORD('***')`},
		{`SET PASSWORD FOR 'bob'@'localhost' = 'hunter2';`, `SET PASSWORD FOR 'bob'@'localhost' = '***';`},
		{`SET PASSWORD FOR bob@localhost=OLD_PASSWORD('hunter2')`, `SET PASSWORD FOR bob@localhost=OLD_PASSWORD('***')`},
		{"SET PASSWORD FOR `bob`@`10.0.0.0/255.0.0.0` = 'hunter2'", "SET PASSWORD FOR `bob`@`10.0.0.0/255.0.0.0` = '***'"},
		{`SET PASSWORD FOR CURRENT_USER() = 'hunter2'`, `SET PASSWORD FOR CURRENT_USER() = '***'`},
		{`set password for 'bob'@'%' = 'hunter2'`, `set password for 'bob'@'%' = '***'`},
		{`SET PASSWORD FOR 'bob'@'%' = 'new1' REPLACE 'old1'`, `SET PASSWORD FOR 'bob'@'%' = '***' REPLACE '***'`},
		{`Error 1133: query "SET PASSWORD FOR 'bob'@'%' = PASSWORD('pw')" failed`, `Error 1133: query "SET PASSWORD FOR 'bob'@'%' = PASSWORD('***')" failed`},
		{`q=SET+PASSWORD+FOR+%27bob%27%40%27%25%27+%3D+PASSWORD(%27hunter2%27)`, `q=SET+PASSWORD+FOR+%27bob%27%40%27%25%27+%3D+PASSWORD(%27***%27)`},
		{`q=SET+PASSWORD+FOR+bob+%3D+%27hunter2%27`, `q=SET+PASSWORD+FOR+bob+%3D+%27***%27`},
		// The argument of a PASSWORD call is a password wherever it stands.
		{`UPDATE mysql.user SET authentication_string=PASSWORD('hunter2') WHERE User='bob'`, `UPDATE mysql.user SET authentication_string=PASSWORD('***') WHERE User='bob'`},
		{`UPDATE mysql.user SET Password = PASSWORD('hunter2')`, `UPDATE mysql.user SET Password = PASSWORD('***')`},
		{`password=PASSWORD('hunter2')`, `password=PASSWORD('***')`},
		{`SELECT PASSWORD('hunter2')`, `SELECT PASSWORD('***')`},
		{`INSERT INTO user VALUES ('bob', OLD_PASSWORD( "hunter2" ))`, `INSERT INTO user VALUES ('bob', OLD_PASSWORD( "***" ))`},
		// No password, or no SET PASSWORD: nothing to mask.
		{`getPassword('db') failed`, `getPassword('db') failed`},
		{`the password(s) expired`, `the password(s) expired`},
		{`see password("x") in lower case`, `see password("x") in lower case`},
		{`SET PASSWORD FOR bob TO RANDOM`, `SET PASSWORD FOR bob TO RANDOM`},
		{`RESET PASSWORD FOR bob = done`, `RESET PASSWORD FOR bob = done`},
		{`SET PASSWORD FOR = 'x'`, `SET PASSWORD FOR = 'x'`},
		{`SET PASSWORDS FOR bob = 'x'`, `SET PASSWORDS FOR bob = 'x'`},
		{`SET mode FOR bob = 'x'`, `SET mode FOR bob = 'x'`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}
