package flow

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
)

// BranchPolicy decides what a failing branch of a parallel split does to the run.
type BranchPolicy uint8

const (
	// FailFast ends the run (or the sub-graph call) at the first failing branch and
	// cancels the sibling branches through their context.Context. Every branch that
	// failed before it stopped is still recorded in Result.Errors.
	FailFast BranchPolicy = iota
	// ContinueOnError withdraws a failing branch and lets the join proceed with the
	// branches that finished. Each failure is recorded in Result.BranchFailures and in
	// the context variable KeyBranchFailures, which the nodes after the join can read to
	// decide whether to degrade or fail. When no branch reaches the join and at least
	// one failed, the split fails with ErrAllBranchesFailed.
	//
	// Withdrawing reaches the whole branch: a loop inside it takes no further item and
	// does not pass its closing node; its other tokens (of an inclusive split or an
	// activity's fan-out inside the branch) end before their next step, so neither the
	// inner join nor the outer one runs for them, also after a restart; a sub-graph
	// call in the branch ends, and its calling node ends interrupted (Context.CallOutcome
	// says StatusInterrupted). A node already running finishes: branches share no
	// context.Context to cancel. A frontier keeps the failed branches, so a split whose
	// last branch fails after a resume still fails with all of them.
	ContinueOnError
)

// KeyBranchFailures is the context variable that holds the []BranchFailure recorded
// under the ContinueOnError policy. A context restored from JSON (a session snapshot)
// holds them as plain JSON values instead, so read the variable with BranchFailuresOf.
const KeyBranchFailures = "flow.branchFailures"

// ParseBranchPolicy reads "fail-fast" or "continue" (as written in meta).
func ParseBranchPolicy(s string) (BranchPolicy, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "fail-fast", "failfast", "":
		return FailFast, nil
	case "continue", "continue-on-error", "collect":
		return ContinueOnError, nil
	}
	return FailFast, fmt.Errorf("unknown %s %q (want fail-fast or continue)", MetaBranchPolicy, s)
}

// String returns the meta spelling of the policy.
func (p BranchPolicy) String() string {
	if p == ContinueOnError {
		return "continue"
	}
	return "fail-fast"
}

// BranchFailure is a failed branch that a ContinueOnError split left behind.
type BranchFailure struct {
	Split  string     `json:"split"`  // id of the parallel node whose branch failed
	Branch string     `json:"branch"` // branch id
	Node   string     `json:"node"`   // the node that failed
	Code   string     `json:"code"`   // the failure's stable code, as NodeError.Code
	Error  string     `json:"error"`  // the failure's message, as NodeError.Error returns it
	Err    *NodeError `json:"-"`      // the failure itself; nil once it went through JSON
}

