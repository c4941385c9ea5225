package interceptor

import "strings"

// SQL sets an account's password with no key and separator before it: CREATE USER
// bob IDENTIFIED BY 'pw' (MySQL, Oracle), IDENTIFIED WITH plugin BY 'pw' or AS
// 'hash' (MySQL), IDENTIFIED BY VALUES 'hash' (Oracle), IDENTIFIED BY PASSWORD
// 'hash' (MySQL 5), and ALTER USER ... REPLACE
// 'current' quotes the current password. Upper-case keywords, as SQL is written,
// take a bare or quoted value (Oracle's IDENTIFIED BY pw); keywords in other case
// only a single-quoted string, since prose says "a node identified by its id",
// unless the clause follows an account of a CREATE USER or ALTER USER statement
// (create user bob identified by pw, and each account of its list: create user a
// identified by x1, b identified by x2), whose keywords say it is SQL. SQL
// carried in a form-encoded query string has a '+' for each space
// (IDENTIFIED+BY+%27pw%27, its quotes undone by String's unescaping).

// MySQL before 8.0 sets a password with SET PASSWORD [FOR account] = 'pw', or =
// PASSWORD('pw') (OLD_PASSWORD('pw') before 5.7), as UPDATE mysql.user SET
// Password = PASSWORD('pw') does: the '=' announces the value, as in key=value,
// whatever the account, and the argument of a PASSWORD call is a password wherever
// it stands. 8.0 adds REPLACE 'current'. The value after SET PASSWORD's '=' may be
// bare or quoted in any case, as the value of "set password = pw" is; as for
// IDENTIFIED BY, a PASSWORD call in upper case takes a single- or double-quoted
// argument, in other case a single-quoted one.

// setPasswordValue returns where the password that the '=' at s[eq] sets in SET
// PASSWORD [FOR account] = pw starts (the argument of a PASSWORD call), or -1 if the
// '=' is not one of those. The account is as MySQL writes it: bob, bob@localhost,
// 'bob'@'%', CURRENT_USER(). It looks back no further than the previous '=', which
// none of the words it looks at holds: the scans stay linear.
func setPasswordValue(s string, eq int) int {
	j := sqlSpaceBack(s, eq)
	a := accountStart(s, j)
	// The account, or PASSWORD itself, follows a space: most '=' (a=1&b=2) end here,
	// cheaply, as every '=' after the word password comes here.
	if a == j || a == 0 || !isSQLSpace(s[a-1]) && !escapedSpaceBefore(s, a) {
		return -1
	}
	p := a
	if !isKeyword(s[a:j], "PASSWORD") {
		f := sqlSpaceBack(s, a)
		fs := wordStart(s, f)
		if !isKeyword(s[fs:f], "FOR") {
			return -1
		}
		if j = sqlSpaceBack(s, fs); j == fs {
			return -1
		}
		if p = wordStart(s, j); !isKeyword(s[p:j], "PASSWORD") {
			return -1
		}
	}
	e := sqlSpaceBack(s, p)
	if e == p || !isKeyword(s[wordStart(s, e):e], "SET") {
		return -1
	}
	v := sqlSpace(s, eq+1)
	if a := passwordCallArg(s, v); a >= 0 {
		return a
	}
	// SET PASSWORD and an '=' are SQL in any case, as "set password = pw" is a key
	// and its value: the value may be bare.
	return sqlValueAt(s, v, true)
}

// indexPassword returns where the word "password" first occurs in s, or len(s):
// SET PASSWORD's '=' and a PASSWORD call's quote come after it, and most text has
// none, which one search tells rather than a look back from each '=' and quote. In
// upper case it is looked for by its 'W', a letter prose rarely writes in upper case,
// and in other case (PASSWORD's tail) by its 'w'.
func indexPassword(s string) int {
	i := len(s)
	for _, tail := range [2]string{"ASSWORD", "assword"} {
		const w = len("ASS") // where the tail has its 'W'
		for k := w + 1; k < i; k++ {
			j := strings.IndexByte(s[k:i], tail[w])
			if j < 0 {
				break
			}
			if k += j; strings.HasPrefix(s[k-w:], tail) {
				i = k - w - 1
				break
			}
		}
	}
	return i
}

