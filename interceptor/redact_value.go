package interceptor

import (
	"bytes"
	"strings"
)

// Where a sensitive key's value ends: the value forms String masks (quoted strings,
// groups, YAML properties and blocks, cookies, authorization credentials, plain words).

// yamlValue returns the bounds of the value s[vs:ve] (quoted with quote) of a YAML
// key, after the node properties it may start with: a tag (!!str, forcing 1234 to
// be a string; !!binary) and an anchor (&pw), each followed by blanks and the value
// on the same line. Without properties, it returns the bounds it was given.
func yamlValue(s string, vs, ve int, quote string) (int, int, string) {
	for range 2 { // a tag and an anchor, in either order
		if vs >= len(s) || s[vs] != '!' && s[vs] != '&' {
			break
		}
		p := vs + 1
		for p < len(s) && !isBlank(s[p]) && s[p] != '\n' && s[p] != '\r' {
			p++
		}
		v := p
		for v < len(s) && isBlank(s[v]) {
			v++
		}
		if p == vs+1 || v == p || v == len(s) || s[v] == '\n' || s[v] == '\r' {
			break // no property, or no value after it on its line
		}
		vs, ve, quote = valueAfter(s, v)
	}
	return vs, ve, quote
}

// opEnd returns where the separator at s[sep] ends: a separator of two or three
// characters ("=>" in a Ruby or PHP hash, ":=", "==" and "===" in code and in a
// condition an expression error quotes) is one separator, whose value comes after
// it, not a value of its own.
func opEnd(s string, sep int) int {
	i := sep + 1
	if s[sep] == '\t' {
		return i
	}
	if s[sep] == '=' && i < len(s) && s[i] == '>' {
		return i + 1
	}
	for i < len(s) && s[i] == '=' && i-sep < 3 {
		i++
	}
	return i
}

// isBlockIndicator reports whether v starts a YAML block scalar: '|' or '>', then
// optional chomping and indentation indicators ("|-", ">+", "|2").
func isBlockIndicator(v string) bool {
	return v != "" && (v[0] == '|' || v[0] == '>') && strings.Trim(v[1:], "+-0123456789") == ""
}

// blockEnd returns the end of the YAML block scalar whose indicator, on the line of
// the separator at s[sep], ends at s[end]: the lines after it that are indented
// deeper than that line (blank lines among them included), such as the lines of a
// private key. Without such lines, the block ends at end.
func blockEnd(s string, sep, end int) int {
	lineStart := strings.LastIndexByte(s[:sep], '\n') + 1
	indent := 0
	for lineStart+indent < len(s) && isBlank(s[lineStart+indent]) {
		indent++
	}
	blockEnd := end
	for j := end; j < len(s); {
		if strings.HasPrefix(s[j:], "\r\n") {
			j++
		}
		if s[j] != '\n' {
			break
		}
		j++ // the next line
		k := j
		for k < len(s) && isBlank(s[k]) {
			k++
		}
		lineEnd := len(s)
		if n := strings.IndexByte(s[k:], '\n'); n >= 0 {
			lineEnd = k + n
		}
		if k < lineEnd && s[lineEnd-1] == '\r' {
			lineEnd--
		}
		if k == lineEnd { // a blank line
			j = lineEnd
			continue
		}
		if k-j <= indent {
			break
		}
		blockEnd, j = lineEnd, lineEnd
	}
	return blockEnd
}

// isCookieHeader reports whether key names a Cookie header, whose value is a list of
// cookies, and not a Set-Cookie header, whose value is one cookie and its attributes
// (Path, Expires), which are not secret.
func isCookieHeader(key string) bool {
	var buf [64]byte
	n := appendNormalized(buf[:0], key)
	return bytes.HasSuffix(n, []byte("cookie")) && !bytes.HasSuffix(n, []byte("setcookie"))
}

// cookiesEnd returns where the cookies of a Cookie header end, given the end of the
// first one: every "; name=value" after it is a cookie too (a session id as likely
// as the first).
func cookiesEnd(s string, end int) int {
	for end < len(s) && s[end] == ';' {
		j := end + 1
		for j < len(s) && isBlank(s[j]) {
			j++
		}
		e := plainEnd(s, j)
		if strings.IndexByte(s[j:e], '=') <= 0 {
			break
		}
		end = e
	}
	return end
}

// authSchemes are the words that precede credentials in an authorization value.
var authSchemes = []string{"bearer", "basic", "digest", "token", "negotiate", "apikey"}

