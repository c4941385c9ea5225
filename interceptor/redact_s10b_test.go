package interceptor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flowteam/flowteam/interceptor"
)

// An error message often quotes SQL as JSON or Go's %q write it, a line break or a
// tab in it as the two characters \n or \t: between SQL's words they separate them
// as the characters they stand for do.
func TestRedactorStringSQLEscapedSpace(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`{"sql":"create user a\nidentified by x1"}`, `{"sql":"create user a\nidentified by ***"}`},
		{`{"sql":"create user a identified by x1,\nb identified by x2"}`, `{"sql":"create user a identified by ***,\nb identified by ***"}`},
		{`{"sql":"create user a\tidentified by x1"}`, `{"sql":"create user a\tidentified by ***"}`},
		{`{"sql":"create user a\r\nidentified by x1,\r\n  b identified by x2"}`, `{"sql":"create user a\r\nidentified by ***,\r\n  b identified by ***"}`},
		{`{"sql":"create user a identified\nby x1"}`, `{"sql":"create user a identified\nby ***"}`},
		{`{"sql":"create user a identified by\nx1"}`, `{"sql":"create user a identified by\n***"}`},
		{`{"sql":"create\nuser\ta\nidentified\tby\nx1;"}`, `{"sql":"create\nuser\ta\nidentified\tby\n***;"}`},
		{`{"sql":"CREATE USER a\nIDENTIFIED BY x1\nDEFAULT TABLESPACE t"}`, `{"sql":"CREATE USER a\nIDENTIFIED BY ***\nDEFAULT TABLESPACE t"}`},
		{`{"sql":"alter user a identified by x1\nreplace o1"}`, `{"sql":"alter user a identified by ***\nreplace ***"}`},
		{`err="create user a\nidentified by x1"`, `err="create user a\nidentified by ***"`},
		{`{"sql":"set password\nfor bob = 'x1'"}`, `{"sql":"set password\nfor bob = '***'"}`},
		// A message that dropped the string's quotes keeps its escapes: the same SQL.
		{`sql=create user a\nidentified by x1`, `sql=create user a\nidentified by ***`},
		// Prose stays prose, escaped spaces or not; an escaped backslash before an n
		// (\\n, a path's C:\new) is no line break.
		{`{"msg":"a node\nidentified by n1"}`, `{"msg":"a node\nidentified by n1"}`},
		{`{"msg":"node\nidentified by its id"}`, `{"msg":"node\nidentified by its id"}`},
		{`{"path":"C:\\new\\identified by x"}`, `{"path":"C:\\new\\identified by x"}`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// A tab escaped (\t) before an Oracle logon separates it from the tool as a tab does:
// its 't' is not the first letter of the user.
func TestRedactorStringLogonEscapedTab(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`{"cmd":"exp\tscott/tiger@db"}`, `{"cmd":"exp\tscott/***@db"}`},
		{`{"cmd":"imp\tscott/tiger@db\tfull=y"}`, `{"cmd":"imp\tscott/***@db\tfull=y"}`},
		{`{"cmd":"exp\tscott/tiger\tfile=x.dmp"}`, `{"cmd":"exp\tscott/***\tfile=x.dmp"}`},
		{`{"cmd":"exp\tscott/tiger"}`, `{"cmd":"exp\tscott/***"}`},
		{`{"cmd":"exp scott/tiger\r\nexit"}`, `{"cmd":"exp scott/***\r\nexit"}`},
		{`{"cmd":"exp\tscott/tiger\n"}`, `{"cmd":"exp\tscott/***\n"}`},
		{`{"cmd":"sqlplus\tscott/tiger@db"}`, `{"cmd":"sqlplus\tscott/***@db"}`},
		{`{"cmd":"sqlplus\t-s\tscott/tiger@db"}`, `{"cmd":"sqlplus\t-s\tscott/***@db"}`},
		{`{"cmd":"expdp\tscott/tiger\tdirectory=d"}`, `{"cmd":"expdp\tscott/***\tdirectory=d"}`},
		{`{"log":"connect\ttarget sys/pw@db"}`, `{"log":"connect\ttarget sys/***@db"}`},
		{`{"log":"RMAN> connect\ttarget\tsys/pw@db"}`, `{"log":"RMAN> connect\ttarget\tsys/***@db"}`},
		{`{"log":"x\nconnect\ttarget sys/pw@db"}`, `{"log":"x\nconnect\ttarget sys/***@db"}`},
		{`{"log":"run\nexp\tscott/tiger@db"}`, `{"log":"run\nexp\tscott/***@db"}`},
		// Not a logon: a tab before a path, exp as a word of prose.
		{`{"p":"dir\ttmp/x"}`, `{"p":"dir\ttmp/x"}`},
		{`{"msg":"the exp\ta/b ratio"}`, `{"msg":"the exp\ta/b ratio"}`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// A command run through sudo, nohup, env (its VAR=value assignments between) or time,
// or by its path on Windows (C:\oracle\bin\exp.exe), is that command: exp and imp
// there are command words, and take a logon as they do at the start of a line.
func TestRedactorStringLogonCommandPrefix(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`sudo exp scott/tiger@db file=x.dmp`, `sudo exp scott/***@db file=x.dmp`},
		{`sudo -u oracle exp scott/tiger@db file=x.dmp`, `sudo -u oracle exp scott/***@db file=x.dmp`},
		{`nohup imp system/manager@orcl full=y &`, `nohup imp system/***@orcl full=y &`},
		{`env ORACLE_SID=x sqlplus scott/tiger@db`, `env ORACLE_SID=x sqlplus scott/***@db`},
		{`env ORACLE_SID=x exp scott/tiger@db`, `env ORACLE_SID=x exp scott/***@db`},
		{`ORACLE_SID=x exp scott/tiger@db`, `ORACLE_SID=x exp scott/***@db`},
		{`time expdp scott/tiger@db directory=d`, `time expdp scott/***@db directory=d`},
		{`time exp scott/tiger@db file=x.dmp`, `time exp scott/***@db file=x.dmp`},
		{`$ sudo nohup exp scott/tiger@db &`, `$ sudo nohup exp scott/***@db &`},
		{`C:\oracle\bin\exp.exe scott/tiger@db`, `C:\oracle\bin\exp.exe scott/***@db`},
		{`C:\oracle\bin\exp scott/tiger@db file=x.dmp`, `C:\oracle\bin\exp scott/***@db file=x.dmp`},
		{`C:\oracle\bin\imp.EXE scott/tiger@db`, `C:\oracle\bin\imp.EXE scott/***@db`},
		{`C:\oracle\bin\sqlplus.exe scott/tiger@db`, `C:\oracle\bin\sqlplus.exe scott/***@db`},
		{`C:\oracle\bin\sqlplus scott/tiger@db`, `C:\oracle\bin\sqlplus scott/***@db`},
		// Prose keeps its words.
		{`sudo make me a sandwich`, `sudo make me a sandwich`},
		{`time exp a/b`, `time exp a/b`},
		{`it is time exp a/b went up`, `it is time exp a/b went up`},
		{`exp 2/3`, `exp 2/3`},
		{`sudo exp 2/3`, `sudo exp 2/3`},
		{`run it with sudo exp a/b later`, `run it with sudo exp a/b later`},
		{`C:\data\exp\a/b`, `C:\data\exp\a/b`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// A Windows path with a space (C:\Program Files) is quoted on a command line: the
// tool at the end of a quoted path takes a logon as it does unquoted, exp and imp
// where the opening quote starts the command.
func TestRedactorStringLogonQuotedWindowsPath(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`"C:\oracle\bin\exp.exe" scott/tiger@db`, `"C:\oracle\bin\exp.exe" scott/***@db`},
		{`"C:\Program Files\Oracle\bin\sqlplus.exe" scott/tiger@db`, `"C:\Program Files\Oracle\bin\sqlplus.exe" scott/***@db`},
		{`& "C:\app\bin\imp.exe" system/manager@orcl full=y`, `& "C:\app\bin\imp.exe" system/***@orcl full=y`},
		{`'/u01/app/oracle/bin/expdp' scott/tiger@db`, `'/u01/app/oracle/bin/expdp' scott/***@db`},
		// A quoted path in prose, or a quoted word with no path: not a command.
		{`see "C:\docs\exp" a/b`, `see "C:\docs\exp" a/b`},
		{`"exp" a/b`, `"exp" a/b`},
		{`"C:\docs\notes" a/b@c`, `"C:\docs\notes" a/b@c`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// Left as it is by design: upper-case AUTH with one argument is a password.
func TestRedactorStringS10bUnchanged(t *testing.T) {
	r := interceptor.NewRedactor()
	assert.Equal(t, `{"msg":"AUTH ***"}`, r.String(`{"msg":"AUTH OK"}`))
}