// accountChars marks the bytes of a MySQL account outside its quotes: bob@localhost,
// 10.0.0.0/8, CURRENT_USER().
var accountChars = func() (t [256]bool) {
	for c := range t {
		t[c] = isKeyChar(byte(c))
	}
	for _, c := range []byte("@%():/") {
		t[c] = true
	}
	return t
}()

// accountStart returns where the MySQL account that ends at s[j] starts: accountChars
// and quoted names, which may hold spaces ('my user'@'%', `bob`@`%`). A quoted name
// ends at its opening quote on the same line and holds no '=': the look back from an
// '=' stops at the previous one, and the scans stay linear. A closing quote without
// an opening one ends the account after it.
func accountStart(s string, j int) int {
	a := j
	for a > 0 {
		switch c := s[a-1]; c {
		case '\'', '"', '`':
			// In a JSON string or a %q-quoted message, a double-quoted name has its
			// quotes escaped (\"bob\"@\"%\"), the opening one too.
			escaped := c == '"' && a >= 2 && s[a-2] == '\\'
			o := a - 2
			if escaped {
				o--
			}
			for o >= 0 && s[o] != c && s[o] != '=' && s[o] != '\n' {
				o--
			}
			if o < 0 || s[o] != c {
				return a
			}
			if escaped {
				if o == 0 || s[o-1] != '\\' {
					return a
				}
				o--
			}
			a = o
		default:
			if !accountChars[c] || escapedSpaceBefore(s, a) {
				return a // an escaped white space (\nbob) ends the account before it
			}
			a--
		}
	}
	return a
}

func isKeyword(w, keyword string) bool {
	return len(w) == len(keyword) && strings.EqualFold(w, keyword)
}

// passwordCallArg returns where the quoted argument of the PASSWORD or OLD_PASSWORD
// call at s[v] starts, or -1 if there is none.
func passwordCallArg(s string, v int) int {
	if v >= len(s) || s[v]|0x20 != 'p' && s[v]|0x20 != 'o' {
		return -1 // the common case, cheaply
	}
	w := wordEnd(s, v)
	if w == len(s) || s[w] != '(' || !isPasswordFunc(s[v:w]) {
		return -1
	}
	a := sqlSpace(s, w+1) // a line break too, escaped or not: PASSWORD(\n'pw')
	if a < len(s) && (s[a] == '\'' || s[a] == '"' || escapedQuoteAt(s, a)) {
		return a
	}
	return -1
}

// passwordArg returns where the argument of a PASSWORD or OLD_PASSWORD call
// (PASSWORD('pw')) starts if the quote at s[q] starts it or is the quote of an
// escaped one (\"pw\"), -1 otherwise: single-quoted, or double-quoted after an
// upper-case name, as for IDENTIFIED BY.
func passwordArg(s string, q int) int {
	if q > 0 && escapedQuoteAt(s, q-1) {
		q--
	}
	p := sqlSpaceBack(s, q)
	if p == 0 || s[p-1] != '(' {
		return -1
	}
	w := wordStart(s, p-1)
	if !isPasswordFunc(s[w : p-1]) {
		return -1
	}
	return sqlValueAt(s, q, s[w+1] <= 'Z')
}

func isPasswordFunc(name string) bool {
	return isKeyword(name, "PASSWORD") || isKeyword(name, "OLD_PASSWORD")
}

// identifiedValue returns where the value of the next IDENTIFIED ... BY clause at or
// after s[from] starts, or -1 if there is none. f keeps its searches between calls
// on the same s.
func identifiedValue(s string, from int, f *identFinder) int {
	for from < len(s) {
		k := f.index(s, from)
		if k < 0 {
			return -1
		}
		if v := afterIdentified(s, k, f); v >= 0 {
			return v
		}
		from = k + len("IDENTIFIED")
	}
	return -1
}

// identTails are what identFinder searches for: the word "identified" but its first
// letter, in upper and in lower case (mixed case starts with a capital).
var identTails = [2]string{"DENTIFIED", "dentified"}

