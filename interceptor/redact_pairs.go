package interceptor

import "strings"

// maxBeside bounds how many other members (or attributes) may stand between a name
// member and its value member: `<input name="password" type="password" value="x">`.
// The bound keeps redaction linear in the text's length.
const maxBeside = 4

// namedValue looks at the member whose key (not itself sensitive) ends before the
// separator at s[sep], for a key that a name member holds as its value and whose
// secret is in a value member beside it (`<property name="password" value="x"/>`,
// `{"name":"Authorization","value":"Bearer x"}`, `{"Key":"token","Value":"x"}`), or
// for the type of an HTML password field (`<input type="password" value="x">`):
//
//   - for a name member ("name" or "key") whose value is a sensitive key, it returns
//     the separator of the value member after it (see isValueKey), or, if an XML start tag ends after
//     it with no value attribute, the tag's '>', as the element's text is the value
//     (but not for an HTML void element, <input name="password">, which has none);
//   - for a type member ("type") whose value is "password", it returns the separator
//     of the value member after it, name members between included;
//   - for a value member ("value") with such a name or type member after it, it
//     returns sep;
//
// and -1 otherwise. Only members next to each other count, maxBeside others between
// them at most, each with a string or plain value (no object or list). A member inside
// a value looked at already (`{"value":"a 'value':'b"}`) is not looked at again: the
// scans stay linear in the length of s.
func (sc *scanner) namedValue(sep int, key string) int {
	if n := len(key); n < len("key") || n > len("content") || n == len("status") {
		return -1 // the common case, cheaply: no key, name, type, value or content
	}
	r, s := sc.r, sc.s
	isName, isType := isNameKey(key), isTypeKey(key)
	switch {
	case !isName && !isType && !sc.isValueKey(key, sep), sep < sc.checked:
		return -1
	case isName && !r.namesSecret(s, sep), isType && !r.passwordType(s, sep):
		return -1
	}
	named := false // a value member passed a name member naming no secret
	j := valueEnd(s, sep)
	for range maxBeside + 1 {
		if j < 0 {
			return -1
		}
		sc.checked = max(sc.checked, j)
		m, ok := memberAt(s, j)
		switch {
		case !ok:
			// A password field is an <input>, which has no text: what follows its tag
			// is not its value.
			if k := skipSpace(s, j); isName && k < len(s) && s[k] == '>' && !isVoidElement(startTag(s, sc.tagFrom(k), k)) {
				return k // the element's text is the value
			}
			return -1
		case sc.isValueKey(m.key, m.sep):
			if isName || isType {
				return m.sep
			}
			return -1 // another pair
		case isName:
			if isNameKey(m.key) {
				return -1 // another pair
			}
		case isType:
			if isTypeKey(m.key) {
				return -1 // another field
			}
			// A name member beside the type names the field (name="new_pass"), which
			// the type says is a password whatever it is called.
		case isTypeKey(m.key):
			if r.passwordType(s, m.sep) {
				return sep
			}
		case isNameKey(m.key):
			if named {
				return -1 // another pair
			}
			if r.namesSecret(s, m.sep) {
				return sep
			}
			// The field's own name, in <input value="x" name="new" type="password">:
			// its type may still say the value is a password.
			named = true
		}
		j = valueEnd(s, m.sep)
	}
	return -1
}

// maxTag bounds how far back from an attribute the start of its tag is looked for, so
// that text with many attributes is not searched back to its start from each of
// them.
const maxTag = 512

// tagFrom returns where to look back from s[at] for the start of the tag at is in
// (see startTag): at most maxTag bytes back, and nowhere (at) in text with no '<'
// before at, the common case, which one search tells.
func (sc *scanner) tagFrom(at int) int {
	if !sc.ltKnown {
		sc.lt, sc.ltKnown = strings.IndexByte(sc.s, '<'), true
	}
	if sc.lt < 0 || sc.lt >= at {
		return at
	}
	return max(sc.lt, at-maxTag)
}

// isValueKey reports whether a member with key, whose separator is at s[sep], holds
// the value a name or type member beside it announces: "value", or "content" in an
// HTML <meta> element (<meta name="csrf-token" content="x">).
func (sc *scanner) isValueKey(key string, sep int) bool {
	if isKeyword(key, "value") {
		return true
	}
	if !isKeyword(key, "content") {
		return false
	}
	// The tag may start before a value masked already: <meta x-token="***" ...>.
	name := startTag(sc.s, sc.tagFrom(sep), sep)
	return isKeyword(name[strings.LastIndexByte(name, ':')+1:], "meta")
}

// isNameKey reports whether a member with key names the value of the member beside it.
func isNameKey(key string) bool {
	return isKeyword(key, "name") || isKeyword(key, "key")
}

// namesSecret reports whether the value after the separator at s[sep], quoted or not,
// is a sensitive key (see secretName).
func (r *Redactor) namesSecret(s string, sep int) bool {
	return r.secretName(wordAfter(s, sep))
}

// passwordType reports whether the value after the separator at s[sep] is "password":
// the type of an HTML password field, whose value is the value of a key "password".
func (r *Redactor) passwordType(s string, sep int) bool {
	return r.isPasswordType(wordAfter(s, sep))
}

func (r *Redactor) isPasswordType(typ string) bool {
	return strings.EqualFold(typ, "password") && r.Sensitive("password")
}

