package interceptor_test

import (
	"strings"
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
		{`<input x-token=a name=password value=x> Remember me`, `<input x-token=*** name=password value=***> Remember me`},
		// Not in a tag: the '>' is part of the value.
		{`password=a>b rest`, `password=*** rest`},
		{`x > 1 and password=a>b`, `x > 1 and password=***`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// An HTML void element (<input>, <meta>, <img>...) has no text: what follows the tag
// of a field named by a sensitive key is a label or other markup, not its value. An
// element that has text (<param name="token">x</param>) keeps its text masked.
func TestRedactorStringVoidElementText(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`<input name="password"> Remember me`, `<input name="password"> Remember me`},
		{`<label><input name="password"> Remember me</label>`, `<label><input name="password"> Remember me</label>`},
		{`<INPUT NAME="api_key">key</INPUT>`, `<INPUT NAME="api_key">key</INPUT>`},
		{`<img name="token" src="a.png"> caption`, `<img name="token" src="a.png"> caption`},
		{`<html:input name="password"> Remember me`, `<html:input name="password"> Remember me`},
		// Elements with text: the text is the value.
		{`<param name="token">abc</param>`, `<param name="token">***</param>`},
		{`<inputs name="token">abc</inputs>`, `<inputs name="token">***</inputs>`},
		{`<entry key="db.password">hunter2</entry>`, `<entry key="db.password">***</entry>`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// MySQL quotes an account name that holds a space or another special character
// ('my user'@'%'): SET PASSWORD FOR such an account masks its password as for any
// other. A quote with no opening one before it is not an account.
func TestRedactorStringSetPasswordQuotedAccount(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`SET PASSWORD FOR 'my user'@'%' = 'x'`, `SET PASSWORD FOR 'my user'@'%' = '***'`},
		{`SET PASSWORD FOR 'my user'@'my host' = PASSWORD('x')`, `SET PASSWORD FOR 'my user'@'my host' = PASSWORD('***')`},
		{"SET PASSWORD FOR `app user`@`10.0.0.%` = 'x'", "SET PASSWORD FOR `app user`@`10.0.0.%` = '***'"},
		{`SET PASSWORD FOR "my user" = 'x';`, `SET PASSWORD FOR "my user" = '***';`},
		{`set password for 'a b'@'%' = 'x'`, `set password for 'a b'@'%' = '***'`},
		{`q=SET+PASSWORD+FOR+%27my+user%27%40%27%25%27+%3D+%27x%27`, `q=SET+PASSWORD+FOR+%27my+user%27%40%27%25%27+%3D+%27***%27`},
		// Not SET PASSWORD FOR an account.
		{`SET mode FOR 'my user' = 'x'`, `SET mode FOR 'my user' = 'x'`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// SQL is case-insensitive: in a CREATE USER or ALTER USER statement written in lower
// case, IDENTIFIED BY takes a bare password as in upper case. Outside such a statement
// lower-case keywords still take only a quoted one, as prose says "identified by its
// id".
func TestRedactorStringSQLLowerCaseBare(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`create user bob identified by hunter2`, `create user bob identified by ***`},
		{`alter user bob identified by hunter2;`, `alter user bob identified by ***;`},
		{`Create User bob Identified By hunter2 account lock`, `Create User bob Identified By *** account lock`},
		{`create user if not exists 'bob'@'%' identified by hunter2`, `create user if not exists 'bob'@'%' identified by ***`},
		{`alter user if exists "my user" identified by hunter2`, `alter user if exists "my user" identified by ***`},
		{`create user bob identified with mysql_native_password by hunter2`, `create user bob identified with mysql_native_password by ***`},
		{`create user bob identified by values S:ABC`, `create user bob identified by values ***`},
		{`alter user bob identified by new1 replace old1`, `alter user bob identified by *** replace ***`},
		{"create user bob\n  identified by hunter2", "create user bob\n  identified by ***"},
		{`q=create+user+bob+identified+by+hunter2&page=2`, `q=create+user+bob+identified+by+***&page=2`},
		// No password, or no user statement: nothing to mask.
		{`create user bob identified by random password`, `create user bob identified by random password`},
		{`create user bob identified externally`, `create user bob identified externally`},
		{`a node identified by its id`, `a node identified by its id`},
		{`the user account identified by its id`, `the user account identified by its id`},
		{`a user bob identified by his email`, `a user bob identified by his email`},
		{`to create users identified by email`, `to create users identified by email`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// Redis takes a password as the argument of its AUTH command (AUTH pw, AUTH user pw)
// and of redis-cli's -a and --pass flags. AUTH is a command, not a word of prose,
// where it starts a line (or follows a redis-cli prompt) with one or two arguments
// that end the line: its last argument is masked. An "auth" not in upper case and
// with no prompt must start its line unindented (code indents a field "auth
// []string"), and an argument of letters only reads as prose ("auth failed", "auth
// token expired") and stays.
func TestRedactorStringRedisAuth(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`AUTH hunter2`, `AUTH ***`},
		{`auth hunter2`, `auth ***`},
		{`AUTH default hunter2`, `AUTH default ***`},
		{`auth default hunter2`, `auth default ***`},
		{`AUTH secret`, `AUTH ***`},
		{"PING\nAUTH hunter2\r\nGET k", "PING\nAUTH ***\r\nGET k"},
		{"  AUTH \"my pass\"", "  AUTH \"***\""},
		{`127.0.0.1:6379> auth hunter2`, `127.0.0.1:6379> auth ***`},
		{`127.0.0.1:6379[2]> AUTH bob secret`, `127.0.0.1:6379[2]> AUTH bob ***`},
		{`redis> auth secret`, `redis> auth ***`},
		{`redis-cli -a hunter2 ping`, `redis-cli -a *** ping`},
		{`exec: "redis-cli -h db -p 6379 -a hunter2 --no-auth-warning ping": exit status 1`, `exec: "redis-cli -h db -p 6379 -a *** --no-auth-warning ping": exit status 1`},
		{`redis-cli --user bob --pass hunter2 info`, `redis-cli --user bob --pass *** info`},
		// A line break escaped (JSON, %q) ends the command's line as one does.
		{`AUTH hunter2\nGET k`, `AUTH ***\nGET k`},
		{`"auth default hunter2\r\nPING"`, `"auth default ***\r\nPING"`},
		{`"AUTH hunter2": WRONGPASS`, `"AUTH ***": WRONGPASS`},
		// Prose, and -a of other commands: nothing to mask.
		{`auth failed for user bob`, `auth failed for user bob`},
		{`auth token expired`, `auth token expired`},
		{`auth failed`, `auth failed`},
		{`Auth required`, `Auth required`},
		{`the auth hunter2 step`, `the auth hunter2 step`},
		{`AUTH hunter2 failed for user bob`, `AUTH hunter2 failed for user bob`},
		{`ls -a hunter2`, `ls -a hunter2`},
		{"type client struct {\n\tauth     []string\n}", "type client struct {\n\tauth     []string\n}"},
		{"  auth *Config", "  auth *Config"},
		{"redis-cli ping\nls -a x", "redis-cli ping\nls -a x"},
		{`git commit -a -m x`, `git commit -a -m x`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// A command's password is the value of the key "password", as a URL's is: a Redactor
// without it leaves AUTH alone.
func TestRedactorStringRedisAuthNeedsPasswordKey(t *testing.T) {
	r := interceptor.NewRedactorKeys("token")
	for _, s := range []string{`AUTH hunter2`, `redis-cli -a hunter2 ping`} {
		assert.Equal(t, s, r.String(s))
	}
	assert.Equal(t, `redis-cli x-a hunter2`, interceptor.NewRedactor().String(`redis-cli x-a hunter2`))
}

// Oracle's tools take a logon as user/password[@connect_identifier]: its password is
// masked where an Oracle tool or SQL*Plus's CONNECT takes it (sqlplus, connect, conn,
// expdp, impdp, sqlldr, dgmgrl, rman's target and catalog, a userid= parameter), with
// the tool's flags between. Elsewhere user/x@host is a path, a
// package or a module, and stays.
func TestRedactorStringOracleLogon(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`sqlplus scott/tiger@db`, `sqlplus scott/***@db`},
		{`sqlplus scott/tiger@//host:1521/svc`, `sqlplus scott/***@//host:1521/svc`},
		{`exec: "sqlplus -s -L scott/tiger@db @run.sql": exit status 1`, `exec: "sqlplus -s -L scott/***@db @run.sql": exit status 1`},
		{`/opt/oracle/bin/sqlplus scott/tiger`, `/opt/oracle/bin/sqlplus scott/***`},
		{`SQL> CONNECT scott/tiger@db AS SYSDBA`, `SQL> CONNECT scott/***@db AS SYSDBA`},
		{`conn sys/"p@ss w"@db as sysdba`, `conn sys/"***"@db as sysdba`},
		{"expdp system/manager@orcl directory=d dumpfile=x.dmp", "expdp system/***@orcl directory=d dumpfile=x.dmp"},
		{"sqlldr userid=scott/tiger@db control=x.ctl", "sqlldr userid=scott/***@db control=x.ctl"},
		{"rman target sys/pw1@prod catalog rman/pw2@cat", "rman target sys/***@prod catalog rman/***@cat"},
		{`sqlplus 'scott/tiger@db'`, `sqlplus 'scott/***@db'`},
		{`sqlplus c##admin/pw$1@cdb`, `sqlplus c##admin/***@cdb`},
		{`RMAN> connect target sys/pw@prod`, `RMAN> connect target sys/***@prod`},
		// Paths, packages, modules, addresses: nothing to mask.
		{`scott/tiger@db`, `scott/tiger@db`},
		{`see https://example.com/a/b@c`, `see https://example.com/a/b@c`},
		{`git@github.com:org/repo.git`, `git@github.com:org/repo.git`},
		{`npm install @scope/pkg@1.2.3`, `npm install @scope/pkg@1.2.3`},
		{`mail user@example.com/path`, `mail user@example.com/path`},
		{`go get example.com/mod@v1.2.3`, `go get example.com/mod@v1.2.3`},
		{`connect to db/primary@east failed`, `connect to db/primary@east failed`},
		{`sqlplus / as sysdba`, `sqlplus / as sysdba`},
		{`sqlplus /nolog`, `sqlplus /nolog`},
		{`build target app/server@v2`, `build target app/server@v2`},
		{`could not connect: a/b@c`, `could not connect: a/b@c`},
		{`exp 2/3`, `exp 2/3`},
		{`connect I/O with pipes`, `connect I/O with pipes`},
		{`//go:cgo_import_dynamic libc_connect connect "libc.a/shr_64.o"`, `//go:cgo_import_dynamic libc_connect connect "libc.a/shr_64.o"`},
		{"SQL> connect scott/tiger\nConnected.", "SQL> connect scott/***\nConnected."},
		{"connect scott/tiger;", "connect scott/***;"},
		{`exec: "connect scott/tiger": failed`, `exec: "connect scott/***": failed`},
		{`connect 10.0.0.1/24@x`, `connect 10.0.0.1/24@x`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// BenchmarkRedactStringCommandFlags redacts a long command line of redis-cli -a flags
// and RMAN logons: each must not search the line before it for its command again
// (55 ms for 100 KB when each looked 512 bytes back).
func BenchmarkRedactStringCommandFlags(b *testing.B) {
	r := interceptor.NewRedactor()
	msg := "redis-cli " + strings.Repeat("-a x ", 10000) + "rman " + strings.Repeat("target a/b ", 5000)
	b.ReportAllocs()
	for b.Loop() {
		_ = r.String(msg)
	}
}

// SET PASSWORD [FOR account] = pw is SQL in any case, as "set password = pw" is a
// key and its value: in lower case too, a bare or double-quoted password is masked.
func TestRedactorStringSetPasswordLowerCase(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`set password for bob = hunter2`, `set password for bob = ***`},
		{`set password for bob = "hunter2"`, `set password for bob = "***"`},
		{`set password for 'bob'@'%' = hunter2 replace old1`, `set password for 'bob'@'%' = *** replace ***`},
		{`set password = hunter2`, `set password = ***`},
		// Not SET PASSWORD.
		{`reset password for bob = done`, `reset password for bob = done`},
		{`set mode for bob = fast`, `set mode for bob = fast`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// An HTML <meta> element holds the value its name announces in its content attribute
// (Rails' <meta name="csrf-token" content="...">): the content is masked as a value
// member is. Elsewhere a content member is no value of a name member.
func TestRedactorStringMetaContent(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`<meta name="csrf-token" content="abc">`, `<meta name="csrf-token" content="***">`},
		{`<meta content="abc" name="csrf-token"> text`, `<meta content="***" name="csrf-token"> text`},
		{`<META NAME="api-key" CONTENT='k-1'/>`, `<META NAME="api-key" CONTENT='***'/>`},
		{`<meta x-token="a" name="csrf-token" content="b">`, `<meta x-token="***" name="csrf-token" content="***">`},
		{`<input value="x" name="password"> Remember me`, `<input value="***" name="password"> Remember me`},
		// Not a sensitive name, or not a <meta>: nothing to mask.
		{`<meta name="viewport" content="width=device-width">`, `<meta name="viewport" content="width=device-width">`},
		{`{"name":"get_token","content":"ok"}`, `{"name":"get_token","content":"ok"}`},
		{`<p name="token" content="x">`, `<p name="token" content="x">`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}