// indexTail returns where identTails[t] next occurs at or after s[from], or len(s).
// The tail is looked for by its 'F' (or 'f'), a letter rarer than its others, and
// rare in upper case: a search for one byte costs a fraction of one for the tail,
// and every text redacted goes through it.
func indexTail(s string, from, t int) int {
	const f = len("DENTI") // where the tail has its 'F'
	tail := identTails[t]
	for i := from + f; i < len(s); i++ {
		j := strings.IndexByte(s[i:], tail[f])
		if j < 0 {
			break
		}
		if i += j; strings.HasPrefix(s[i-f:], tail) {
			return i - f
		}
	}
	return len(s)
}

// identFinder finds the word "identified" in a text. It keeps where each of
// identTails occurs next, so that text with many of one and none of the other is
// searched once, not once per occurrence: redaction stays linear.
type identFinder struct {
	at [2]int // where identTails[k] occurs next (len(s) for nowhere), or -1 before the first search
	// user is where the IDENTIFIED looked at last starts if it is in a CREATE USER or
	// ALTER USER statement, -1 otherwise: the account after it in the statement's
	// list of accounts is in the statement too (see inUserStatement).
	user int
}

// newIdentFinder returns an identFinder for s.
func newIdentFinder(s string) identFinder {
	return identFinder{at: [2]int{-1, -1}, user: -1}
}

// index returns where the next word "identified" (in any case) at or after s[from]
// starts, or -1.
func (f *identFinder) index(s string, from int) int {
	for from < len(s) {
		k := len(s)
		for t := range identTails {
			if f.at[t] < from {
				f.at[t] = indexTail(s, from, t)
			}
			k = min(k, f.at[t])
		}
		if k == len(s) {
			return -1
		}
		e := k + len("dentified")
		if k > 0 && (s[k-1] == 'I' || s[k-1] == 'i') && (k == 1 || !isKeyChar(s[k-2]) || escapedSpaceBefore(s, k-1)) &&
			(e == len(s) || !isKeyChar(s[e])) && strings.EqualFold(s[k-1:e], "identified") {
			return k - 1
		}
		from = k + 1
	}
	return -1
}

// afterIdentified returns where the password of the clause whose IDENTIFIED starts at
// s[k] starts: after BY or AS, and WITH plugin before them; -1 if there is none (the
// clause names no password, or the value is bare after keywords that are not in
// upper case). f is told whether the clause is in a user statement.
func afterIdentified(s string, k int, f *identFinder) int {
	inUser := inUserStatement(s, k, f)
	f.user = -1
	if inUser {
		f.user = k
	}
	upper := s[k] == 'I'
	j, w := sqlWord(s, k+len("IDENTIFIED"))
	if strings.EqualFold(w, "WITH") {
		if _, plugin := sqlWord(s, j); plugin == "" {
			return -1
		}
		j, _ = sqlWord(s, j) // the plugin, bare or quoted
		j, w = sqlWord(s, j)
	}
	if !strings.EqualFold(w, "BY") && !strings.EqualFold(w, "AS") {
		return -1
	}
	upper = upper && w[0] <= 'Z'
	v := sqlSpace(s, j)
	if v == j || v == len(s) {
		return -1
	}
	// In a user statement in other case (create user bob identified by pw), the
	// keywords are SQL's as much as in upper case, and so are those after them.
	bare := upper || inUser
	if _, next := sqlWord(s, v); bare && (keywordIn(next, "RANDOM", upper) || keywordIn(next, "VALUES", upper) || keywordIn(next, "PASSWORD", upper)) {
		if keywordIn(next, "RANDOM", upper) {
			return -1 // IDENTIFIED BY RANDOM PASSWORD: the server makes one up
		}
		v, _ = sqlWord(s, v)
		v = sqlSpace(s, v)
	}
	return sqlValueAt(s, v, bare)
}

// keywordIn reports whether w is keyword, in upper case if upper, else in any case.
func keywordIn(w, keyword string, upper bool) bool {
	if upper {
		return w == keyword
	}
	return isKeyword(w, keyword)
}

