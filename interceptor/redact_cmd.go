package interceptor

import "strings"

// Some commands take a password with no key before it: Redis's AUTH pw and AUTH user
// pw, and redis-cli's -a pw and --pass pw. AUTH is a word of prose too ("auth failed
// for user bob", "auth token expired"): it is read as the command only where Redis
// takes one, as the first word of a line (or after a redis-cli prompt,
// "127.0.0.1:6379> "), followed by one or two arguments that end the line. Prose
// rarely writes AUTH in upper case, nor a prompt; after "auth" in other case with no
// prompt, an argument of letters only ("auth failed", "auth token expired") reads as
// prose, and one with another character (a digit, a symbol) as a password.

// authFinder finds the passwords of Redis AUTH commands in a text, line by line. The
// lines are looked at once, in order, as the scanner asks for values further on:
// redaction stays linear.
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
	w := i
	for w < le && !isBlank(s[w]) {
		w++
	}
	prompt := w > i+1 && s[w-1] == '>' && w < le // a redis-cli prompt: host:port>, redis>
	if prompt {
		i = skipBlanks(s, w, le)
	}
	if le-i < len("AUTH x") || !isKeyword(s[i:i+4], "AUTH") || !isBlank(s[i+4]) {
		return -1, -1, ""
	}
	upper := s[i:i+4] == "AUTH"
	var args [2][2]int
	n := 0
	for a := skipBlanks(s, i+4, le); a < le; a = skipBlanks(s, args[n-1][1], le) {
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
	if n == 0 {
		return -1, -1, ""
	}
	vs, ve := args[n-1][0], args[n-1][1]
	if s[vs] == '"' || s[vs] == '\'' {
		quote = s[vs : vs+1]
	} else if !upper && !prompt && isLetters(s[vs:ve]) {
		return -1, -1, ""
	}
	return vs, ve, quote
}

// argEnd returns where the command argument at s[a] ends on a line that ends at
// s[le]: a quoted string to its closing quote, else a word to a blank; -1 for an
// unclosed quote.
func argEnd(s string, a, le int) int {
	if c := s[a]; c == '"' || c == '\'' {
		k := strings.IndexByte(s[a+1:le], c)
		if k < 0 {
			return -1
		}
		return a + 1 + k + 1
	}
	e := a
	for e < le && !isBlank(s[e]) {
		e++
	}
	return e
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
func redisCLIFlag(s string, i int) (start, end int, quote string) {
	if i > 0 && !isBlank(s[i-1]) && s[i-1] != '\n' {
		return i, i, ""
	}
	n := i + 1
	for n < len(s) && isKeyChar(s[n]) {
		n++
	}
	if f := s[i:n]; f != "-a" && f != "--pass" || n == len(s) || !isBlank(s[n]) {
		return i, i, ""
	}
	v := skipBlanks(s, n, len(s))
	if v == len(s) || s[v] == '-' || s[v] == '\n' || s[v] == '\r' {
		return i, i, ""
	}
	line := s[max(0, i-maxCommandLine):i]
	k := strings.LastIndex(line, "redis-cli")
	if k < 0 || strings.IndexByte(line[k:], '\n') >= 0 {
		return i, i, ""
	}
	return valueAfter(s, v)
}

// maxCommandLine bounds how far back a flag looks for the command it belongs to: the
// look back of each flag is bounded, and redaction stays linear.
const maxCommandLine = 512
