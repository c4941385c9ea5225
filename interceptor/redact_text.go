package interceptor

import "strings"

// String masks the values of sensitive keys in free text: key=value, key: value,
// "key": "value" (and single-quoted, braced or bracketed values), key => value, key :=
// value, key == value (a condition quoted in an error), key<TAB>value (tab separated
// output, where a tab is a separator; a space is not, as prose has "password for
// bob"), an authorization scheme followed by its credentials ("Bearer abc"), every
// cookie of a Cookie header ("Cookie: a=1; sid=2"), and, as the value of "password",
// the password of a URL ("postgres://app:***@db/x", as a database driver's error may
// quote its DSN) and of a Go MySQL DSN ("app:***@tcp(db:3306)/x"), the text of an XML element ("<password>***</password>"), the word
// after a command-line flag ("--password ***", "-token ***"), and a quoted value
// after a key and a space (PASSWORD '***' in SQL, token "***" as %q prints it; but
// not a Kubernetes object name after "secret" and before its status, as in `secret
// "db-creds" not found`), and SQL's account passwords (IDENTIFIED BY ***,
// IDENTIFIED WITH plugin BY '***', REPLACE '***': bare or quoted after upper-case
// keywords or in a CREATE USER or ALTER USER statement, single-quoted after others; a
// form's '+' for a space between them,
// IDENTIFIED+BY+%27***%27), MySQL's SET PASSWORD FOR 'bob'@'%' = '***' and the
// argument of a PASSWORD call (PASSWORD('***')), and the passwords of Redis's AUTH
// command (a line or a quoted string "AUTH ***" or "AUTH user ***", see
// authFinder), of redis-cli's
// -a *** flag and of an Oracle logon after a tool that takes one (sqlplus
// scott/***@db, see logonPassword). Tabs count as spaces around a separator, a
// value may start on the next line
// ("password:\n  x", as in YAML, and the credentials of a folded "Authorization:
// Bearer" header), a YAML block scalar ("private_key: |") is every line below its key
// indented deeper than the key, a YAML value may follow a tag and an anchor
// ("password: !!str &pw ***"), a single-quoted value runs over doubled quotes (as
// YAML and SQL escape a quote in it), a triple-quoted one (TOML, Python) to its
// closing triple quote, and an unquoted value over a '"' inside it
// (`password=ab"cd`).
//
// A key may also be the value of a name member, "name" or "key", with the secret in a
// "value" member beside it, before or after it with at most a few other members
// between (`<property name="password" value="***"/>`, HAR and Kubernetes
// {"name":"Authorization","value":"***"}, `{"Key":"token","Value":"***"}`), or, for
// an XML element with no value attribute, in the element's text (`<param
// name="token">***</param>`). So may the text of a "key" or "name" element, with the
// secret in the text of the element after it (a property list's
// <key>Password</key><string>***</string>, an XML-RPC member's
// <name>token</name><value>***</value>). The name must be a single word
// ("DB_PASSWORD"): "reset password" names no key. A "type" member whose value is
// "password" (an HTML password field, `<input type="password" value="***">`) makes
// the value member beside it the value of "password".
//
// Escaped text is masked as well: a key, separator or quote may be percent-encoded
// (`password%3D***`, `?api%5Fkey=***`, `password+%3D+***` with a form's '+' for a
// space around the separator), an HTML or XML character reference
// (`password=&quot;***&quot;`, `&lt;token&gt;***&lt;/token&gt;`), or a JSON \u escape
// of an ASCII character (`\u003cpassword\u003e***`), over up to three layers of
// escaping; the value is masked where it stands, its escaped quotes kept. Text with no
// sensitive key followed by a value in any of these forms is returned as it is.
func (r *Redactor) String(s string) string {
	if r == nil || len(r.keys) == 0 {
		return s
	}
	return r.unescaped(r.mask(s))
}

