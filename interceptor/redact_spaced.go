package interceptor

import "strings"

// startsWord reports whether c starts a word of s: a flag ("--password x") or a
// quoted value after a key and a space (PASSWORD 'x'). It looks at the places of c
// only, fewer than those of spaces.
func startsWord(s string, c byte) bool {
	for i := 0; ; i++ {
		k := strings.IndexByte(s[i:], c)
		if k < 0 {
			return false
		}
		if i += k; i == 0 || isBlank(s[i-1]) || s[i-1] == '\n' {
			return true
		}
	}
}

// flagValue returns the bounds of the value of the command-line flag that starts at
// s[i] ("--password x", "-token x", as a command line quoted in an error passes it),
// and its quote, if the flag starts a word, its name is sensitive and a word follows
// it on the same line that is not another flag. It returns i, i otherwise.
func (r *Redactor) flagValue(s string, i int) (start, end int, quote string) {
	if i > 0 && !isBlank(s[i-1]) && s[i-1] != '\n' && blankBefore(s, i) == 0 {
		return i, i, ""
	}
	k := i + 1
	if k < len(s) && s[k] == '-' {
		k++
	}
	n := k
	for n < len(s) && isKeyChar(s[n]) {
		n++
	}
	if n == k || !isAlnum(s[k]) || argBlank(s, n, len(s)) == 0 || !r.Sensitive(s[k:n]) {
		return i, i, ""
	}
	b := n
	n = skipArgBlanks(s, n, len(s))
	if n == len(s) || s[n] == '-' || s[n] == '\n' || s[n] == '\r' {
		return i, i, ""
	}
	start, end, quote = valueAfter(s, n)
	if quote == "" && strings.Contains(s[b:n], `\t`) {
		// A command line that JSON or %q quotes (--password\tpw\t-h db): the next
		// escaped tab ends the value as a tab does. Elsewhere a backslash and a t
		// may be the password's own characters.
		for k := start; k < end; k++ {
			if escapedSpace(s, k) > 0 {
				end = k
				break
			}
		}
	}
	return start, end, quote
}

// quotedAfterKey returns the bounds of the quoted value that starts at s[i], after a
// sensitive key and blanks on the same line (PASSWORD 'x' in SQL, token "x" as %q
// prints it), and its quote; the key is a word that starts at or after s[from]. It
// returns i, i otherwise.
func (r *Redactor) quotedAfterKey(s string, from, i int) (start, end int, quote string) {
	if i == from || !isBlank(s[i-1]) {
		return i, i, ""
	}
	j := i
	for j > from && isBlank(s[j-1]) {
		j--
	}
	k := j
	for k > from && isKeyChar(s[k-1]) {
		k--
	}
	if k == j || k > from && !isBlank(s[k-1]) && s[k-1] != '\n' || !r.Sensitive(s[k:j]) {
		return i, i, ""
	}
	start, end, quote = valueAfter(s, i)
	if quote == `"` && strings.EqualFold(s[k:j], "secret") && startsClause(s, k) && isResourceStatus(s, start, end) {
		return i, i, ""
	}
	return start, end, quote
}

// startsClause reports whether the word at s[k] starts the text or the clause after a
// ':', as a resource kind does in Kubernetes' messages ("Error: secret ..."), where
// another word before it ("client secret ...") makes it part of a name.
func startsClause(s string, k int) bool {
	j := k
	for j > 0 && (isBlank(s[j-1]) || s[j-1] == '\n') {
		j--
	}
	return j == 0 || s[j-1] == ':'
}

// resourceStatuses are the phrases after which a quoted name is a resource's, as
// Kubernetes reports a resource by kind, name and status (`secret "db-creds" not
// found`, `Secret "db-creds" is invalid: ...`, where the reasons follow a ':').
var resourceStatuses = []string{"not found", "already exists", "is forbidden:", "is invalid:"}

// isResourceStatus reports whether the double-quoted value s[start:end] is the name of
// a resource followed by its status, not a secret: a Kubernetes object name
// (lower-case letters, digits, '-', '.', '/' for a namespace), then a blank and one
// of resourceStatuses. A secret's own value is rarely such a name, and a status
// after a token or a password does not make its value a name ("token "x" expired"
// quotes the token).
func isResourceStatus(s string, start, end int) bool {
	if end-start < 3 || s[end-1] != '"' {
		return false // unclosed, or empty
	}
	name := s[start+1 : end-1]
	if !isAlnum(name[0]) || !isAlnum(name[len(name)-1]) {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '/') {
			return false
		}
	}
	if end == len(s) || s[end] != ' ' {
		return false
	}
	for _, st := range resourceStatuses {
		if strings.HasPrefix(s[end+1:], st) {
			return true
		}
	}
	return false
}
