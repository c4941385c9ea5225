package interceptor

import "strings"

// SQL sets an account's password with no key and separator before it: CREATE USER
// bob IDENTIFIED BY 'pw' (MySQL, Oracle), IDENTIFIED WITH plugin BY 'pw' or AS
// 'hash' (MySQL), IDENTIFIED BY VALUES 'hash' (Oracle), IDENTIFIED BY PASSWORD
// 'hash' (MySQL 5), and ALTER USER ... REPLACE
// 'current' quotes the current password. Upper-case keywords, as SQL is written,
// take a bare or quoted value (Oracle's IDENTIFIED BY pw); keywords in other case
// only a single-quoted string, since prose says "a node identified by its id". SQL
// carried in a form-encoded query string has a '+' for each space
// (IDENTIFIED+BY+%27pw%27, its quotes undone by String's unescaping).

// identifiedValue returns where the value of the next IDENTIFIED ... BY clause at or
// after s[from] starts, or -1 if there is none. f keeps its searches between calls
// on the same s.
func identifiedValue(s string, from int, f *identFinder) int {
	for from < len(s) {
		k := f.index(s, from)
		if k < 0 {
			return -1
		}
		if v := afterIdentified(s, k); v >= 0 {
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
// The upper-case tail is looked for by its 'F', a letter prose rarely writes in
// upper case: a search for one byte costs a third of one for the tail, and every
// text redacted goes through it.
func indexTail(s string, from, t int) int {
	if t == 1 {
		if j := strings.Index(s[from:], identTails[1]); j >= 0 {
			return from + j
		}
		return len(s)
	}
	const f = len("DENTI") // where the tail has its 'F'
	for i := from + f; i < len(s); i++ {
		j := strings.IndexByte(s[i:], 'F')
		if j < 0 {
			break
		}
		if i += j; strings.HasPrefix(s[i-f:], identTails[0]) {
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
}

// newIdentFinder returns an identFinder for s. Keywords not in upper case take only a
// single-quoted value: in text without a single quote, it does not search for them.
func newIdentFinder(s string) identFinder {
	f := identFinder{at: [2]int{-1, -1}}
	if strings.IndexByte(s, '\'') < 0 {
		f.at[1] = len(s)
	}
	return f
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
		if k > 0 && (s[k-1] == 'I' || s[k-1] == 'i') && (k == 1 || !isKeyChar(s[k-2])) &&
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
// upper case).
func afterIdentified(s string, k int) int {
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
	if _, next := sqlWord(s, v); upper && (next == "RANDOM" || next == "VALUES" || next == "PASSWORD") {
		if next == "RANDOM" {
			return -1 // IDENTIFIED BY RANDOM PASSWORD: the server makes one up
		}
		v, _ = sqlWord(s, v)
		v = sqlSpace(s, v)
	}
	return sqlValueAt(s, v, upper)
}

// replacedValue returns where the current password of a REPLACE clause right after
// an IDENTIFIED BY value that ends at s[end] starts, or -1.
func replacedValue(s string, end int) int {
	j, w := sqlWord(s, end)
	if !strings.EqualFold(w, "REPLACE") {
		return -1
	}
	return sqlValueAt(s, sqlSpace(s, j), w[0] == 'R')
}

// sqlValueAt returns v if a password may start at s[v]: a single-quoted string, or,
// after upper-case keywords, a double-quoted string or a bare word; -1 otherwise.
func sqlValueAt(s string, v int, upper bool) int {
	switch {
	case v >= len(s):
		return -1
	case s[v] == '\'':
		return v
	case upper && (s[v] == '"' || isKeyChar(s[v])):
		return v
	}
	return -1
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
	for i < len(s) && (isBlank(s[i]) || s[i] == '\n' || s[i] == '\r' || s[i] == '+') {
		i++
	}
	return i
}

// sqlBareEnd returns where the unquoted password at s[v] ends: where a plain value
// does, or, after a form's '+' for a space (IDENTIFIED+BY+pw+ACCOUNT+LOCK), at the
// next '+', as a '+' in the password would be encoded (%2B).
func sqlBareEnd(s string, v int) int {
	end := plainEnd(s, v)
	if v > 0 && s[v-1] == '+' {
		if k := strings.IndexByte(s[v:end], '+'); k >= 0 {
			end = v + k
		}
	}
	return end
}
