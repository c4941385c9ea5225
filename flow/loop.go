package flow

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
)

// startLoop opens a loop frame at an opening loop node: the body (the node's links) runs
// once per item, one iteration after the other, with the item bound to the $for
// variable in the iterating branch only. After the last item the flow passes the
// closing loop node once. With no items it goes straight to the closing node.
func (r *run) startLoop(tok *token, items []any) *token {
	cn := tok.node
	if len(items) == 0 {
		if cn.closing != nil {
			tok.node, tok.mode, tok.resumed, tok.retries = cn.closing, modeBegin, false, 0
			return tok
		}
		return r.endToken(tok)
	}
	f := &frame{kind: frameLoop, parent: tok.frame, call: tok.call, pending: 1, branch: tok.branch,
		loop: cn, items: items, closing: cn.closing}
	tok.frame, tok.mode, tok.branch = f, modeBody, iterationBranch(f)
	if r.live != nil {
		r.commit(tok)
	}
	return tok
}

var stepperRE = regexp.MustCompile(`^\s*(-?\d+)\s*(?::\s*(-?\d+)\s*(?::\s*(-?\d+)\s*)?|\.\.\.\s*(-?\d+)\s*)$`)

// loopItems evaluates $in: a list, a stepper string, or the name of a context variable
// holding a list.
func (r *run) loopItems(tok *token) ([]any, error) {
	in := tok.node.loopIn
	if s, ok := in.(string); ok {
		if items, ok, err := parseStepper(s); ok {
			return items, err
		}
		v, found := tok.view.Get(s)
		if !found {
			return nil, fmt.Errorf("%w: context variable %q is not set", ErrLoopItems, s)
		}
		in = v
	}
	items, ok := asList(in)
	if !ok {
		return nil, fmt.Errorf("%w: %T is not a list", ErrLoopItems, in)
	}
	return slices.Clone(items), nil // later changes to the variable do not move the loop
}

// checkLoopIn validates a $in value when the graph is compiled.
func checkLoopIn(in any) error {
	if s, ok := in.(string); ok {
		_, _, err := parseStepper(s)
		return err
	}
	if _, ok := asList(in); !ok {
		return fmt.Errorf("%T is neither a list, a stepper nor a variable name", in)
	}
	return nil
}

// parseStepper reads "start:end[:step]" and "start...end". The end is excluded, as in
// Solon: "1:10:2" gives 1 3 5 7 9 and "1...4" gives 1 2 3. ok is false when s is not a
// stepper (it then names a context variable).
func parseStepper(s string) (items []any, ok bool, err error) {
	m := stepperRE.FindStringSubmatch(s)
	if m == nil {
		return nil, false, nil
	}
	start, _ := strconv.Atoi(m[1])
	end, stepN := 0, 1
	if m[4] != "" {
		end, _ = strconv.Atoi(m[4])
	} else {
		end, _ = strconv.Atoi(m[2])
		if m[3] != "" {
			stepN, _ = strconv.Atoi(m[3])
		}
	}
	if stepN == 0 {
		return nil, true, fmt.Errorf("stepper %q: step must not be 0", s)
	}
	// Count the items in uint64: end-start and the last i += step may overflow an int
	// near the ends of its range (which made the loop run for ever).
	var n uint64
	switch {
	case stepN > 0 && start < end:
		n = (uint64(end)-uint64(start)-1)/uint64(stepN) + 1
	case stepN < 0 && start > end:
		n = (uint64(start)-uint64(end)-1)/(-uint64(stepN)) + 1
	}
	if n > 1_000_000 {
		return nil, true, fmt.Errorf("stepper %q: more than 1000000 items", s)
	}
	for i, k := start, uint64(0); k < n; i, k = i+stepN, k+1 {
		items = append(items, i)
	}
	return items, true, nil
}

func asList(v any) ([]any, bool) {
	switch l := v.(type) {
	case []any:
		return l, true
	case nil:
		return nil, false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return nil, false
	}
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out, true
}