// BranchFailuresOf converts the value of KeyBranchFailures into branch failures. It
// also reads failures that went through JSON (a restored snapshot holds them as plain
// maps); their Err is then nil.
func BranchFailuresOf(v any) []BranchFailure {
	switch l := v.(type) {
	case nil:
		return nil
	case []BranchFailure:
		return l
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out []BranchFailure
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

func (r *run) recordFailure(tok *token, ne *NodeError, f *frame) {
	bf := BranchFailure{Split: f.split.n.ID, Branch: tok.branch, Node: ne.Node, Code: ne.Code, Error: ne.Error(), Err: ne}
	r.mu.Lock()
	r.failures = append(r.failures, bf)
	f.failed = append(f.failed, ne)
	f.failedIn = append(f.failedIn, branchUnder(tok, f))
	r.mu.Unlock()
	r.withdrew.Store(true)
	r.st.mu.Lock()
	list := BranchFailuresOf(r.st.vars[KeyBranchFailures])       // a restored context holds them as plain JSON values
	r.st.vars[KeyBranchFailures] = append(slices.Clip(list), bf) // clipped as in recordError
	r.st.mu.Unlock()
}

// branchUnder returns the id of split frame f's branch that tok is in: tok's own when
// f is its innermost frame, else the branch of the token that opened the frame nested
// in f that tok is inside.
func branchUnder(tok *token, f *frame) string {
	if tok.frame == f {
		return tok.branch
	}
	g := tok.frame
	for g.parent != f {
		g = g.parent
	}
	return g.branch
}

// branchOf returns the id of split frame f's branch that branch id b is or is nested
// in, as fanOut names f's branches, for a failure restored from a frontier state
// (which keeps the failing token's branch only). Of the ids b equals or extends with
// "/", the longest: node ids may hold "/", so b = main/p:a/x is branch a/x of p, not
// one nested in branch a. "" when b is in none of them.
func (f *frame) branchOf(b string) string {
	base := f.branch + "/" + f.split.n.ID + ":"
	best := ""
	for i := range f.split.targets {
		id := base + f.split.branchName(f.split.targets, i)
		if len(id) > len(best) && (b == id || strings.HasPrefix(b, id+"/")) {
			best = id
		}
	}
	return best
}

func (r *run) branchPolicy(cn *cnode, call *frame) BranchPolicy {
	if cn.policySet {
		return cn.policy
	}
	if p, ok := call.graph.g.Meta[MetaBranchPolicy].(string); ok {
		if bp, err := ParseBranchPolicy(p); err == nil {
			return bp
		}
	}
	return r.e.policy
}

type routeKind uint8

const (
	routeEnd  routeKind = iota // the branch ends here
	routeMove                  // one target, no frame
	routeFan                   // a split frame with one branch per target
	routeLoop                  // open a loop frame over items
)

// route is where a token goes after its node ran. decide computes it without side
// effects, so a routing error (no link matched, a condition that fails, loop items
// that are not a list) is reported as the node's failure before its end hook.
type route struct {
	kind     routeKind
	parallel bool // kind and parallel share a word: 8 words travel in registers
	to       *cnode
	targets  []*cnode
	items    []any
}

// decide computes the route of the token at its node according to the node's type.
func (r *run) decide(ctx context.Context, tok *token) (route, error) {
	cn := tok.node
	switch cn.n.Type {
	case End:
		return route{kind: routeEnd}, nil
	case Exclusive:
		return r.decideExclusive(ctx, tok)
	case Parallel: // takes every link, whatever its condition
		switch {
		case cn.split:
			return route{kind: routeFan, targets: cn.targets, parallel: true}, nil
		case len(cn.links) == 1:
			return route{kind: routeMove, to: cn.links[0].to}, nil
		}
		return route{kind: routeEnd}, nil
	case Loop:
		if cn.loopVar != "" && tok.mode != modeBody {
			return r.decideLoop(tok)
		}
	}
	return r.decideAll(ctx, tok)
}

func (r *run) decideLoop(tok *token) (route, error) {
	items, err := r.loopItems(tok)
	if err != nil {
		return route{}, r.nodeError(tok, CodeLoopItems, err)
	}
	return route{kind: routeLoop, items: items}, nil
}

// linkError reports a link condition that failed. It is a function of its own to keep
// the deciding functions' frames small (see execNode).
func (r *run) linkError(tok *token, l *clink, err error) error {
	return r.nodeError(tok, CodeCondition, fmt.Errorf("link to %q: %w", l.l.To, err))
}

func (r *run) decideExclusive(ctx context.Context, tok *token) (route, error) {
	cn := tok.node
	if len(cn.links) == 0 {
		return route{kind: routeEnd}, nil
	}
	var deflt *cnode
	for i := range cn.links {
		l := &cn.links[i]
		if l.when.always() {
			if deflt == nil {
				deflt = l.to
			}
			continue
		}
		ok, err := l.when.test(ctx, &tok.view)
		if err != nil {
			return route{}, r.linkError(tok, l, err)
		}
		if ok {
			return route{kind: routeMove, to: l.to}, nil
		}
	}
	if deflt != nil {
		return route{kind: routeMove, to: deflt}, nil
	}
	return route{}, r.nodeError(tok, CodeNoRoute, ErrNoRoute)
}

// decideAll follows every link whose condition holds (activity, start, inclusive and
// the body of a loop). More than one target fans out sequentially; an inclusive split
// always opens a frame, even for one target, so its join can count.
func (r *run) decideAll(ctx context.Context, tok *token) (route, error) {
	cn := tok.node
	if len(cn.links) == 1 && cn.links[0].when.always() && !cn.split {
		return route{kind: routeMove, to: cn.links[0].to}, nil
	}
	return r.decideLinks(ctx, tok)
}

// decideLinks is decideAll for a node with conditions or several links; a function of
// its own so that the single-link path keeps a small frame (see execNode).
func (r *run) decideLinks(ctx context.Context, tok *token) (route, error) {
	cn := tok.node
	// Collect the true links in a bit set first: the common single-target case then
	// allocates nothing; a fan-out allocates its frame and tokens anyway.
	var (
		taken uint64
		many  []*cnode // only for nodes with more than 64 links
		count int
		first *cnode
	)
	for i := range cn.links {
		l := &cn.links[i]
		if !l.when.always() {
			ok, err := l.when.test(ctx, &tok.view)
			if err != nil {
				return route{}, r.linkError(tok, l, err)
			}
			if !ok {
				continue
			}
		}
		if count == 0 {
			first = l.to
		}
		count++
		if i < 64 {
			taken |= 1 << i
		} else {
			many = append(many, l.to)
		}
	}
	switch {
	case count == 0:
		return route{kind: routeEnd}, nil
	case count == 1 && !cn.split:
		return route{kind: routeMove, to: first}, nil
	}
	targets := make([]*cnode, 0, count)
	for i := range min(len(cn.links), 64) {
		if taken&(1<<i) != 0 {
			targets = append(targets, cn.links[i].to)
		}
	}
	return route{kind: routeFan, targets: append(targets, many...)}, nil
}

// apply moves the token along a decided route and returns the token to continue with.
func (r *run) apply(tok *token, rt route, local *[]*token) *token {
	switch rt.kind {
	case routeMove:
		return r.moveTo(tok, rt.to)
	case routeFan:
		return r.fanOut(tok, rt.targets, rt.parallel, local)
	case routeLoop:
		return r.startLoop(tok, rt.items)
	}
	return r.endToken(tok)
}

// follow routes a token that did not run its node (a loop iteration, a resumed
// token): errors fail the node without node hooks.
func (r *run) follow(ctx context.Context, tok *token, local *[]*token) *token {
	rt, err := r.decide(ctx, tok)
	if err != nil {
		if r.cancelled(ctx, tok, err) {
			// As if the drive loop had noticed the cancellation before this step: the
			// node ran already, and a resume decides its links again.
			if r.halted() {
				r.park(tok)
				return nil
			}
			cutUnderAbort(tok)
			return r.endToken(tok)
		}
		return r.failed(ctx, tok, r.taskError(tok, err), true, 1, local)
	}
	return r.apply(tok, rt, local)
}

func (r *run) moveTo(tok *token, n *cnode) *token {
	tok.node, tok.mode, tok.resumed, tok.retries = n, modeArrive, false, 0
	return tok
}

// fanOut opens a split frame with one branch per target. Parallel branches run on
// their own goroutines while the engine's bound allows; the others run in order on
// this goroutine.
func (r *run) fanOut(tok *token, targets []*cnode, parallel bool, local *[]*token) *token {
	cn := tok.node
	f := &frame{kind: frameSplit, parent: tok.frame, call: tok.call, pending: len(targets), branch: tok.branch, split: cn}
	if parallel {
		f.policy = r.branchPolicy(cn, tok.call)
	}
	base := tok.branch + "/" + cn.n.ID + ":"
	toks := make([]*token, len(targets))
	for i, t := range targets {
		branch := base + cn.branchName(targets, i)
		if i == 0 {
			tok.node, tok.mode, tok.frame, tok.branch, tok.resumed, tok.retries = t, modeArrive, f, branch, false, 0
			toks[0] = tok
			continue
		}
		toks[i] = r.newToken(t, modeArrive, f, branch)
	}
	if r.live != nil {
		r.mu.Lock()
		for _, t := range toks {
			r.commitLocked(t)
		}
		r.mu.Unlock()
	}
	rest := toks[1:]
	if parallel {
		rest = r.spawnBranches(rest)
	}
	for i := len(rest) - 1; i >= 0; i-- {
		*local = append(*local, rest[i])
	}
	return toks[0]
}

// branchName returns the last part of the id of the branch that split node cn opens
// towards targets[i], the nodes it fans out to in order: the target's id, and for a
// target an earlier link already leads to, "#i" appended to it (as often as it takes
// to make an id that no node cn links to has). The suffix keeps the branches of
// several links to one node apart; repeating it keeps them apart from a node whose
// id is literally such an id, while every other graph keeps the ids it always had.
// The ids of one split never coincide: the loop keeps a repeated link's off every
// target's id, and two repeated links' differ in what follows their last "#" (each
// its own position).
func (cn *cnode) branchName(targets []*cnode, i int) string {
	t := targets[i]
	if !slices.Contains(targets[:i], t) {
		return t.n.ID
	}
	suffix := "#" + strconv.Itoa(i)
	name := t.n.ID + suffix
	for slices.ContainsFunc(cn.links, func(l clink) bool { return l.to.n.ID == name }) {
		name += suffix
	}
	return name
}

// spawn runs a token on a new goroutine if the engine's concurrency bound allows.
func (r *run) spawn(tok *token) bool {
	if !r.acquire() {
		return false
	}
	c := tok.call
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer func() { <-r.e.sem }()
		defer r.catchBranchPanic()
		r.drive(c.ctx, tok)
	}()
	return true
}

// BranchPanic is what Eval and Resume panic with when code running in a parallel
// branch's goroutine panicked (an interceptor's hook: a task's panic is already the
// node's error). Left alone, such a panic would end the process; instead the run
// fails, its other branches end, and the panic is raised again in the caller's
// goroutine, where it can be recovered, as a panic on the main branch is.
type BranchPanic struct {
	Value any    // what the branch panicked with
	Stack []byte // the branch goroutine's stack when it panicked
}

// Error describes the panic.
func (p *BranchPanic) Error() string {
	return fmt.Sprintf("flow: panic in a parallel branch: %v", p.Value)
}

// catchBranchPanic turns a panic in a branch goroutine into a failed run and keeps
// it for runRoot to raise again.
func (r *run) catchBranchPanic() {
	if v := recover(); v != nil {
		r.branchPanicked(v)
	}
}

// branchPanicked fails the run with a branch goroutine's panic v; called while the
// goroutine panics (in a deferred call), so the stack it keeps is the panic's.
func (r *run) branchPanicked(v any) {
	p := &BranchPanic{Value: v, Stack: debug.Stack()}
	r.mu.Lock()
	if r.panicked == nil {
		r.panicked = p
	}
	r.mu.Unlock()
	r.halt(stateFailed, "", nil, p)
}
