package interceptor

import "strings"

// Some commands take a password with no key before it: Redis's AUTH pw and AUTH user
// pw, and redis-cli's -a pw and --pass pw. AUTH is a word of prose too ("auth failed
// for user bob", "auth token expired"): it is read as the command only where Redis
// takes one, as the first word of a line (or of a quoted message that starts one, or
// after a redis-cli prompt, "127.0.0.1:6379> "), or as the first word of a quoted
// string anywhere on a line ({"log":"AUTH pw"}), followed by one or two arguments
// that end the line (or the string, or come before an escaped line break). Prose
// rarely writes AUTH in upper case, nor a prompt; "auth" in other case with no
// prompt must start its line unindented (code indents a field "auth []string"), and
// an argument of letters only ("auth failed", "auth token expired") reads as prose,
// one with another character (a digit, a symbol) as a password. In any case, a
// first of two arguments that ends in ':' is a message's label ("AUTH failed: %s"),
// not a user.

// authFinder finds the passwords of Redis AUTH commands that are lines of a text
// (see authCommand), line by line; the scanner finds those in quoted strings as it
// comes to their quotes (see quotedAuth). The lines are looked at once, in order,
// as the scanner asks for values further on: redaction stays linear.
type authFinder struct {
	line     int // where the first line not looked at yet starts
	at, end  int // the bounds of the password found last; at is -1 if none
	quote    string
	searched bool
}

// next returns the bounds of the password of the next AUTH command that starts at or
// after s[from], and its quote; start is -1 if there is none. from must not go back
// between calls.
func (f *authFinder) next(s string, from int) (start, end int, quote string) {
	if f.searched && (f.at < 0 || f.at >= from) {
		return f.at, f.end, f.quote
	}
	f.searched = true
	for f.line <= len(s) {
		ls := f.line
		le := len(s)
		if k := strings.IndexByte(s[ls:], '\n'); k >= 0 {
			le = ls + k
		}
		f.line = le + 1
		if vs, ve, q := authCommand(s, ls, le); vs >= from {
			f.at, f.end, f.quote = vs, ve, q
			return vs, ve, q
		}
	}
	f.at = -1
	return -1, -1, ""
}

// authCommand returns the bounds of the password, with its quotes, and its quote, of
// the AUTH command on the line s[ls:le], if the line is one; start is -1 otherwise.
func authCommand(s string, ls, le int) (start, end int, quote string) {
	if le > ls && s[le-1] == '\r' {
		le--
	}
	i := skipBlanks(s, ls, le)
	indented := i > ls
	if i < le && (s[i] == '"' || s[i] == '\'') {
		// A quoted message that starts with the command: its quote ends the line.
		if k := strings.IndexByte(s[i+1:le], s[i]); k >= 0 {
			le = i + 1 + k
		}
		i++
	}
	prompt := false
	if i < le && s[i]|0x20 != 'a' {
		// Not AUTH (the common case, cheaply), unless after a redis-cli prompt, a word
		// that ends in '>': host:port>, redis>.
		k := strings.IndexByte(s[i:le], '>')
		if k <= 0 || i+k+1 == le || !isBlank(s[i+k+1]) || strings.IndexAny(s[i:i+k], " \t") >= 0 {
			return -1, -1, ""
		}
		prompt, i = true, skipBlanks(s, i+k+1, le)
	}
	return authArgs(s, i, le, indented, prompt)
}

