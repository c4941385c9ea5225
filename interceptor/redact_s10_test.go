package interceptor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flowteam/flowteam/interceptor"
)

// A log line kept as a JSON string ({"log":"AUTH pw"}) or quoted in a message holds
// a Redis AUTH command as much as a line does: a quoted string that is itself the
// command masks its password, with the strictness of a line (an "auth" not in upper
// case takes an argument that is not letters only, and starts the string). Prose in
// a string, and a string that goes on after the command, stay.
func TestRedactorStringRedisAuthInString(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`{"log":"AUTH hunter2"}`, `{"log":"AUTH ***"}`},
		{`{"log":"AUTH default hunter2"}`, `{"log":"AUTH default ***"}`},
		{`{"log":"auth hunter2"}`, `{"log":"auth ***"}`},
		{`{"n":1, "log": "AUTH bob hunter2", "t":2}`, `{"n":1, "log": "AUTH bob ***", "t":2}`},
		{`{"a":"AUTH x1","b":"AUTH x2"}`, `{"a":"AUTH ***","b":"AUTH ***"}`},
		{`["PING", "AUTH hunter2"]`, `["PING", "AUTH ***"]`},
		{`["AUTH hunter2"]`, `["AUTH ***"]`},
		{`{"AUTH hunter2"}`, `{"AUTH ***"}`},
		{`redis said "AUTH hunter2": WRONGPASS`, `redis said "AUTH ***": WRONGPASS`},
		{`cmd='AUTH hunter2' failed`, `cmd='AUTH ***' failed`},
		{`msg="{\"log\":\"AUTH hunter2\"}"`, `msg="{\"log\":\"AUTH ***\"}"`},
		{`{"log":"AUTH hunter2\nGET k"}`, `{"log":"AUTH ***\nGET k"}`},
		{`{"log":"AUTH \"my pass\""}`, `{"log":"AUTH \"***\""}`},
		// Prose, or more than a command, in a string: nothing to mask.
		{`{"msg":"auth failed for user bob"}`, `{"msg":"auth failed for user bob"}`},
		{`{"msg":"auth failed"}`, `{"msg":"auth failed"}`},
		{`{"scope":"auth openid"}`, `{"scope":"auth openid"}`},
		{`{"msg":"OAuth token refresh"}`, `{"msg":"OAuth token refresh"}`},
		{`OAuth token refresh`, `OAuth token refresh`},
		{`{"msg":" auth x1"}`, `{"msg":" auth x1"}`},
		{`{"msg":"AUTH hunter2 failed for user bob"}`, `{"msg":"AUTH hunter2 failed for user bob"}`},
		{`{"msg":"the AUTH x1"}`, `{"msg":"the AUTH x1"}`},
		{`t.Fatalf("AUTH failed: %s", err)`, `t.Fatalf("AUTH failed: %s", err)`},
		{"AUTH failed: timeout", "AUTH failed: timeout"},
		{`{"msg":"AUTH x1`, `{"msg":"AUTH x1`},
		{`it's "auth" x1`, `it's "auth" x1`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
	assert.Equal(t, `{"log":"AUTH hunter2"}`, interceptor.NewRedactorKeys("token").String(`{"log":"AUTH hunter2"}`))
}

