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