// quotedAuth returns the bounds of the password, with its quotes, and its quote, of
// the AUTH command that is the quoted string whose opening quote is at s[q]: "AUTH
// pw", 'AUTH user pw' or, in JSON inside a quoted message, \"AUTH pw\", the command
// right after the opening quote (not indented) and its arguments ending at the
// closing quote on the same line (or an escaped line break before it), which no
// letter or digit follows. An opening quote does not follow a letter or a digit
// (it's). start is -1 if the string is not such a command.
func quotedAuth(s string, q int) (start, end int, quote string) {
	if len(s)-q < len(`"AUTH x"`) || s[q+1]|0x20 != 'a' || !isKeyword(s[q+1:q+5], "AUTH") || argBlank(s, q+5, len(s)) == 0 {
		return -1, -1, ""
	}
	open, o := s[q:q+1], q
	if q > 0 && s[q-1] == '\\' && s[q] == '"' {
		open, o = `\"`, q-1
	}
	if o > 0 && isAlnum(s[o-1]) {
		return -1, -1, ""
	}
	// The closing quote is looked for first, and the line's end only up to it: a
	// line of many such strings is not searched to its end from each of them.
	c := closingQuote(s, q+5, len(s), open)
	if c < 0 || strings.IndexByte(s[q:c], '\n') >= 0 || c+len(open) < len(s) && isAlnum(s[c+len(open)]) {
		return -1, -1, "" // unclosed on its line, or more of a word after it: not a string
	}
	return authArgs(s, q+1, c, false, false)
}

// quotesAuth reports whether a quote in s is followed by AUTH and a blank, which
// may start a quoted AUTH command (see quotedAuth): text with no separator may hold
// one (["AUTH pw"]).
func quotesAuth(s string) bool {
	for i := 0; i < len(s); i++ {
		k := strings.IndexAny(s[i:], `"'`)
		if k < 0 {
			return false
		}
		i += k
		if len(s)-i > len(`"AUTH `) && isKeyword(s[i+1:i+5], "AUTH") && argBlank(s, i+5, len(s)) > 0 {
			return true
		}
	}
	return false
}

// closingQuote returns where the quote open (", ' or \") that closes a string ends
// its content, looked for from s[i] to s[le]; -1 if it is not there. A '"' escaped
// (\") is part of a double-quoted string. Its callers look from one opening quote
// of a kind to the next of that kind: together, they look at a text a few times at
// most.
func closingQuote(s string, i, le int, open string) int {
	for i < le {
		c := strings.Index(s[i:le], open)
		if c < 0 {
			return -1
		}
		c += i
		if open != `"` || s[c-1] != '\\' {
			return c
		}
		i = c + 1
	}
	return -1
}

// authArgs returns the bounds of the password, with its quotes, and its quote, of
// the AUTH command at s[i] whose line (or quoted string) ends at s[le]; start is -1
// if it is not one. The line was indented before the command, or had a prompt.
func authArgs(s string, i, le int, indented, prompt bool) (start, end int, quote string) {
	if le-i < len("AUTH x") || !isKeyword(s[i:i+4], "AUTH") || argBlank(s, i+4, le) == 0 {
		return -1, -1, ""
	}
	upper := s[i:i+4] == "AUTH"
	for _, br := range [...]string{`\n`, `\r`} {
		// A line break escaped (JSON, Go's %q) ends the line as one does.
		if k := strings.Index(s[i:le], br); k >= 0 {
			le = i + k
		}
	}
	var args [2][2]int
	n := 0
	for a := skipArgBlanks(s, i+4, le); a < le; a = skipArgBlanks(s, args[n-1][1], le) {
		if n == len(args) {
			return -1, -1, "" // more words: prose
		}
		e := argEnd(s, a, le)
		if e < 0 {
			return -1, -1, ""
		}
		args[n] = [2]int{a, e}
		n++
	}
	if n == 0 || n == 2 && s[args[0][1]-1] == ':' {
		return -1, -1, "" // no argument, or a message: "AUTH failed: %s"
	}
	vs, ve := args[n-1][0], args[n-1][1]
	if s[vs] == '"' || s[vs] == '\'' {
		quote = s[vs : vs+1]
	} else if strings.HasPrefix(s[vs:ve], `\"`) {
		quote = `\"`
	} else if !upper && !prompt && (indented || isLetters(s[vs:ve])) {
		return -1, -1, "" // prose, or an indented line of code (a struct's auth []string)
	}
	return vs, ve, quote
}