// inUserStatement reports whether the IDENTIFIED at s[k] follows the account of a
// CREATE USER or ALTER USER statement, with IF [NOT] EXISTS before the account, in
// any case: prose has "a user bob identified by his email", not these keywords in
// this order. It looks back over five words at most. An account after a ',' is a
// later one of the statement's list (create user a identified by x1, b identified by
// x2) if the IDENTIFIED clause before it, which f tells of, is in the statement.
func inUserStatement(s string, k int, f *identFinder) bool {
	e := sqlSpaceBack(s, k)
	a := accountStart(s, e)
	if e == k || a == e {
		return false
	}
	if c := sqlSpaceBack(s, a); c > 0 && s[c-1] == ',' {
		return f.user >= 0 && listedAfter(s, f.user, a)
	}
	word := func(end int) (start int, w string) {
		if e := sqlSpaceBack(s, end); e < end {
			start = wordStart(s, e)
			return start, s[start:e]
		}
		return end, ""
	}
	p, w := word(a)
	if isKeyword(w, "EXISTS") {
		if p, w = word(p); isKeyword(w, "NOT") {
			p, w = word(p)
		}
		if !isKeyword(w, "IF") {
			return false
		}
		p, w = word(p)
	}
	if !isKeyword(w, "USER") {
		return false
	}
	_, w = word(p)
	return isKeyword(w, "CREATE") || isKeyword(w, "ALTER")
}

// maxClauseWords bounds how many words may stand between a user statement's
// IDENTIFIED and the account after it in the statement's list: the rest of the
// clause (BY pw REPLACE old RETAIN CURRENT PASSWORD, WITH plugin BY pw) and the
// accounts between that have no clause.
const maxClauseWords = 12

// listedAfter reports whether the account at s[a] follows, in a list of accounts,
// the clause whose IDENTIFIED starts at s[k]: after the words of that clause, a ',',
// and maybe other accounts each followed by a ','. A ';' ends the statement, and
// other words after a ',' (", and then b identified by x") are prose.
func listedAfter(s string, k, a int) bool {
	j := k + len("IDENTIFIED")
	for range maxClauseWords {
		if j = sqlSpace(s, j); j >= a || s[j] == ';' {
			return false
		}
		if s[j] == ',' {
			if j = sqlSpace(s, j+1); j == a {
				return true
			}
			// An account with no clause, which a ',' must follow.
			e := sqlTokenEnd(s, j, a)
			if e <= j {
				return false
			}
			if j = sqlSpace(s, e); j >= a || s[j] != ',' {
				return false
			}
			continue
		}
		e := sqlTokenEnd(s, j, a)
		if e <= j {
			return false
		}
		j = e
	}
	return false
}

// sqlTokenEnd returns where the word of SQL at s[i] ends, before s[limit]: at white
// space, a ',' or a ';', its quoted parts ('b'@'%', 'x,y') taking any character;
// -1 for a quote not closed before limit.
func sqlTokenEnd(s string, i, limit int) int {
	for i < limit {
		switch c := s[i]; {
		case c == '\'':
			if i = sqlQuoteEnd(s[:limit], i); i < 0 {
				return -1
			}
		case c == '"' || c == '`':
			k := strings.IndexByte(s[i+1:limit], c)
			if k < 0 {
				return -1
			}
			i += k + 2
		case isSQLSpace(c) || c == ',' || c == ';' || c == '\\' && escapedSpace(s, i) > 0:
			return i
		default:
			i++
		}
	}
	return i
}

// replacedValue returns where the current password of a REPLACE clause right after
// an IDENTIFIED BY value that ends at s[end] starts, or -1. After a bare password
// (the clause took one), REPLACE takes one too.
func replacedValue(s string, end int) int {
	j, w := sqlWord(s, end)
	if !strings.EqualFold(w, "REPLACE") {
		return -1
	}
	bare := end > 0 && s[end-1] != '\'' && s[end-1] != '"'
	return sqlValueAt(s, sqlSpace(s, j), w[0] == 'R' || bare)
}

