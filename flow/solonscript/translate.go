package solonscript

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file turns the Java statements of a Solon script into JavaScript for goja by a
// token-level rewrite: it never parses Java. Each rule looks at a few tokens around a
// keyword; everything else passes through unchanged, so goja's parser reports what the
// rules do not cover, at its line (the rewrite keeps every token on its line).
//
//	int n = 0;  String s = x;  final var v = 1;  Map<String, Object> m = ...
//	                                           -> let n = 0; let s = x; let v = 1; let m = ...
//	for (String x : list)                      -> for (let x of list)
//	new [java.util.concurrent.atomic.]AtomicInteger(0), AtomicLong
//	                                           -> __atomic(0)
//	new [java.util.]HashMap<>(), ArrayList<>() -> __map(), __list()
//	100L, 1.5f, 2d                             -> 100, 1.5, 2
//	s.length()                                 -> s.length
//	while (c), for (i; c; u), do ... while (c) -> the condition counts a loop step first
//
// Refused at load, with what to write instead: function declarations and arrows (the
// subset has no lambdas), casts, any other "new", Java classes (java.*, Class, Runtime,
// ProcessBuilder), System members other than out, err and currentTimeMillis, and the
// JavaScript names that reach the interpreter itself (eval, constructor, prototype,
// __proto__, globalThis, Reflect, Proxy, Function), and regular expression literals.

type tokKind uint8

const (
	tkSpace tokKind = iota // blanks, line breaks and comments
	tkIdent
	tkNumber
	tkString
	tkPunct
)

type tok struct {
	kind tokKind
	text string
	line int
}

// lex splits src into tokens; strings and comments are kept whole.
func lex(src string) ([]tok, error) {
	var out []tok
	line := 1
	for i := 0; i < len(src); {
		start, startLine := i, line
		c := src[i]
		kind := tkPunct
		switch {
		case c == '\n' || c == ' ' || c == '\t' || c == '\r':
			kind = tkSpace
			i++
		case strings.HasPrefix(src[i:], "//"):
			kind = tkSpace
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case strings.HasPrefix(src[i:], "/*"):
			kind = tkSpace
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, &loadError{line: line, msg: "comment not closed: add */"}
			}
			i += end + 4
		case c == '"' || c == '\'' || c == '`':
			kind = tkString
			i++
			for i < len(src) && src[i] != c {
				if src[i] == '\\' {
					i++
				}
				if i < len(src) && src[i] == '\n' && c != '`' {
					return nil, &loadError{line: line, msg: "string not closed on its line: add " + string(c)}
				}
				i++
			}
			if i >= len(src) {
				return nil, &loadError{line: line, msg: "string not closed: add " + string(c)}
			}
			i++
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			kind = tkNumber
			for i < len(src) && (isIdentByte(src[i]) || src[i] == '.') {
				i++
			}
		case isIdentStart(src[i:]):
			kind = tkIdent
			for i < len(src) && isIdentStart(src[i:]) || i < len(src) && src[i] >= '0' && src[i] <= '9' {
				_, n := utf8.DecodeRuneInString(src[i:])
				i += n
			}
		default:
			_, n := utf8.DecodeRuneInString(src[i:])
			i += n
			if i < len(src) && ((c == '=' || c == '-' && (start == 0 || src[start-1] != '-')) && src[i] == '>' || c == '&' && src[i] == '&' || c == '|' && src[i] == '|') {
				i++
			}
		}
		line += strings.Count(src[start:i], "\n")
		out = append(out, tok{kind: kind, text: src[start:i], line: startLine})
	}
	return out, nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isIdentStart(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return r == '_' || r == '$' || unicode.IsLetter(r)
}

// loadError is a script the subset does not accept, at a line of the script.
type loadError struct {
	line int
	msg  string
}