// argEnd returns where the command argument at s[a] ends on a line that ends at
// s[le]: a quoted string (\"escaped\" too) to its closing quote, else a word to a
// blank; -1 for an unclosed quote.
func argEnd(s string, a, le int) int {
	if strings.HasPrefix(s[a:le], `\"`) {
		// Quoted in JSON inside a quoted string: "AUTH \"my pass\"".
		k := strings.Index(s[a+2:le], `\"`)
		if k < 0 {
			return -1
		}
		return a + 2 + k + 2
	}
	if c := s[a]; c == '"' || c == '\'' {
		k := strings.IndexByte(s[a+1:le], c)
		if k < 0 {
			return -1
		}
		return a + 1 + k + 1
	}
	e := a
	for e < le && argBlank(s, e, le) == 0 {
		e++
	}
	return e
}

// argBlank returns the length of the blank between command arguments at s[i], up to
// s[le]: a blank, or a tab escaped (\t) as JSON and Go's %q write it in a quoted
// string, where an escaped line break ends the command as one does; 0 if none.
func argBlank(s string, i, le int) int {
	switch {
	case i < le && isBlank(s[i]):
		return 1
	case i+1 < le && s[i] == '\\' && s[i+1] == 't':
		return 2
	}
	return 0
}

// skipArgBlanks skips the blanks between command arguments (see argBlank).
func skipArgBlanks(s string, i, end int) int {
	for n := argBlank(s, i, end); n > 0; n = argBlank(s, i, end) {
		i += n
	}
	return i
}

func skipBlanks(s string, i, end int) int {
	for i < end && isBlank(s[i]) {
		i++
	}
	return i
}

func isLetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// redisCLIFlag returns the bounds of the value of redis-cli's password flag (-a pw,
// --pass pw) that starts at s[i], and its quote, if the flag follows "redis-cli" on
// its line, at most maxCommandLine bytes back; i, i otherwise. -a is another option
// of most commands (ls -a, git commit -a).
func (sc *scanner) redisCLIFlag(i int) (start, end int, quote string) {
	s := sc.s
	if i > 0 && !isBlank(s[i-1]) && s[i-1] != '\n' && blankBefore(s, i) == 0 {
		return i, i, "" // a tab escaped (\t) separates the flag as a tab does
	}
	n := i + 1
	for n < len(s) && isKeyChar(s[n]) {
		n++
	}
	if f := s[i:n]; f != "-a" && f != "--pass" || argBlank(s, n, len(s)) == 0 {
		return i, i, ""
	}
	v := skipArgBlanks(s, n, len(s))
	if v == len(s) || s[v] == '-' || s[v] == '\n' || s[v] == '\r' {
		return i, i, ""
	}
	if !sc.cli.onLine(s, "redis-cli", i) {
		return i, i, ""
	}
	return valueAfter(s, v)
}

// maxCommandLine bounds how far back before a flag or a logon the command it belongs
// to may start.
const maxCommandLine = 512

// commandFinder finds a command's name on the line before a position. It searches s
// once, forward, as the positions asked about do not go back: redaction stays
// linear.
type commandFinder struct {
	started    bool
	prev, next int // the occurrences before and after the position asked about last; -1 for none
}

// onLine reports whether name occurs before s[i] on its line, at most maxCommandLine
// bytes back. Each call must ask about a position at or after the one before, for
// one name and s.
func (f *commandFinder) onLine(s, name string, i int) bool {
	if !f.started {
		f.started, f.prev, f.next = true, -1, strings.Index(s, name)
	}
	for f.next >= 0 && f.next+len(name) <= i {
		f.prev = f.next
		if f.next = strings.Index(s[f.prev+1:], name); f.next >= 0 {
			f.next += f.prev + 1
		}
	}
	k := f.prev
	return k >= 0 && k+len(name) <= i && i-k <= maxCommandLine && strings.IndexByte(s[k:i], '\n') < 0
}

