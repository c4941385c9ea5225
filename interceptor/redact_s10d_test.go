package interceptor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flowteam/flowteam/interceptor"
)

// A quoted Windows path to an Oracle tool inside a JSON string or a %q-quoted
// message has its quotes escaped (\") and its backslashes doubled: it is the same
// command, and the tool takes its logon as it does unescaped.
func TestRedactorStringLogonEscapedQuotedPath(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`{"cmd":"\"C:\\Program Files\\Oracle\\bin\\exp.exe\" scott/tiger@db"}`, `{"cmd":"\"C:\\Program Files\\Oracle\\bin\\exp.exe\" scott/***@db"}`},
		{`{"cmd":"\"C:\\Program Files\\Oracle\\bin\\sqlplus.exe\" scott/tiger@db"}`, `{"cmd":"\"C:\\Program Files\\Oracle\\bin\\sqlplus.exe\" scott/***@db"}`},
		{`{"cmd":"\"C:\\oracle\\bin\\exp\" scott/tiger@db"}`, `{"cmd":"\"C:\\oracle\\bin\\exp\" scott/***@db"}`},
		{`cmd="\"C:\\app\\imp.exe\" system/manager@orcl full=y"`, `cmd="\"C:\\app\\imp.exe\" system/***@orcl full=y"`},
		// A quoted path in prose is not a command.
		{`{"msg":"see \"C:\\docs\\exp\" a/b"}`, `{"msg":"see \"C:\\docs\\exp\" a/b"}`},
		{`{"msg":"\"C:\\docs\\notes\" a/b@c"}`, `{"msg":"\"C:\\docs\\notes\" a/b@c"}`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// An account quoted with double quotes in SQL that JSON or %q quotes has its quotes
// escaped (create user \"a\"): it is the account of the statement as "a" is.
func TestRedactorStringSQLEscapedQuotedAccount(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`{"sql":"create user \"a\" identified by x1"}`, `{"sql":"create user \"a\" identified by ***"}`},
		{`{"sql":"create user \"a\" identified by x1, \"b\" identified by x2"}`, `{"sql":"create user \"a\" identified by ***, \"b\" identified by ***"}`},
		{`{"sql":"create user \"a\"@\"%\" identified by x1"}`, `{"sql":"create user \"a\"@\"%\" identified by ***"}`},
		{`{"sql":"set password for \"bob\"@\"%\" = x1"}`, `{"sql":"set password for \"bob\"@\"%\" = ***"}`},
		// Prose keeps its words.
		{`{"msg":"a node \"a\" identified by n1"}`, `{"msg":"a node \"a\" identified by n1"}`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// White space between a PASSWORD call's parenthesis and its argument, escaped as
// JSON writes it or not, is SQL's white space as between its words.
func TestRedactorStringPasswordCallSpace(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`{"sql":"update u set p = PASSWORD(\n'x1')"}`, `{"sql":"update u set p = PASSWORD(\n'***')"}`},
		{`{"sql":"update u set p = password(\t'x1')"}`, `{"sql":"update u set p = password(\t'***')"}`},
		{"update u set p = PASSWORD(\n  'x1')", "update u set p = PASSWORD(\n  '***')"},
		{`{"sql":"SET PASSWORD = PASSWORD(\n'x1')"}`, `{"sql":"SET PASSWORD = PASSWORD(\n'***')"}`},
		{`{"sql":"password=PASSWORD(\r\n'x1')"}`, `{"sql":"password=PASSWORD(\r\n'***')"}`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// GNU time is run by its path (/usr/bin/time -v, as the shell's time takes no -v):
// the command after it is a command as after time.
func TestRedactorStringLogonPrefixPath(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`/usr/bin/time -v exp scott/tiger@db`, `/usr/bin/time -v exp scott/***@db`},
		{`/usr/bin/time exp scott/tiger file=x.dmp`, `/usr/bin/time exp scott/*** file=x.dmp`},
		{`/usr/bin/sudo -u oracle imp scott/tiger@db`, `/usr/bin/sudo -u oracle imp scott/***@db`},
		{`/usr/bin/env ORACLE_SID=x exp scott/tiger@db`, `/usr/bin/env ORACLE_SID=x exp scott/***@db`},
		// Prose keeps its words.
		{`see /usr/bin/time exp a/b later`, `see /usr/bin/time exp a/b later`},
		{`docs/time exp a/b`, `docs/time exp a/b`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// Oracle double-quotes a password with special characters (IDENTIFIED BY "p w"): in
// a JSON string or a %q-quoted message its quotes are escaped (\"p w\"), and it is
// the same password. A doubled quote inside a quoted SQL password is one quote of it.
func TestRedactorStringSQLEscapedDoubleQuotedPassword(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`{"sql":"CREATE USER a IDENTIFIED BY \"pw\""}`, `{"sql":"CREATE USER a IDENTIFIED BY \"***\""}`},
		{`{"sql":"CREATE USER a IDENTIFIED BY \"p w\" ACCOUNT LOCK"}`, `{"sql":"CREATE USER a IDENTIFIED BY \"***\" ACCOUNT LOCK"}`},
		{`err="ALTER USER a IDENTIFIED BY \"p w\" REPLACE \"o w\""`, `err="ALTER USER a IDENTIFIED BY \"***\" REPLACE \"***\""`},
		{`{"sql":"create user a identified by \"p w\", b identified by x2"}`, `{"sql":"create user a identified by \"***\", b identified by ***"}`},
		{`{"sql":"UPDATE u SET p = PASSWORD(\"p w\")"}`, `{"sql":"UPDATE u SET p = PASSWORD(\"***\")"}`},
		{`{"sql":"SET PASSWORD FOR bob = PASSWORD(\"p w\")"}`, `{"sql":"SET PASSWORD FOR bob = PASSWORD(\"***\")"}`},
		{`CREATE USER a IDENTIFIED BY "x""y z", b IDENTIFIED BY x2`, `CREATE USER a IDENTIFIED BY "***", b IDENTIFIED BY ***`},
		{`create user a identified by 'x''y z', b identified by x2`, `create user a identified by '***', b identified by ***`},
		// Prose keeps its words: lower-case keywords take no double-quoted value.
		{`{"msg":"a node identified by \"its id\""}`, `{"msg":"a node identified by \"its id\""}`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// redis-cli's -a and --pass take their password after a tab as after a space, and
// JSON and %q write the tab escaped (\t), as before AUTH's.
func TestRedactorStringRedisCLIEscapedTab(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`{"cmd":"redis-cli\t-a\tpw1 ping"}`, `{"cmd":"redis-cli\t-a\t*** ping"}`},
		{`{"cmd":"redis-cli -a\tpw1 ping"}`, `{"cmd":"redis-cli -a\t*** ping"}`},
		{`{"cmd":"redis-cli -h h\t--pass\tpw1"}`, `{"cmd":"redis-cli -h h\t--pass\t***"}`},
		// Not redis-cli's flag, or no value after it.
		{`{"cmd":"ls\t-a\tdir"}`, `{"cmd":"ls\t-a\tdir"}`},
		{`{"cmd":"redis-cli\t-a\t-n 1"}`, `{"cmd":"redis-cli\t-a\t-n 1"}`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// A --flag of a sensitive key takes its value after a tab escaped (\t) as after a
// tab, as JSON and %q write a command line.
func TestRedactorStringFlagEscapedTab(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`{"cmd":"mysql --password\tpw1"}`, `{"cmd":"mysql --password\t***"}`},
		{`{"cmd":"mysql\t--password\tpw1\t-h db"}`, `{"cmd":"mysql\t--password\t***\t-h db"}`},
		{`{"cmd":"vault login --token\tt1"}`, `{"cmd":"vault login --token\t***"}`},
		// No value after the flag.
		{`{"cmd":"x --password\t--other"}`, `{"cmd":"x --password\t--other"}`},
		{`{"cmd":"x --password\\tpw1"}`, `{"cmd":"x --password\\tpw1"}`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}