// CREATE USER and ALTER USER take a list of accounts, each with its own IDENTIFIED BY
// clause (create user a identified by x1, b identified by x2): every clause of the
// list is in the statement, and masks its password as the first does. A list that
// does not start with CREATE USER or ALTER USER is prose, its later clauses too.
func TestRedactorStringSQLUserList(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`create user a identified by x1, b identified by x2`, `create user a identified by ***, b identified by ***`},
		{`CREATE USER a IDENTIFIED BY x1, b IDENTIFIED BY x2`, `CREATE USER a IDENTIFIED BY ***, b IDENTIFIED BY ***`},
		{`alter user a identified by x1, b identified by x2;`, `alter user a identified by ***, b identified by ***;`},
		{`create user a identified by 'x 1', b identified by 'x2'`, `create user a identified by '***', b identified by '***'`},
		{`create user a identified by "x1", b identified by "x2"`, `create user a identified by "***", b identified by "***"`},
		{`create user 'a'@'%' identified by x1, 'b'@'%' identified by x2, c@localhost identified by x3`,
			`create user 'a'@'%' identified by ***, 'b'@'%' identified by ***, c@localhost identified by ***`},
		{`create user a identified with caching_sha2_password by x1, b identified with mysql_native_password by x2`,
			`create user a identified with caching_sha2_password by ***, b identified with mysql_native_password by ***`},
		{`alter user a identified by n1 replace o1, b identified by n2 replace o2`, `alter user a identified by *** replace ***, b identified by *** replace ***`},
		{`create user a identified by random password, b identified by x2`, `create user a identified by random password, b identified by ***`},
		{`alter user a identified by x1 retain current password, b identified by x2`, `alter user a identified by *** retain current password, b identified by ***`},
		{"create user a identified by x1,\n  b identified by x2", "create user a identified by ***,\n  b identified by ***"},
		{`create user a identified by x1, c, b identified by x2`, `create user a identified by ***, c, b identified by ***`},
		{`create user a identified by x1, c identified externally, d identified by x4`, `create user a identified by ***, c identified externally, d identified by ***`},
		{`CREATE USER a IDENTIFIED BY x1, b identified by x2`, `CREATE USER a IDENTIFIED BY ***, b identified by ***`},
		// Not a user statement: prose keeps its words.
		{`a node identified by n1, b identified by n2`, `a node identified by n1, b identified by n2`},
		{`create user a identified by x1; b identified by x2`, `create user a identified by ***; b identified by x2`},
		{`create user a identified by x1, and then b identified by x2`, `create user a identified by ***, and then b identified by x2`},
		{`create user a identified by x1, and then, b identified by x2`, `create user a identified by ***, and then, b identified by x2`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// Oracle's classic export and import tools, exp and imp, take a logon as their first
// argument (exp scott/tiger@db file=x.dmp). As words they are abbreviations too (exp
// for an exponent, imp for an implementation), so they take one only as a command:
// the first word of a line, of a quoted command or after a shell prompt or operator,
// maybe with a path (/u01/app/oracle/bin/exp), and the logon ends at its connect
// identifier, its line, its quote, or a parameter (file=x.dmp) after it.
func TestRedactorStringOracleExpImp(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`exp scott/tiger@db file=x.dmp`, `exp scott/***@db file=x.dmp`},
		{`imp system/manager@orcl full=y`, `imp system/***@orcl full=y`},
		{`exp scott/tiger file=x.dmp owner=scott`, `exp scott/*** file=x.dmp owner=scott`},
		{`imp scott/tiger`, `imp scott/***`},
		{`EXP scott/tiger@db`, `EXP scott/***@db`},
		{`exec: "exp scott/tiger@db file=x.dmp": exit status 1`, `exec: "exp scott/***@db file=x.dmp": exit status 1`},
		{`$ exp scott/tiger@db`, `$ exp scott/***@db`},
		{`run: imp scott/tiger@db full=y: exit status 1`, `run: imp scott/***@db full=y: exit status 1`},
		{`/u01/app/oracle/product/19c/bin/imp system/manager@orcl full=y`, `/u01/app/oracle/product/19c/bin/imp system/***@orcl full=y`},
		{`$ORACLE_HOME/bin/exp scott/tiger@db`, `$ORACLE_HOME/bin/exp scott/***@db`},
		{`cd /tmp && exp scott/tiger@db`, `cd /tmp && exp scott/***@db`},
		{`exp.exe scott/tiger@db`, `exp.exe scott/***@db`},
		{"PING\n  imp sys/pw@db", "PING\n  imp sys/***@db"},
		// Not a command, or no logon after it: nothing to mask.
		{`exp(2)`, `exp(2)`},
		{`exp 2/3`, `exp 2/3`},
		{`x exp y`, `x exp y`},
		{`compute x exp a/b@c`, `compute x exp a/b@c`},
		{`if a > exp a/b@c`, `if a > exp a/b@c`},
		{`the imp scott/tiger@db`, `the imp scott/tiger@db`},
		{`export scott/tiger@db`, `export scott/tiger@db`},
		{`myexp scott/tiger@db`, `myexp scott/tiger@db`},
		{`exp docs/readme and more`, `exp docs/readme and more`},
		{`imp pkg/errors via go.mod`, `imp pkg/errors via go.mod`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// RMAN takes a logon after its TARGET, CATALOG and AUXILIARY keywords, on its command
// line (rman target sys/pw@db) and in its own CONNECT command (connect target
// sys/pw@db), which RMAN's scripts and logs show with no "rman" before it. CONNECT is
// then the first word of the command, and the logon ends as CONNECT's does.
func TestRedactorStringRMANLogon(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		// Masked before this test was written, kept so.
		{`rman target sys/pw@db`, `rman target sys/***@db`},
		{`RMAN TARGET sys/pw`, `RMAN TARGET sys/***`},
		{`rman catalog a/b@cat`, `rman catalog a/***@cat`},
		{`rman target / catalog rco/pw@cat`, `rman target / catalog rco/***@cat`},
		{`RMAN> connect target sys/pw@db`, `RMAN> connect target sys/***@db`},
		// RMAN's CONNECT with no "rman" on its line.
		{`connect target sys/pw@db`, `connect target sys/***@db`},
		{`CONNECT TARGET sys/pw`, `CONNECT TARGET sys/***`},
		{`CONNECT CATALOG rco/pw@cat;`, `CONNECT CATALOG rco/***@cat;`},
		{"run {\n  connect auxiliary sys/pw@aux\n}", "run {\n  connect auxiliary sys/***@aux\n}"},
		{`exec: "connect target sys/pw@db": failed`, `exec: "connect target sys/***@db": failed`},
		// Prose: nothing to mask.
		{`build target app/server@v2`, `build target app/server@v2`},
		{`could not connect target app/server@v2`, `could not connect target app/server@v2`},
		{`connect target a/b then c`, `connect target a/b then c`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// An unquoted value ends at a '>' only inside a start tag: a '<' that follows a
// letter, a digit, '_' or a closing bracket compares two operands (a<b, len(x)<3),
// as does one before a name that does not start with a letter or '_' (x <10), and
// starts no tag, so a '>' after a value further on is part of the value.
func TestRedactorStringComparisonIsNoTag(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`a<b and password=x>y`, `a<b and password=***`},
		{`n<10 and password=x>y rest`, `n<10 and password=*** rest`},
		{`len(a)<b token=x>y`, `len(a)<b token=***`},
		{`a[0]<b token=x>y`, `a[0]<b token=***`},
		{`x <10 and password=x>y`, `x <10 and password=***`},
		// A tag: the value ends at its '>'.
		{`<input password=x>y`, `<input password=***>y`},
		{`a <input password=x>y`, `a <input password=***>y`},
		{`<p><input password=x>y`, `<p><input password=***>y`},
		{`msg=<input password=x>y`, `msg=<input password=***>y`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// A tab between AUTH and its arguments is a blank in a quoted string too, where JSON
// and Go's %q write it escaped (\t), as they write the line breaks that end the command.
func TestRedactorStringRedisAuthEscapedTab(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`{"log":"AUTH\thunter2"}`, `{"log":"AUTH\t***"}`},
		{`{"log":"AUTH\tdefault\thunter2"}`, `{"log":"AUTH\tdefault\t***"}`},
		{`msg="AUTH \thunter2"`, `msg="AUTH \t***"`},
		{`{"log":"auth\thunter2"}`, `{"log":"auth\t***"}`},
		{`{"msg":"auth\tfailed"}`, `{"msg":"auth\tfailed"}`},
		{`{"msg":"AUTH\tfailed:\t%s"}`, `{"msg":"AUTH\tfailed:\t%s"}`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// exp and imp are shell commands: a logon they take ends before a redirection, a
// pipe, a list operator or a comment of the shell as it ends before a parameter.
func TestRedactorStringOracleExpImpShell(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`exp scott/tiger > exp.log`, `exp scott/*** > exp.log`},
		{`exp scott/tiger >exp.log 2>&1`, `exp scott/*** >exp.log 2>&1`},
		{`exp scott/tiger 2>&1 | tee exp.log`, `exp scott/*** 2>&1 | tee exp.log`},
		{`imp scott/tiger < answers.txt`, `imp scott/*** < answers.txt`},
		{`imp scott/tiger && echo ok`, `imp scott/*** && echo ok`},
		{`imp scott/tiger || exit 1`, `imp scott/*** || exit 1`},
		{`exp scott/tiger | gzip`, `exp scott/*** | gzip`},
		{`exp scott/tiger & wait`, `exp scott/*** & wait`},
		{`exp scott/tiger # nightly`, `exp scott/*** # nightly`},
		{`(exp scott/tiger)`, `(exp scott/***)`},
		// Prose and arithmetic keep their words.
		{`exp ratio/total was high`, `exp ratio/total was high`},
		{`x exp a/b > c`, `x exp a/b > c`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}