// Oracle's tools take a logon, user/password[@connect_identifier], as an argument
// with no key before it: sqlplus scott/tiger@db, SQL*Plus's CONNECT scott/tiger, RMAN's
// target sys/pw@prod. The same shape is a path (a/b@c), a package (@scope/pkg@1.0), a
// module (example.com/mod@v1.2.3) or an address elsewhere: a logon's password is
// masked only where a tool that takes one comes right before it (its flags between),
// or after userid= (sqlldr, exp).

// logonTools are the Oracle tools that take a logon.
var logonTools = []string{"sqlplus", "expdp", "impdp", "sqlldr", "dgmgrl"}

// oldLogonTools are the classic export and import tools, which take a logon too (exp
// scott/tiger@db file=x.dmp). As words they are abbreviations more often than tools
// (an exponent, an implementation): they take a logon only as a command (see
// commandWord), and one that ends as a logon does (see endsLogon) or before a
// parameter (file=x.dmp), as all their other arguments are.
var oldLogonTools = []string{"exp", "imp"}

// logonCommands are SQL*Plus's commands that take a logon. They are words of prose
// too ("connect I/O with pipes"): the logon after them must be followed by its
// connect identifier ('@'), AS (AS SYSDBA), a ';' or the end of its line.
var logonCommands = []string{"connect", "conn"}

// rmanLogons are the keywords of RMAN before a logon, on a line with "rman" before
// them (rman target sys/pw@prod catalog rman/pw@cat, RMAN> connect target ...), or
// after CONNECT as the first word of a command (see commandWord): RMAN's scripts and
// logs show its CONNECT TARGET sys/pw@prod with no "rman" before it.
var rmanLogons = []string{"target", "catalog", "auxiliary"}

// maxLogonFlags bounds how many flags may stand between a tool and its logon
// (sqlplus -s -L scott/tiger).
const maxLogonFlags = 4

// logonPassword returns the bounds of the password of the Oracle logon whose '/' is at
// s[slash], with its quotes, and its quote, if a tool takes the logon there (see
// logonTaker); slash, slash otherwise. The user, the tool and its flags start at or
// after s[from]. A password ends at the '@' before the connect identifier, or where
// the word does; a double-quoted one (Oracle's quoting of special characters) at its
// closing quote.
func (sc *scanner) logonPassword(slash int) (start, end int, quote string) {
	s, from := sc.s, sc.done
	v := slash + 1
	u := slash
	for u > 0 && (isAlnum(s[u-1]) || s[u-1] == '_' || s[u-1] == '#' || s[u-1] == '$') {
		u-- // an Oracle user name: scott, c##admin (libc.a/x is a path)
	}
	if u > 0 && s[u-1] == '\\' && escapedSpace(s, u-1) > 0 {
		u++ // not the t of exp\tscott
	}
	if v == len(s) || u == slash || u <= from || !isLetter(s[u]) {
		return slash, slash, ""
	}
	takes, ends := sc.logonTaker(from, u)
	if !takes {
		return slash, slash, ""
	}
	end = v
	if s[v] == '"' {
		k := strings.IndexAny(s[v+1:], "\"\n")
		if k < 0 || s[v+1+k] != '"' {
			return slash, slash, ""
		}
		end, quote = v+1+k+1, `"`
	} else {
		for end < len(s) && !logonEnd[s[end]] && (s[end] != '\\' || escapedSpace(s, end) == 0) {
			end++
		}
	}
	switch ends {
	case endsLine:
		takes = endsLogon(s, end)
	case endsOrParam:
		takes = endsLogon(s, end) || paramAfter(s, end) || shellAfter(s, end)
	case atOrParam:
		takes = end < len(s) && s[end] == '@' || paramAfter(s, end) || shellAfter(s, end)
	}
	if !takes {
		return slash, slash, ""
	}
	return v, end, quote
}