// sqlValueAt returns v if a password may start at s[v]: a single-quoted string, or,
// after upper-case keywords, a double-quoted string or a bare word; -1 otherwise.
func sqlValueAt(s string, v int, upper bool) int {
	switch {
	case v >= len(s):
		return -1
	case s[v] == '\'':
		return v
	case upper && (s[v] == '"' || isKeyChar(s[v]) || escapedQuoteAt(s, v)):
		return v
	}
	return -1
}

// escapedQuoteAt reports whether a double quote escaped, \", starts at s[v]: the
// quote of a password (IDENTIFIED BY "p w") in a JSON string or a %q-quoted message.
func escapedQuoteAt(s string, v int) bool {
	return v+1 < len(s) && s[v] == '\\' && s[v+1] == '"'
}

// sqlWord returns the word after white space from s[i] (a quoted one with its
// quotes) and where it ends; "" if none.
func sqlWord(s string, i int) (end int, word string) {
	i = sqlSpace(s, i)
	j := i
	if j < len(s) && (s[j] == '\'' || s[j] == '"' || s[j] == '`') {
		if k := strings.IndexByte(s[j+1:], s[j]); k >= 0 {
			return j + k + 2, s[j : j+k+2]
		}
		return j, ""
	}
	for j < len(s) && isKeyChar(s[j]) {
		j++
	}
	return j, s[i:j]
}

// sqlSpace returns where the white space from s[i] ends. A '+' counts as a space: SQL
// in a form-encoded query string (?q=CREATE+USER+bob+IDENTIFIED+BY+%27pw%27) has one
// for each, and no prose puts one between these keywords.
func sqlSpace(s string, i int) int {
	for i < len(s) {
		switch {
		case isSQLSpace(s[i]):
			i++
		case s[i] == '\\' && escapedSpace(s, i) > 0:
			i += 2
		default:
			return i
		}
	}
	return i
}

func isSQLSpace(c byte) bool { return isBlank(c) || c == '\n' || c == '\r' || c == '+' }

// escapedSpace returns the length of the white space escaped at s[i], \n, \r or \t as
// JSON and Go's %q write a line break or a tab in a string (2), or 0. The backslash
// must not be escaped itself: \\n is a backslash and an n (a path's C:\\new in JSON).
// It counts wherever it stands, not only in a quoted string, whose bounds a look at
// a few words cannot tell: between SQL's keywords, a \n outside quotes is the same
// escape in a message that dropped the string's quotes (sql=create user a\nidentified
// by pw), and a path or a regular expression does not put CREATE USER, IDENTIFIED
// and BY around one.
func escapedSpace(s string, i int) int {
	if i+1 >= len(s) || s[i] != '\\' || s[i+1] != 'n' && s[i+1] != 't' && s[i+1] != 'r' {
		return 0
	}
	b := i
	for b > 0 && s[b-1] == '\\' {
		b--
	}
	if (i-b)%2 != 0 {
		return 0
	}
	return 2
}

// escapedSpaceBefore reports whether an escaped white space (see escapedSpace) ends
// at s[i].
func escapedSpaceBefore(s string, i int) bool {
	return i >= 2 && s[i-2] == '\\' && escapedSpace(s, i-2) > 0
}

// sqlBareEnd returns where the unquoted password at s[v] ends: where a plain value
// does, or, after a form's '+' for a space (IDENTIFIED+BY+pw+ACCOUNT+LOCK), at the
// next '+', as a '+' in the password would be encoded (%2B).
func sqlBareEnd(s string, v int) int {
	end := plainEnd(s, v)
	for k := v; k < end; k++ {
		if s[k] == '\\' && (escapedSpace(s, k) > 0 || escapedQuoteAt(s, k)) {
			end = k // an escaped line break or tab ends the value as one does, and \" a string it is in
			break
		}
	}
	if v > 0 && s[v-1] == '+' {
		if k := strings.IndexByte(s[v:end], '+'); k >= 0 {
			end = v + k
		}
	}
	return end
}