func (e *loadError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// declTypes are the types a local declaration may name; the type is checked loosely:
// the declaration becomes a let.
var declTypes = map[string]bool{
	"int": true, "long": true, "short": true, "byte": true, "double": true, "float": true, "char": true,
	"boolean": true, "var": true, "String": true, "Integer": true, "Long": true, "Double": true, "Float": true,
	"Boolean": true, "Object": true, "Number": true,
}

// genericTypes may carry type arguments in a declaration (Map<String, Object> m).
var genericTypes = map[string]bool{"Map": true, "HashMap": true, "List": true, "ArrayList": true, "Iterator": true}

// forbidden are names that reach the interpreter or the host, with what to write instead.
var forbidden = map[string]string{
	"function":       "the Java subset has no functions: write the statements inline",
	"class":          "declare no classes: put objects in the context from a Go task (@name)",
	"eval":           "scripts cannot compile code: write the statements themselves",
	"Function":       "scripts cannot compile code: write the statements themselves",
	"constructor":    "scripts cannot reach constructors: use the values in the context",
	"prototype":      "scripts cannot change built-in types",
	"__proto__":      "scripts cannot change built-in types",
	"globalThis":     "read variables by name or with context.get(key)",
	"Reflect":        "reflection is not available: use the values in the context",
	"Proxy":          "reflection is not available: use the values in the context",
	"java":           "Java classes are not available: a script reaches nothing outside its run; use a Go task (@name)",
	"javax":          "Java classes are not available: a script reaches nothing outside its run; use a Go task (@name)",
	"Class":          "reflection is not available: a script reaches nothing outside its run; use a Go task (@name)",
	"Runtime":        "processes are not available: a script reaches nothing outside its run; use a Go task (@name)",
	"ProcessBuilder": "processes are not available: a script reaches nothing outside its run; use a Go task (@name)",
	"import":         "imports are not available: AtomicInteger, AtomicLong, HashMap and ArrayList need none",
}

// systemMembers are the System members a script may use.
var systemMembers = map[string]bool{"out": true, "err": true, "currentTimeMillis": true}

// translate rewrites a Java-subset script into the body of a JavaScript function.
func translate(src string) (string, error) {
	toks, err := lex(src)
	if err != nil {
		return "", err
	}
	t := &translator{toks: toks}
	if err := t.run(); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, k := range t.toks {
		b.WriteString(k.text)
	}
	return b.String(), nil
}

type translator struct {
	toks []tok
}

// next returns the index of the first non-space token after i (len(toks) if none).
func (t *translator) next(i int) int {
	for i++; i < len(t.toks) && t.toks[i].kind == tkSpace; i++ {
	}
	return i
}

// prev returns the index of the last non-space token before i (-1 if none).
func (t *translator) prev(i int) int {
	for i--; i >= 0 && t.toks[i].kind == tkSpace; i-- {
	}
	return i
}

func (t *translator) is(i int, text string) bool {
	return i >= 0 && i < len(t.toks) && t.toks[i].text == text
}

func (t *translator) ident(i int) bool { return i >= 0 && i < len(t.toks) && t.toks[i].kind == tkIdent }

// clear blanks the tokens i..j (inclusive), keeping their line breaks.
func (t *translator) clear(i, j int) {
	for ; i <= j; i++ {
		t.toks[i].text = strings.Repeat("\n", strings.Count(t.toks[i].text, "\n"))
		t.toks[i].kind = tkSpace
	}
}

func (t *translator) fail(i int, format string, args ...any) error {
	return &loadError{line: t.toks[i].line, msg: fmt.Sprintf(format, args...)}
}

func (t *translator) run() error {
	for i := 0; i < len(t.toks); i++ {
		k := t.toks[i]
		var err error
		switch k.kind {
		case tkNumber:
			t.toks[i].text = strings.TrimRight(k.text, "lLfFdD")
			if strings.HasPrefix(k.text, "0x") || strings.HasPrefix(k.text, "0X") {
				t.toks[i].text = strings.TrimRight(k.text, "lL")
			}
		case tkPunct:
			err = t.punct(i)
		case tkIdent:
			err = t.identifier(i)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (t *translator) punct(i int) error {
	switch t.toks[i].text {
	case "=>", "->":
		return t.fail(i, "lambdas are not part of the Java subset: write a loop")
	case "/":
		// A slash where no operand ends before it starts a JavaScript regular expression.
		if p := t.prev(i); p < 0 || t.toks[p].kind == tkPunct && !t.is(p, ")") && !t.is(p, "]") || t.is(p, "return") {
			return t.fail(i, "regular expressions are not part of the Java subset: compare strings with equals, contains or startsWith")
		}
	case "(":
		// A cast: "(int) x". Java-only, and JavaScript would read it as a call.
		if j := t.next(i); t.ident(j) && declTypes[t.toks[j].text] && t.is(t.next(j), ")") && !t.ident(t.prev(i)) {
			return t.fail(i, "casts such as (%s) are not supported: write Math.floor(x) for a whole number, or String(x)", t.toks[j].text)
		}
	case ".":
		// s.length() -> s.length
		if j := t.next(i); t.is(j, "length") {
			if p := t.next(j); t.is(p, "(") && t.is(t.next(p), ")") {
				t.clear(p, t.next(p))
			}
		}
	}
	return nil
}

func (t *translator) identifier(i int) error {
	name := t.toks[i].text
	if p := t.prev(i); t.is(p, ".") {
		if hint, bad := forbidden[name]; bad && name != "java" && name != "javax" && name != "Class" {
			return t.fail(i, "%s is not available: %s", name, hint)
		}
		return nil // a member name: only the receiver decides
	}
	if hint, bad := forbidden[name]; bad {
		return t.fail(i, "%s is not available: %s", name, hint)
	}
	switch {
	case name == "System":
		if j := t.next(i); t.is(j, ".") {
			if m := t.next(j); t.ident(m) && !systemMembers[t.toks[m].text] {
				return t.fail(m, "System.%s is not available: a script reaches nothing outside its run (System.out.println writes to the run's log)", t.toks[m].text)
			}
		}
	case name == "new":
		return t.newExpr(i)
	case name == "final":
		t.clear(i, i)
	case name == "while" || name == "for":
		return t.loop(i)
	case (declTypes[name] || genericTypes[name]) && t.ident(t.next(i)):
		t.toks[i].text = "let"
		t.forEach(i)
	case genericTypes[name] && t.is(t.next(i), "<"):
		end := t.typeArgsEnd(t.next(i))
		if end > 0 && t.ident(t.next(end)) {
			t.toks[i].text = "let"
			t.clear(i+1, end)
			t.forEach(i)
		}
	}
	return nil
}

// forEach rewrites "for (let x : list)" to "for (let x of list)"; decl is the let.
func (t *translator) forEach(decl int) {
	open := t.prev(decl)
	if !t.is(open, "(") || !t.is(t.prev(open), "for") {
		return
	}
	if colon := t.next(t.next(decl)); t.is(colon, ":") {
		t.toks[colon].text = " of "
	}
}

// typeArgsEnd returns the index of the ">" closing the type arguments opened at i.
func (t *translator) typeArgsEnd(i int) int {
	depth := 0
	for ; i < len(t.toks); i++ {
		switch k := t.toks[i]; {
		case k.text == "<":
			depth++
		case k.text == ">":
			if depth--; depth == 0 {
				return i
			}
		case k.kind == tkIdent, k.kind == tkSpace, k.text == ",", k.text == "?", k.text == ".":
		default:
			return -1
		}
	}
	return -1
}

// constructors maps the classes a script may create to the runtime's factories.
var constructors = map[string]string{
	"AtomicInteger": "__atomic", "AtomicLong": "__atomic",
	"HashMap": "__map", "LinkedHashMap": "__map", "TreeMap": "__map",
	"ArrayList": "__list", "LinkedList": "__list",
}

// newExpr rewrites "new [package.]Class[<...>](" to a factory call.
func (t *translator) newExpr(i int) error {
	j := t.next(i)
	end := j
	var parts []string
	for t.ident(end) {
		parts = append(parts, t.toks[end].text)
		if !t.is(t.next(end), ".") {
			break
		}
		end = t.next(t.next(end))
	}
	if len(parts) == 0 {
		return t.fail(i, "new must name a class: AtomicInteger, AtomicLong, HashMap or ArrayList")
	}
	class := parts[len(parts)-1]
	factory, ok := constructors[class]
	pkg := strings.Join(parts[:len(parts)-1], ".")
	if !ok || pkg != "" && pkg != "java.util" && pkg != "java.util.concurrent.atomic" {
		return t.fail(i, "new %s: a script can create only AtomicInteger, AtomicLong, HashMap and ArrayList; "+
			"create other objects in a Go task (@name) and put them in the context", strings.Join(parts, "."))
	}
	if lt := t.next(end); t.is(lt, "<") {
		if gt := t.typeArgsEnd(lt); gt > 0 {
			t.clear(lt, gt)
		}
	}
	t.clear(i, end-1)
	t.toks[end].text = factory
	return nil
}

// loop makes the condition of a while or classic for loop count a step first, so an
// endless loop ends with an error (the step limit) rather than when its time is up.
func (t *translator) loop(i int) error {
	open := t.next(i)
	if !t.is(open, "(") {
		return nil // goja reports it
	}
	closeAt, semis := -1, []int{}
	depth := 0
	for j := open; j < len(t.toks); j++ {
		switch t.toks[j].text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case ";":
			if depth == 1 {
				semis = append(semis, j)
			}
		}
		if depth == 0 {
			closeAt = j
			break
		}
	}
	if closeAt < 0 {
		return nil
	}
	switch {
	case t.toks[i].text == "while":
		t.toks[open].text = "(__step() && ("
		t.toks[closeAt].text = "))"
	case len(semis) == 2:
		if t.next(semis[0]) == semis[1] {
			t.toks[semis[0]].text = "; __step()"
		} else {
			t.toks[semis[0]].text = "; __step() && ("
			t.toks[semis[1]].text = ");"
		}
	}
	return nil
}