// endsLogon reports whether a logon's password that ends at s[end] is followed by
// its connect identifier ('@'), AS (CONNECT scott/tiger AS SYSDBA) or the end of its
// line, statement (';') or the quoted command it is in.
func endsLogon(s string, end int) bool {
	if end < len(s) && (s[end] == '@' || s[end] == '\'' || s[end] == '"' || s[end] == ';') {
		return true
	}
	j := skipArgBlanks(s, end, len(s))
	if j == len(s) || s[j] == '\n' || s[j] == '\r' || escapedSpace(s, j) > 0 {
		return true // the end of the line, or an escaped line break (\n, \r)
	}
	_, w := sqlWord(s, j)
	return isKeyword(w, "AS")
}

// paramAfter reports whether a parameter (file=x.dmp) follows the blanks at s[end].
func paramAfter(s string, end int) bool {
	j := skipArgBlanks(s, end, len(s))
	if j == end {
		return false
	}
	e := wordEnd(s, j)
	return e > j && e < len(s) && s[e] == '='
}

// shellAfter reports whether what follows a logon's password that ends at s[end] ends
// a shell command (exp scott/tiger > exp.log): a ')' closing a sub-shell, or after
// blanks a redirection (>, <, 2>), a pipe or list operator (|, &) or a comment.
func shellAfter(s string, end int) bool {
	if end < len(s) && s[end] == ')' {
		return true
	}
	j := skipArgBlanks(s, end, len(s))
	if j == end || j == len(s) {
		return false
	}
	switch c := s[j]; {
	case c == '>' || c == '<' || c == '|' || c == '&' || c == '#':
		return true
	case c >= '0' && c <= '9':
		return j+1 < len(s) && s[j+1] == '>'
	}
	return false
}

// logonEnds says how a logon's password must end for the tool or command before it
// to take the logon (see logonTaker).
type logonEnds int

const (
	anyEnd      logonEnds = iota // a tool that takes a logon there
	endsLine                     // a command, a word of prose too: see endsLogon
	endsOrParam                  // exp or imp: see endsLogon, or a parameter or shellAfter after it
	atOrParam                    // exp or imp after time: '@', a parameter or shellAfter after it
)

// logonEnd marks the bytes that end an unquoted logon password.
var logonEnd = [256]bool{'@': true, ' ': true, '\t': true, '\n': true, '\r': true, '\'': true, '"': true, ',': true, ';': true, ')': true}

// logonTaker reports whether the logon whose user starts at s[u] follows a tool or a
// command that takes one (logonTools, logonCommands, rmanLogons after "rman",
// oldLogonTools as a command), with at most maxLogonFlags flags between, or userid=,
// and how its password must end; the logon may be quoted. It looks no further back
// than s[from] for the tool.
func (sc *scanner) logonTaker(from, u int) (takes bool, ends logonEnds) {
	s := sc.s
	p := u
	if p > from && (s[p-1] == '\'' || s[p-1] == '"') {
		p-- // a quoted logon: sqlplus 'scott/tiger@db'
	}
	if p > from && s[p-1] == '=' {
		k := wordStart(s, p-1)
		return k >= from && isKeyword(s[k:p-1], "userid"), anyEnd
	}
	for range maxLogonFlags + 1 {
		if p == from || blankBefore(s, p) == 0 {
			return false, anyEnd
		}
		e := skipArgBlanksBack(s, p)
		if e <= from {
			return false, anyEnd
		}
		var w int
		cw := -1 // where the command starts if it is a quoted path
		if o, t, c := quotedPath(s, max(from, e-maxCommandLine), e-1); o >= 0 {
			cw, w, e = o, t, c
		} else {
			w = wordStart(s, e)
		}
		if w < from || w == e {
			return false, anyEnd
		}
		word := s[w:e]
		if word[0] == '-' {
			p = w // a flag of the tool
			continue
		}
		if n := len(word) - len(".exe"); n > 0 && strings.EqualFold(word[n:], ".exe") {
			word = word[:n]
		}
		switch {
		case isOneOf(word, logonTools):
			return true, anyEnd
		case isOneOf(word, logonCommands):
			return true, endsLine
		case isOneOf(word, rmanLogons):
			// "rman" may stand before a logon masked already (rman target a/x catalog).
			if sc.rman[0].onLine(s, "rman", w) || sc.rman[1].onLine(s, "RMAN", w) {
				return true, anyEnd
			}
			c := skipArgBlanksBack(s, w)
			k := wordStart(s, c)
			cmd, _ := commandWord(s, k)
			return c < w && k >= from && isKeyword(s[k:c], "connect") && cmd, endsLine
		case isOneOf(word, oldLogonTools):
			// After "time", a word of prose too ("time exp a/b"), the logon must be
			// followed by what only a command has: its '@', a parameter, a shell operator.
			if cw < 0 {
				cw = w
			}
			if cmd, prose := commandWord(s, cw); prose {
				return cmd, atOrParam
			} else {
				return cmd, endsOrParam
			}
		}
		return false, anyEnd
	}
	return false, anyEnd
}