// sqlSpaceBack returns where the white space (see sqlSpace) that ends at s[i] starts.
func sqlSpaceBack(s string, i int) int {
	for i > 0 {
		switch {
		case isSQLSpace(s[i-1]):
			i--
		case escapedSpaceBefore(s, i):
			i -= 2
		default:
			return i
		}
	}
	return i
}

// wordStart returns where the word of key characters that ends at s[i] starts. An
// escaped white space (\nuser, see escapedSpace) ends the word before it.
func wordStart(s string, i int) int {
	for i > 0 && isKeyChar(s[i-1]) && !escapedSpaceBefore(s, i) {
		i--
	}
	return i
}

// wordEnd returns where the word of key characters that starts at s[i] ends.
func wordEnd(s string, i int) int {
	for i < len(s) && isKeyChar(s[i]) {
		i++
	}
	return i
}

// sqlValue returns the bounds of the password at s[v] (see sqlValueAt), with its
// quotes, and its quote.
func sqlValue(s string, v int) (vs, ve int, quote string) {
	switch s[v] {
	case '\'', '"':
		if e := sqlQuoteEnd(s, v); e >= 0 {
			return v, e, s[v : v+1]
		}
		return v, len(s), s[v : v+1]
	case '\\':
		return valueAfter(s, v) // \"pw\" (see escapedQuoteAt)
	}
	return v, sqlBareEnd(s, v), ""
}

// sqlQuoteEnd returns where the SQL string quoted at s[q] (with ' or ") ends, after
// its closing quote, or -1 if it is not closed. Two quotes in a row in it are one quote
// of the string, as standard SQL has it, and so is a quote after a backslash ('it\'s'), as
// MySQL has it; a backslash escapes a backslash too ('x\\' ends at its second quote).
// Only SQL reads quotes so: a shell's single quotes take no escape ('x\' is x\), and
// key=value text keeps valueAfter's reading.
//
// JSON and Go's %q double each backslash: 'x\\',1' in {"sql":"..."} is the string
// x',1, whose escaped quote reads as an escaped backslash and a closing quote in SQL
// as it stands. Two backslashes (or six, ...) before a quote are read as JSON's
// escape of one when the string is in a double-quoted one, four (or twelve, ...) when
// that is in another (see quotedDepth), which masks the whole password; a password
// that ends in a backslash is rarer than SQL quoted in JSON.
func sqlQuoteEnd(s string, q int) int {
	c, depth := s[q], -1
	for j := q + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			b := j
			for j < len(s) && s[j] == '\\' {
				j++
			}
			if j == len(s) {
				return -1
			}
			if s[j] != c {
				j-- // the loop steps onto the character after the backslashes
				continue
			}
			if n := j - b; n%2 == 1 {
				continue // an escaped quote
			} else if depth < 0 {
				depth = quotedDepth(s, q)
			}
			if n := j - b; depth > 0 && n>>depth&1 == 1 && n&(1<<depth-1) == 0 {
				continue // an escaped quote, its backslash doubled by each string it is in
			}
			if j+1 < len(s) && s[j+1] == c {
				j++
				continue
			}
			return j + 1
		case c:
			if j+1 < len(s) && s[j+1] == c {
				j++
				continue
			}
			return j + 1
		}
	}
	return -1
}

// maxQuotedLookBack bounds how far quotedDepth looks back: it is asked once per SQL
// password at most, and the scans stay linear.
const maxQuotedLookBack = 4096

// quotedDepth returns how many double-quoted strings of its line s[q] is in, each
// quoted in the one before as JSON and Go's %q quote a string (msg="{\"sql\":\"...),
// two at most: after an odd number of quotes '"' that no backslash escapes, then of
// quotes that one backslash escapes.
func quotedDepth(s string, q int) int {
	var odd [2]bool
	for i := q - 1; i >= 0 && i >= q-maxQuotedLookBack && s[i] != '\n'; i-- {
		if s[i] != '"' {
			continue
		}
		b := i
		for b > 0 && s[b-1] == '\\' {
			b--
		}
		if i-b < len(odd) {
			odd[i-b] = !odd[i-b]
		}
	}
	switch {
	case !odd[0]:
		return 0
	case !odd[1]:
		return 1
	}
	return 2
}
