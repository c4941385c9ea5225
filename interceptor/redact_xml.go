package interceptor

import "strings"

// elementText returns the bounds of the text of the XML element whose start tag ends
// at s[gt] and starts at or after s[from] ("<password>x</password>" gives "x"), if
// the element's local name is sensitive: everything up to the element's end tag, or
// without one, like an unclosed quote, the rest of s. An element whose text is a
// sensitive key names the element after it (see namedElement). It returns gt, gt
// otherwise. The scans stop at the previous '>' and at the end tag found, which the
// caller skips: redacting text with many tags stays linear in its length.
func (r *Redactor) elementText(s string, from, gt int) (start, end int) {
	name := startTag(s, from, gt)
	switch local := name[strings.LastIndexByte(name, ':')+1:]; {
	case name == "":
	case r.Sensitive(local):
		return gt + 1, endTag(s, gt+1, name)
	case isNameKey(local):
		return r.namedElement(s, gt, name)
	}
	return gt, gt
}

// namedElement returns the bounds of the text of the element after the element
// <name>key</name>, whose start tag ends at s[gt], if key is a sensitive key: a
// property list's <key>Password</key><string>x</string>, an XML-RPC member's
// <name>token</name><value>x</value>. Only white space may stand between the two
// elements. It returns gt, gt otherwise.
func (r *Redactor) namedElement(s string, gt int, name string) (start, end int) {
	i := gt + 1
	k := strings.IndexByte(s[i:], '<')
	if k <= 0 {
		return gt, gt
	}
	key, k := s[i:i+k], i+k // the end tag must follow the key
	if !strings.HasPrefix(s[k:], "</") || !strings.HasPrefix(s[k+2:], name) ||
		k+2+len(name) >= len(s) || s[k+2+len(name)] != '>' {
		return gt, gt
	}
	if !r.secretName(key) {
		return gt, gt
	}
	lt := skipSpace(s, k+3+len(name))
	next := strings.IndexByte(s[lt:], '>')
	if lt == len(s) || s[lt] != '<' || next < 0 || startTag(s, lt, lt+next) == "" {
		return gt, gt
	}
	next += lt
	return next + 1, endTag(s, next+1, startTag(s, lt, next))
}

// startTag returns the name of the element whose start tag ends at s[gt] and starts
// at or after s[from], or "" if there is none there (an end tag, an empty element, a
// '>' in text).
func startTag(s string, from, gt int) string {
	lt := strings.LastIndexAny(s[from:gt], "<>")
	if lt < 0 || s[from+lt] != '<' {
		return ""
	}
	lt += from
	name := s[lt+1 : gt]
	if n := strings.IndexAny(name, " \t\r\n"); n >= 0 {
		name = name[:n] // attributes follow
	}
	if name == "" || s[gt-1] == '/' { // "<>", an end tag or an empty element
		return ""
	}
	for i := 0; i < len(name); i++ {
		if !isKeyChar(name[i]) && name[i] != ':' {
			return ""
		}
	}
	return name
}

// endTag returns where the end tag of the element name whose text starts at s[start]
// is, or, without one, len(s).
func endTag(s string, start int, name string) int {
	for j := start; ; j += 2 {
		k := strings.Index(s[j:], "</")
		if k < 0 {
			return len(s)
		}
		j += k
		if e := j + 2 + len(name); strings.HasPrefix(s[j+2:], name) && (e == len(s) || !isKeyChar(s[e]) && s[e] != ':') {
			return j
		}
	}
}

// textEnd returns where the text of an element that starts at s[i] ends: at the next
// end tag (a CDATA section and child elements are text), or without one, like an
// unclosed quote, at the end of s.
func textEnd(s string, i int) int {
	if k := strings.Index(s[i:], "</"); k >= 0 {
		return i + k
	}
	return len(s)
}

// attrValueEnd returns where the plain value s[vs:ve] ends if it is an unquoted
// attribute value of a start tag (`<input name=password value=x>`): at the '>' or
// "/>" that ends the tag, which, like the text after it, is no part of the value.
// Elsewhere a '>' is part of the value (password=a>b, a<b and password=x>y), and it
// returns ve.
func (sc *scanner) attrValueEnd(vs, ve int) int {
	s := sc.s
	k := strings.IndexByte(s[vs:ve], '>')
	if k < 0 {
		return ve
	}
	if from := sc.tagFrom(vs); startTag(s, from, vs) == "" || !opensTag(s, strings.LastIndexByte(s[from:vs], '<')+from) {
		return ve
	}
	end := vs + k
	if end > vs && s[end-1] == '/' {
		end--
	}
	return end
}

// opensTag reports whether the '<' at s[lt], before the name of a start tag, opens
// one: the name starts with a letter or '_', as an XML or HTML name does, and the
// '<' does not follow an operand (a letter, a digit, '_', ')' or ']'), as in a
// comparison (a<b, len(x)<n), which a value cut at a '>' after it would leave half
// unmasked. It is asked only where the cost of a wrong answer is more text masked,
// not less.
func opensTag(s string, lt int) bool {
	if c := s[lt+1]; !isLetter(c) && c != '_' {
		return false
	}
	if lt == 0 {
		return true
	}
	c := s[lt-1]
	return !isAlnum(c) && c != '_' && c != ')' && c != ']'
}

// voidElements are the HTML elements that have no text and no end tag. <param> is
// one in HTML but holds its value as text in XML (<param name="token">x</param>), so
// it is not listed.
var voidElements = []string{"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

// isVoidElement reports whether the element name, namespace prefix aside, is an HTML
// void element: the text after its tag (a field's label) is not its value.
func isVoidElement(name string) bool {
	local := name[strings.LastIndexByte(name, ':')+1:]
	for _, v := range voidElements {
		if strings.EqualFold(local, v) {
			return true
		}
	}
	return false
}