// quotedPath returns where the quoted path whose closing quote is at s[c] opens, and
// the bounds of its last element ("C:\Program Files\Oracle\bin\sqlplus.exe",
// '/u01/app/bin/exp'), with no opening quote before s[lo] nor a line break; -1, -1, -1
// if s[c] closes no such path. In a JSON string or a %q-quoted message the quotes
// are escaped (\"C:\\oracle\\bin\\exp.exe\"): the path opens at the backslash, and
// its last element ends before the one of the closing quote.
func quotedPath(s string, lo, c int) (open, last, end int) {
	q := s[c]
	if q != '"' && q != '\'' {
		return -1, -1, -1
	}
	end = c
	escaped := q == '"' && c > lo && s[c-1] == '\\'
	if escaped {
		end--
	}
	o := strings.LastIndexByte(s[lo:end], q)
	if o < 0 {
		return -1, -1, -1
	}
	o += lo
	open = o
	if escaped {
		if o == lo || s[o-1] != '\\' {
			return -1, -1, -1
		}
		open--
	}
	k := strings.LastIndexAny(s[o+1:end], `/\`)
	if k < 0 || o+1+k+1 == end || strings.ContainsAny(s[o+1:end], "\n\r") {
		return -1, -1, -1
	}
	return open, o + 1 + k + 1, end
}

// commandWord reports whether the word at s[w] is the name of a command: the first
// word of its line, of a quoted command (exec: "exp ..."), or of a clause after a
// ':', or after a shell prompt ("$ ", "# ", "SQL> "), an operator (;, &&, ||, |) or
// an opening parenthesis or backtick, maybe after a path to it
// ($ORACLE_HOME/bin/exp, C:\oracle\bin\exp.exe), or after a command that runs it
// (see commandPrefixes) which is itself a command word. Elsewhere a word is prose (x
// exp y). prose reports that a prefix that is a word of prose too (time) stands
// before it.
func commandWord(s string, w int) (cmd, prose bool) {
	for range maxPrefixWords {
		p := w
		if p > 0 && (s[p-1] == '/' || s[p-1] == '\\') {
			for p > 0 && w-p < maxCommandLine && !isBlank(s[p-1]) && !strings.ContainsRune("\n\r\"'`(", rune(s[p-1])) {
				p-- // the path to the command
			}
		}
		b := skipArgBlanksBack(s, p)
		if b == 0 || escapedSpaceBefore(s, b) {
			return true, prose // an escaped line break (\n, \r) starts a line as one does
		}
		switch s[b-1] {
		case '\n', '\r', '"', '\'', '`', '(', ';', '&', '|':
			return true, prose
		case '$', '#', ':':
			return b < p, prose // a prompt, or the end of a clause, and a blank
		case '>':
			return b < p && b > 1 && !isBlank(s[b-2]), prose // a prompt (SQL> ), not x > y
		}
		if b == p {
			return false, false
		}
		if w = prefixBefore(s, b); w < 0 {
			return false, false
		}
		prose = prose || isKeyword(s[w:wordEnd(s, w)], "time")
	}
	return false, false
}

