package interceptor

import (
	"cmp"
	"slices"
	"strings"
)

// maxUnescape bounds how many layers of escaping String undoes (an HTML attribute in
// a URL is two).
const maxUnescape = 3

// span is a part of a text to mask.
type span struct{ start, end int }

// unescaped masks, in s, the values String finds in s once its escapes are undone,
// layer by layer: percent-encoding (password%3Dx), HTML and XML character references
// (password=&quot;x&quot;) and JSON's \u escapes of ASCII (\u003cpassword\u003e, as
// Go's encoder writes <, > and &). Each value is masked where it stands in s, in its
// escaped form, quotes left as they are. Undoing escapes only adds masks to those of
// s as it stands ("password=a%26b" stays "password=***", not "password=***%26b").
func (r *Redactor) unescaped(s string) string {
	if strings.IndexByte(s, '%') < 0 && strings.IndexByte(s, '&') < 0 && strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var spans []span
	text, at := s, []int(nil)
	for range maxUnescape {
		u, uat := unescape(text)
		if uat == nil {
			break
		}
		if at != nil {
			for k, p := range uat {
				uat[k] = at[p]
			}
		}
		text, at = u, uat
		var sc scanner
		sc.init(r, text)
		sc.pw = indexPassword(text)
		for {
			vs, ve, quote, ok := sc.next()
			if !ok {
				break
			}
			if quote != "" {
				vs += len(quote)
				if strings.HasSuffix(text[vs:ve], quote) {
					ve -= len(quote)
				}
			}
			if vs < ve {
				spans = append(spans, span{at[vs], at[ve]})
			}
		}
	}
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	var b strings.Builder
	b.Grow(len(s))
	done := 0
	for _, sp := range spans {
		if sp.end <= done {
			continue // inside a span masked already
		}
		b.WriteString(s[done:max(done, sp.start)])
		b.WriteString(Mask)
		done = sp.end
	}
	b.WriteString(s[done:])
	return b.String()
}

// unescape returns s with its escapes undone (see unescaped), and where in s each
// byte of the result starts, with len(s) after the last; nil if s has no escape.
func unescape(s string) (string, []int) {
	var b []byte
	var at []int
	f := escapeFinder{s: s, at: [3]int{-1, -1, -1}}
	done := 0 // s[:done] is undone into b
	for {
		i, c, n := f.next(done)
		if n == 0 {
			break
		}
		if b == nil {
			b, at = make([]byte, 0, len(s)), make([]int, 0, len(s)+1)
		}
		b = append(b, s[done:i]...)
		for k := done; k <= i; k++ {
			at = append(at, k)
		}
		sep := s[i] == '%' && (c == '=' || c == ':')
		if sep {
			// A form encodes a space as '+': "password = x" in a form value is
			// password+%3D+x. Only the '+' around an encoded separator is taken
			// for a blank; elsewhere it may be part of a value (ab+cd).
			for k := len(b) - 1; k >= len(b)-(i-done) && b[k] == '+'; k-- {
				b[k] = ' '
			}
		}
		b = append(b, c)
		done = i + n
		for sep && done < len(s) && s[done] == '+' {
			b, at = append(b, ' '), append(at, done)
			done++
		}
	}
	if b == nil {
		return s, nil
	}
	b = append(b, s[done:]...)
	for k := done; k <= len(s); k++ {
		at = append(at, k)
	}
	return string(b), at
}

// escapeStarts are the bytes an escape starts with.
var escapeStarts = [3]byte{'%', '&', '\\'}

// escapeFinder finds the escapes of s in order. It keeps where each of escapeStarts
// occurs next, so that text with many of one and none of another (a long query
// string) is searched once, not once per '&'.
type escapeFinder struct {
	s  string
	at [3]int // where escapeStarts[k] occurs next (len(s) for nowhere), or -1 before the first search
}

// next returns the first escape at or after s[from]: where it is, the byte it stands
// for and its length (0 if there is none).
func (f *escapeFinder) next(from int) (i int, c byte, n int) {
	for i = from; ; i++ {
		first := len(f.s)
		for k, b := range escapeStarts {
			if f.at[k] < i {
				f.at[k] = len(f.s)
				if j := strings.IndexByte(f.s[i:], b); j >= 0 {
					f.at[k] = i + j
				}
			}
			first = min(first, f.at[k])
		}
		if first == len(f.s) {
			return len(f.s), 0, 0
		}
		i = first
		if c, n = escapeAt(f.s, i); n > 0 {
			return i, c, n
		}
	}
}

// entities are the named character references String undoes: XML's five.
var entities = map[string]byte{"quot": '"', "apos": '\'', "lt": '<', "gt": '>', "amp": '&'}

// escapeAt returns the byte the escape at s[i] stands for and the escape's length, or
// 0, 0 if there is none: %XX, &name; or &#N; or &#xH; (of an ASCII character),
// \u00XX (of an ASCII character).
func escapeAt(s string, i int) (byte, int) {
	switch s[i] {
	case '%':
		if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			return unhex(s[i+1])<<4 | unhex(s[i+2]), 3
		}
	case '\\':
		if strings.HasPrefix(s[i:], `\u00`) && i+5 < len(s) && isHex(s[i+4]) && isHex(s[i+5]) && s[i+4] < '8' {
			return unhex(s[i+4])<<4 | unhex(s[i+5]), 6
		}
	case '&':
		end := strings.IndexByte(s[i+1:min(len(s), i+8)], ';')
		if end <= 0 {
			return 0, 0
		}
		ref := s[i+1 : i+1+end]
		if c, ok := entities[ref]; ok {
			return c, end + 2
		}
		if len(ref) < 2 || ref[0] != '#' {
			return 0, 0
		}
		base, digits := 10, ref[1:]
		if digits[0] == 'x' || digits[0] == 'X' {
			base, digits = 16, digits[1:]
		}
		n := 0
		for k := 0; k < len(digits); k++ {
			d := digits[k]
			switch {
			case '0' <= d && d <= '9' || base == 16 && isHex(d):
				n = n*base + int(unhex(d))
			default:
				return 0, 0
			}
		}
		if digits != "" && n < 0x80 {
			return byte(n), end + 2
		}
	}
	return 0, 0
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}