// mask masks the values String finds in s as it stands.
func (r *Redactor) mask(s string) string {
	var sc scanner
	sc.init(r, s)
	if sc.sql < 0 && sc.cmd < 0 && strings.IndexByte(s, '=') < 0 && strings.IndexByte(s, ':') < 0 && strings.IndexByte(s, '\t') < 0 &&
		strings.IndexByte(s, '>') < 0 && !startsWord(s, '-') && !startsWord(s, '\'') && !startsWord(s, '"') &&
		strings.IndexByte(s, '(') < 0 && strings.IndexByte(s, '/') < 0 && !quotesAuth(s) {
		return s
	}
	sc.pw = indexPassword(s)
	var b strings.Builder
	done := 0 // s[:done] is written to b (or needs no change)
	for {
		vs, ve, quote, ok := sc.next()
		if !ok {
			break
		}
		if done == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[done:vs])
		b.WriteString(quote)
		b.WriteString(Mask)
		b.WriteString(quote)
		done = ve
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// mayStart marks the bytes a value to mask may follow: separators, the '>' of a start
// tag, the dash of a flag, the quote of a value after a space and the '/' of an
// Oracle logon.
var mayStart = [256]bool{'=': true, ':': true, '\t': true, '>': true, '-': true, '"': true, '\'': true, '/': true}

// scanner finds the values to mask in s, one after the other.
type scanner struct {
	r    *Redactor
	s    string
	i    int // where the search for the next separator goes on
	done int // where the value found last ends
	// pending is the separator of a value member that a name member before it made
	// sensitive (`name="password" value="x"`), or the '>' before an element's text
	// (`<param name="token">x</param>`); 0 if none.
	pending int
	checked int // the end of the members namedValue looked at
	sql     int // where the next SQL password starts (see identifiedValue), -1 if none
	ident   identFinder
	dsnEnd  int // the end of the word dsnPassword looked at last
	pw      int // where the word "password" first occurs (see indexPassword)
	// cmd and cmdEnd are the bounds of the next password of a command (see
	// authFinder), cmdQuote its quote; cmd is -1 if none.
	cmd, cmdEnd int
	cmdQuote    string
	auth        authFinder
	cli         commandFinder    // redis-cli, before its -a flag
	rman        [2]commandFinder // rman and RMAN, before a logon
	lt          int              // where the first '<' is, if ltKnown (see tagFrom)
	ltKnown     bool
}

// init makes sc, a zero scanner, a scanner for the values to mask in s, but for its
// pw (see scanner.pw), which text that has no value to mask does not need.
func (sc *scanner) init(r *Redactor, s string) {
	sc.r, sc.s, sc.ident = r, s, newIdentFinder(s)
	sc.sql = identifiedValue(s, 0, &sc.ident)
	sc.cmd, sc.cmdEnd, sc.cmdQuote = sc.auth.next(s, 0)
	if sc.cmd >= 0 && !r.Sensitive("password") {
		// A command's password is the value of "password": none is.
		sc.auth, sc.cmd = authFinder{line: len(s) + 1, at: -1, searched: true}, -1
	}
}

// next returns the bounds of the next value to mask, with its quotes, and its quote
// (which the mask keeps), or false if there is none.
func (sc *scanner) next() (vs, ve int, quote string, ok bool) {
	s := sc.s
	if sc.sql >= 0 && sc.sql < sc.i {
		sc.sql = identifiedValue(s, sc.i, &sc.ident) // the value masked last covered it
	}
	if sc.cmd >= 0 && sc.cmd < sc.i {
		sc.cmd, sc.cmdEnd, sc.cmdQuote = sc.auth.next(s, sc.i)
	}
	limit := len(s)
	if sc.sql >= 0 {
		limit = sc.sql
	}
	if sc.cmd >= 0 && sc.cmd < limit {
		limit = sc.cmd
	}
	if vs, ve, quote, ok = sc.scan(limit); ok || limit == len(s) {
		return vs, ve, quote, ok
	}
	if limit == sc.cmd {
		// A command's password (AUTH pw), which no separator announces either.
		vs, ve, quote = sc.cmd, sc.cmdEnd, sc.cmdQuote
		sc.cmd, sc.cmdEnd, sc.cmdQuote = sc.auth.next(s, ve)
		sc.done, sc.i = ve, ve
		return vs, ve, quote, true
	}
	// The scan stopped at an SQL password (IDENTIFIED BY x), which no separator
	// announces: it is looked for apart, not byte by byte.
	vs, ve, quote = sqlValue(s, sc.sql)
	if sc.sql = replacedValue(s, ve); sc.sql < 0 {
		sc.sql = identifiedValue(s, ve, &sc.ident)
	}
	sc.done, sc.i = ve, ve
	return vs, ve, quote, true
}

// scan returns the bounds of the next value to mask (see next) that a byte of
// mayStart before s[limit] starts, or false if there is none.
func (sc *scanner) scan(limit int) (vs, ve int, quote string, ok bool) {
	r, s := sc.r, sc.s
	for ; sc.i < limit; sc.i++ {
		i := sc.i
		if !mayStart[s[i]] {
			continue
		}
		switch {
		case s[i] == '"' || s[i] == '\'':
			if i > sc.pw && i > sc.done && passwordArg(s[sc.done:], i-sc.done) >= 0 && r.Sensitive("password") {
				vs, ve, quote = sqlValue(s, sc.done+passwordArg(s[sc.done:], i-sc.done))
			} else if vs, ve, quote = r.quotedAfterKey(s, sc.done, i); vs == ve {
				// A quoted string that is an AUTH command ({"log":"AUTH pw"}), looked
				// at here, where each quote is, rather than by a search of its own.
				if i+1 == len(s) || s[i+1]|0x20 != 'a' {
					continue // the common case, cheaply
				}
				if vs, ve, quote = quotedAuth(s, i); vs < 0 || !r.Sensitive("password") {
					continue
				}
			}
		case s[i] == '/':
			if i == 0 || !isAlnum(s[i-1]) {
				continue // the common case, cheaply: a logon has a user before its '/'
			}
			if vs, ve, quote = sc.logonPassword(i); vs == ve || !r.Sensitive("password") {
				continue
			}
		case s[i] == '-':
			if vs, ve, quote = r.flagValue(s, i); vs == ve {
				if vs, ve, quote = sc.redisCLIFlag(i); vs == ve || !r.Sensitive("password") {
					continue
				}
			}
		case s[i] == '>':
			if i == sc.pending {
				vs, ve = i+1, textEnd(s, i+1)
			} else {
				// An XML element's start tag: its text is the value.
				vs, ve = r.elementText(s, sc.done, i)
			}
			if vs == ve {
				continue
			}
		case s[i] == ':' && strings.HasPrefix(s[i+1:], "//"):
			// A URL: its userinfo's password is the value of a key "password".
			if vs, ve = urlPassword(s, i+3); vs == ve || !r.Sensitive("password") {
				continue
			}
		case s[i] == ':' && i >= sc.dsnEnd && r.dsnPassword(sc, i):
			vs, ve, quote = i+1, sc.dsnEnd, ""
		case s[i] == '=' && i > sc.pw && setPasswordValue(s[sc.done:], i-sc.done) >= 0 && r.Sensitive("password"):
			vs, ve, quote = sqlValue(s, sc.done+setPasswordValue(s[sc.done:], i-sc.done))
			if p := replacedValue(s, ve); p >= 0 {
				sc.sql = p // before any IDENTIFIED BY value after it: next masks it
			}
		default:
			// A key starts after the value masked last: a secret ending in a key
			// name ("password\tmytoken\tnext") is not the key of what follows it.
			key := keyBefore(s[sc.done:], i-sc.done)
			if key == "" {
				continue
			}
			if i != sc.pending && !r.Sensitive(key) {
				// A name member may make the value member beside it sensitive.
				p := sc.namedValue(i, key)
				if p > i {
					sc.pending = p
				}
				if p != i {
					continue
				}
			}
			if s[i] == '\t' && sepAfterBlanks(s, i) {
				continue // "key\t= value": the '=' is the separator
			}
			vs, ve, quote = valueAfter(s, opEnd(s, i))
			if a := passwordCallArg(s, vs); a >= 0 {
				vs, ve, quote = sqlValue(s, a) // password=PASSWORD('pw') keeps its call
			}
			if s[i] == ':' && quote == "" {
				vs, ve, quote = yamlValue(s, vs, ve, quote)
			}
			if quote == "" {
				ve = sc.attrValueEnd(vs, ve)
			}
			if vs == ve {
				continue
			}
			if quote == "" && r.labels(s, vs, ve) {
				continue
			}
			switch {
			case quote != "":
			case isBlockIndicator(s[vs:ve]) && strings.IndexByte(s[i:vs], '\n') < 0:
				ve = blockEnd(s, i, ve)
			case isCookieHeader(key):
				ve = cookiesEnd(s, ve)
			}
		}
		sc.done, sc.i = ve, ve
		return vs, ve, quote, true
	}
	return 0, 0, "", false
}

// dsnPassword reports whether the ':' at s[colon] separates a user from a password
// in a Go MySQL DSN (go-sql-driver/mysql: "bob:pw@tcp(db:3306)/app", "bob:pw@/app"),
// whose password is the value of a key "password" as a URL's is, and sets sc.dsnEnd
// to where the password ends (the last '@' before the address). Otherwise it sets
// sc.dsnEnd to the end of the word it looked at, so that the other colons of the word
// are not looked at again: the scans stay linear.
func (r *Redactor) dsnPassword(sc *scanner, colon int) bool {
	s := sc.s
	u := colon
	for u > 0 && isKeyChar(s[u-1]) {
		u--
	}
	if u == colon || u > 0 && !isBlank(s[u-1]) && !strings.ContainsRune("\n\"'=(", rune(s[u-1])) {
		return false // no user, or not at the start of a word
	}
	end := colon + 1
	for end < len(s) && !isBlank(s[end]) && s[end] != '\n' && s[end] != '\r' && s[end] != '"' && s[end] != '\'' {
		end++
	}
	sc.dsnEnd = end
	for at := end - 1; at > colon; at-- {
		if s[at] != '@' {
			continue
		}
		if a := s[at+1 : end]; strings.HasPrefix(a, "tcp(") || strings.HasPrefix(a, "tcp6(") ||
			strings.HasPrefix(a, "unix(") || strings.HasPrefix(a, "/") {
			sc.dsnEnd = at
			return at > colon+1 && r.Sensitive("password")
		}
	}
	return false
}

// urlPassword returns the bounds of the password in the userinfo of the URL whose
// authority starts at s[from] (after "scheme://"): "postgres://app:pw@db/x" gives
// "pw". The authority ends at a '/', '?', '#', white space or a quote; the userinfo
// at its last '@', the user name at the first ':' of the userinfo.
func urlPassword(s string, from int) (start, end int) {
	auth := len(s)
	if j := strings.IndexAny(s[from:], "/?#\"'<> \t\r\n"); j >= 0 {
		auth = from + j
	}
	at := strings.LastIndexByte(s[from:auth], '@')
	if at < 0 {
		return from, from
	}
	colon := strings.IndexByte(s[from:from+at], ':')
	if colon < 0 {
		return from, from
	}
	return from + colon + 1, from + at
}

// labels reports whether the plain value s[vs:ve] of a sensitive key starts a
// sensitive pair whose value goes on past it: in `auth: password="x"` the value of
// "auth" ends at the quote, so masking it would leave the password; the key is a
// label, and the pair masks its own value.
func (r *Redactor) labels(s string, vs, ve int) bool {
	k := strings.IndexAny(s[vs:ve], "=:")
	if k <= 0 || !r.Sensitive(keyBefore(s, vs+k)) {
		return false
	}
	start, end, _ := valueAfter(s, opEnd(s, vs+k))
	return end > start && end > ve
}

// sepAfterBlanks reports whether the first character after the blanks at s[i:] is
// '=' or ':'.
func sepAfterBlanks(s string, i int) bool {
	for i < len(s) && isBlank(s[i]) {
		i++
	}
	return i < len(s) && (s[i] == '=' || s[i] == ':')
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

func isKeyChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.'
}

// keyBefore returns the key that ends before the separator at s[sep]: optional blanks,
// an optional closing quote (possibly escaped), then key characters.
func keyBefore(s string, sep int) string {
	j := sep
	for j > 0 && isBlank(s[j-1]) {
		j--
	}
	if j > 0 && (s[j-1] == '"' || s[j-1] == '\'') {
		j--
		if j > 0 && s[j-1] == '\\' { // an escaped quote: JSON inside a quoted message
			j--
		}
	}
	end := j
	for j > 0 && isKeyChar(s[j-1]) {
		j--
	}
	return s[j:end]
}