// isTypeKey reports whether a member with key may give the type of a form field.
func isTypeKey(key string) bool { return isKeyword(key, "type") }

// wordAfter returns the value after the separator at s[sep], quoted or not, if it is a
// word of key characters, else "". It looks no further than the key characters that
// start the value: every '=' of "name=name=name=..." makes a name member, and
// scanning each one's whole value would take time quadratic in the text's length.
func wordAfter(s string, sep int) string {
	vs := valueStart(s, opEnd(s, sep))
	quote := ""
	if strings.HasPrefix(s[vs:], `\"`) {
		quote = `\"`
	} else if vs < len(s) && (s[vs] == '"' || s[vs] == '\'') {
		quote = s[vs : vs+1]
	}
	start := vs + len(quote)
	end := start
	for end < len(s) && isKeyChar(s[end]) {
		end++
	}
	if quote == "" {
		// The word must be the whole value: a plain value ends there.
		if end < len(s) && plainEnd(s[end:min(end+2, len(s))], 0) > 0 {
			return ""
		}
	} else if !strings.HasPrefix(s[end:], quote) || end+len(quote) < len(s) && isAlnum(s[end+len(quote)]) {
		return "" // unclosed, not a word, or more of the value after its quote
	}
	return s[start:end]
}

// secretName reports whether name, the value of a name member or entry, is a
// sensitive key: a word of key characters ("DB_PASSWORD", "X-Api-Key"). Text with
// spaces ("reset password") is a name, not a key.
func (r *Redactor) secretName(name string) bool {
	for i := 0; i < len(name); i++ {
		if !isKeyChar(name[i]) {
			return false
		}
	}
	return name != "" && r.Sensitive(name)
}

// maskNamed masks the "value" entries of m (ignoring case) if its "name" or "key"
// entry is a sensitive key, or its "type" entry is "password": a HAR header, a
// Kubernetes variable, an AWS tag or a form field kept as an attribute holds its
// secret so, as their text does (see namedValue).
func maskNamed[V any](r *Redactor, m map[string]V, mask V, w *walk) {
	named := false
	for k, v := range m {
		if s, ok := any(v).(string); ok && (isNameKey(k) && r.secretName(s) || isTypeKey(k) && r.isPasswordType(s)) {
			named = true
			break
		}
	}
	if !named {
		return
	}
	for k := range m {
		if strings.EqualFold(k, "value") {
			m[k] = mask
			w.masked++
		}
	}
}

// scalarAfter returns the bounds of the string or plain value after the separator at
// s[sep], quotes included, and its quote: a word ends at white space, as an
// authorization scheme's does not ("token" names a key, not a scheme). For an object,
// a list or no value, start and end are equal.
func scalarAfter(s string, sep int) (start, end int, quote string) {
	from := opEnd(s, sep)
	if k := skipSpace(s, from); k < len(s) && (s[k] == '{' || s[k] == '[' || s[k] == '(') {
		return k, k, "" // not scanned: a group may be long, and hold other groups
	}
	vs, ve, quote := valueAfter(s, from)
	switch {
	case vs == ve:
		return vs, vs, ""
	case quote == "" && s[vs] != '"' && s[vs] != '\'' && !strings.HasPrefix(s[vs:], `\"`):
		ve = plainEnd(s, vs)
	}
	return vs, ve, quote
}

// valueEnd returns where the string or plain value after the separator at s[sep]
// ends, or -1 for an object, a list or no value.
func valueEnd(s string, sep int) int {
	if vs, ve, _ := scalarAfter(s, sep); vs < ve {
		return ve
	}
	return -1
}

// member is a key and its separator.
type member struct {
	key string
	sep int
}

// memberAt returns the member that starts at s[j], after white space and at most one
// comma, '&' (a query string) or ';' (a parameter list): a key of key characters, quoted or not (a JSON member, an XML attribute,
// key=value), then '=' or ':'. An XML attribute's namespace prefix (x:value="...") is
// not part of its key.
func memberAt(s string, j int) (member, bool) {
	j = skipSpace(s, j)
	if j < len(s) && (s[j] == ',' || s[j] == '&' || s[j] == ';') {
		j = skipSpace(s, j+1)
	}
	quote := ""
	if strings.HasPrefix(s[j:], `\"`) {
		quote = `\"`
	} else if j < len(s) && (s[j] == '"' || s[j] == '\'') {
		quote = s[j : j+1]
	}
	j += len(quote)
	k := j
	for k < len(s) && isKeyChar(s[k]) {
		k++
	}
	if quote == "" && k > j && k+1 < len(s) && s[k] == ':' && isKeyChar(s[k+1]) {
		// A namespace prefix (x:name="password"): the key is the local name, if an
		// attribute's '=' follows it (a ':' after a word is a separator otherwise).
		l := k + 1
		for l < len(s) && isKeyChar(s[l]) {
			l++
		}
		if e := skipSpace(s, l); e < len(s) && s[e] == '=' {
			j, k = k+1, l
		}
	}
	if k == j || !strings.HasPrefix(s[k:], quote) {
		return member{}, false
	}
	key := s[j:k]
	k = skipSpace(s, k+len(quote))
	if k >= len(s) || s[k] != '=' && s[k] != ':' {
		return member{}, false
	}
	return member{key: key, sep: k}, true
}

func skipSpace(s string, i int) int {
	for i < len(s) && (isBlank(s[i]) || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

//END