// commandPrefixes are commands that run the command after them, their flags, and
// for env VAR=value assignments, between: sudo -u oracle exp ..., nohup imp ... &,
// env ORACLE_SID=x exp ..., time exp ....
var commandPrefixes = []string{"sudo", "nohup", "env", "time"}

// maxPrefixWords bounds how many words commandWord looks back over: prefixes, their
// flags and arguments, assignments.
const maxPrefixWords = 8

// prefixBefore returns where the word before the blank that ends at s[b] starts if
// it may run the command after it: a prefix (see commandPrefixes), maybe by its
// absolute path, or a shell
// variable's assignment (ORACLE_SID=x exp ...; env's too), either a command word if
// that runs it; the prefix's flags (sudo -u oracle) are looked over. It returns -1
// if there is none.
func prefixBefore(s string, b int) int {
	for range maxPrefixWords {
		t := tokenStart(s, b)
		word := s[t:b]
		switch {
		case word == "":
			return -1
		case isOneOf(word, commandPrefixes) || isAssignment(word):
			return t
		case word[0] == '/' && isOneOf(word[strings.LastIndexByte(word, '/')+1:], commandPrefixes):
			// By its absolute path (/usr/bin/time -v, GNU time's flag): no word of
			// prose, as a relative one (docs/time) may be.
			return t
		case word[0] != '-':
			// The argument of a flag before it, or prose.
			c := skipArgBlanksBack(s, t)
			if f := tokenStart(s, c); c == t || f == c || s[f] != '-' {
				return -1
			}
			t = tokenStart(s, c)
		}
		if b = skipArgBlanksBack(s, t); b == t {
			return -1
		}
	}
	return -1
}

// tokenStart returns where the word of a command line that ends at s[i] starts: at a
// blank (an escaped one too), a quote, or a shell operator.
func tokenStart(s string, i int) int {
	t := i
	for t > 0 && i-t < maxCommandLine && !isBlank(s[t-1]) && !strings.ContainsRune("\n\r\"'`();&|", rune(s[t-1])) && !escapedSpaceBefore(s, t) {
		t--
	}
	return t
}

// isAssignment reports whether w is a shell variable's assignment, NAME=value.
func isAssignment(w string) bool {
	i := strings.IndexByte(w, '=')
	if i <= 0 || !isLetter(w[0]) && w[0] != '_' {
		return false
	}
	for k := 0; k < i; k++ {
		if !isAlnum(w[k]) && w[k] != '_' {
			return false
		}
	}
	return true
}

// blankBefore returns the length of the blank between command arguments (see
// argBlank) that ends at s[i]: a blank, or a tab escaped (\t); 0 if none.
func blankBefore(s string, i int) int {
	switch {
	case i > 0 && isBlank(s[i-1]):
		return 1
	case i > 1 && s[i-1] == 't' && escapedSpaceBefore(s, i):
		return 2
	}
	return 0
}

// skipArgBlanksBack returns where the blanks between command arguments (see
// blankBefore) that end at s[i] start.
func skipArgBlanksBack(s string, i int) int {
	for n := blankBefore(s, i); n > 0; n = blankBefore(s, i) {
		i -= n
	}
	return i
}

func isLetter(c byte) bool {
	c |= 0x20
	return 'a' <= c && c <= 'z'
}

// isOneOf reports whether w is one of words, ignoring case.
func isOneOf(w string, words []string) bool {
	for _, k := range words {
		if isKeyword(w, k) {
			return true
		}
	}
	return false
}