// valueAfter returns the bounds of the value that starts after the separator ending at
// s[from-1]: a quoted string (with its quote, which the mask keeps; an escaped quote
// \" counts, for JSON inside a quoted message), a {...}, [...] or (...) group (a
// tuple, as in Python's auth=("user", "pw")), or a run of characters up to white
// space or one of , ; & ) } ] ". An authorization scheme word extends the value to the
// credentials after it. The value may start on the next line (one line break, then
// blanks); an empty line ends it.
func valueAfter(s string, from int) (start, end int, quote string) {
	i := valueStart(s, from)
	if i >= len(s) {
		return i, i, ""
	}
	start = i
	if strings.HasPrefix(s[i:], `\"`) {
		if j := strings.Index(s[i+2:], `\"`); j >= 0 {
			return start, i + 2 + j + 2, `\"`
		}
		return start, len(s), `\"`
	}
	switch c := s[i]; c {
	case '"', '\'':
		if q := s[i:min(i+3, len(s))]; q == `"""` || q == "'''" {
			// A TOML or Python multi-line string: its quotes are three.
			if j := strings.Index(s[i+3:], q); j >= 0 {
				return start, i + 3 + j + 3, q
			}
			return start, len(s), q
		}
		for j := i + 1; j < len(s); j++ {
			if s[j] == '\\' && c == '"' {
				j++
				continue
			}
			if c == '\'' && j > i+1 && strings.HasPrefix(s[j:], "''") {
				j++ // a quote escaped YAML's way, "'it''s'", inside the value
				continue
			}
			if s[j] == c {
				if j+1 < len(s) && isAlnum(s[j+1]) {
					// More of the value after its quote (`"ab"cd`): all of it is masked.
					return start, plainEnd(s, j+1), ""
				}
				return start, j + 1, string(c)
			}
		}
		return start, len(s), string(c)
	case '{', '[', '(':
		closing := byte('}')
		switch c {
		case '[':
			closing = ']'
		case '(':
			closing = ')'
		}
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case c:
				depth++
			case closing:
				depth--
				if depth == 0 {
					return start, j + 1, ""
				}
			}
		}
		return start, len(s), ""
	}
	end = plainEnd(s, i)
	word := s[start:end]
	for _, scheme := range authSchemes {
		if strings.EqualFold(word, scheme) {
			if j := credentials(s, end); j > end {
				return start, authParamsEnd(s, j), ""
			}
		}
	}
	return start, end, ""
}

// valueStart returns where the value after the separator ending at s[from-1] starts:
// after blanks, and at most one line break and the blanks after it.
func valueStart(s string, from int) int {
	i := from
	for i < len(s) && isBlank(s[i]) {
		i++
	}
	if strings.HasPrefix(s[i:], "\r\n") {
		i++
	}
	if i < len(s) && s[i] == '\n' {
		i++
		for i < len(s) && isBlank(s[i]) {
			i++
		}
	}
	return i
}

// credentials returns where the credentials after an authorization scheme ending at
// s[end] start: after blanks on the same line, or on the next line of a folded
// header (indented), or on the next line as a word that is not itself a key ("Host:
// h"); it returns end if there are none.
func credentials(s string, end int) int {
	j := end
	for j < len(s) && isBlank(s[j]) {
		j++
	}
	if j == end && j < len(s) && s[j] != '\n' && s[j] != '\r' {
		return end
	}
	if strings.HasPrefix(s[j:], "\r\n") {
		j++
	}
	if j < len(s) && s[j] == '\n' {
		j++
		k := j
		for k < len(s) && isBlank(s[k]) {
			k++
		}
		if k == j {
			// Not folded: a credential still, unless a key (base64 may end in '=').
			word := strings.TrimRight(s[k:plainEnd(s, k)], "=")
			if strings.ContainsAny(word, ":=") {
				return end
			}
		}
		j = k
	}
	if j >= len(s) || plainEnd(s, j) == j {
		return end
	}
	return j
}

// authParamsEnd returns where the credentials starting at s[j] end: a token ("Bearer
// abc"), or a list of auth-params (`Digest username="bob", response="..."`), all of
// them, as the response and nonce together let the password be guessed offline.
func authParamsEnd(s string, j int) int {
	end := authParamEnd(s, j)
	if end == j {
		return plainEnd(s, j)
	}
	for end < len(s) && s[end] == ',' {
		k := end + 1
		for k < len(s) && isBlank(s[k]) {
			k++
		}
		e := authParamEnd(s, k)
		if e == k {
			break
		}
		end = e
	}
	return end
}

// authParamEnd returns the end of the auth-param (name=value or name="quoted value")
// at s[j], or j if there is none there. A base64 token's padding ("dXNl==") is not one.
func authParamEnd(s string, j int) int {
	k := j
	for k < len(s) && isKeyChar(s[k]) {
		k++
	}
	if k == j || k+1 >= len(s) || s[k] != '=' || s[k+1] == '=' {
		return j
	}
	k++
	if s[k] != '"' {
		return plainEnd(s, k)
	}
	for k++; k < len(s); k++ {
		if s[k] == '\\' {
			k++
			continue
		}
		if s[k] == '"' {
			return k + 1
		}
	}
	return len(s)
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// plainEnd returns where the unquoted value starting at s[i] ends: at white space or
// one of , ; & ) } ], or at a '"' that ends a quoted message the value is in
// (`msg="password=x"`), one followed by such a character or by the end of s. A '"'
// inside the value (`password=ab"cd`) is part of it.
func plainEnd(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r', ',', ';', '&', ')', '}', ']':
			return i
		case '"':
			if i+1 == len(s) || plainEnd(s[i+1:i+2], 0) == 0 {
				return i
			}
		}
		i++
	}
	return i
}
