package flow

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// This file holds what happens when a node fails at run time: the error policy's
// decision, the execution-error record, recovery (goto, update, following the links)
// and the fatal path (fallback state, then the branch policy, the sub-graph call or the
// run). policy.go holds the types and the meta parsing.

// taskError makes a node failure a *NodeError for the token's node: an error that
// already is one for this node is kept; any other is wrapped with the code it declares
// (ErrorCode, Code) or task_failed.
func (r *run) taskError(tok *token, err error) *NodeError {
	var ne *NodeError
	if errors.As(err, &ne) && ne.Node == tok.node.n.ID && ne.Path == tok.call.path {
		return ne
	}
	code := errorCode(err)
	if code == "" {
		code = CodeTask
	}
	return r.nodeError(tok, code, err)
}

// nodeError describes a failure of the token's node. It is kept out of line: inlined,
// its struct literal would enlarge the frames of the hot functions that call it on
// their error paths (see execNode).
//
//go:noinline
func (r *run) nodeError(tok *token, code string, err error) *NodeError {
	n := tok.node.n
	return &NodeError{Graph: n.graph.ID, Path: tok.call.path, Node: n.ID, NodeType: n.Type, Title: n.Title,
		Branch: tok.branch, Step: int(r.steps.Load()), Code: code, Err: err}
}

// failed handles a node failure found outside execNode (routing a token that did not
// run its node): the policy decides, as for any other failure.
func (r *run) failed(ctx context.Context, tok *token, ne *NodeError, routing bool, attempts int, local *[]*token) *token {
	return r.failedWith(ctx, tok, ne, r.decideError(ctx, tok, ne), routing, attempts, local)
}

// failedWith records the failure and acts on the decision. A recovered error continues
// at the decision's goto node, or along the node's links (a routing failure has none to
// follow, so its branch ends). A fatal error applies the fallback state, then the branch
// policy: inside a parallel split whose policy is "continue" the branch is withdrawn;
// otherwise the failure ends the sub-graph call (whose caller then fails) or the run.
func (r *run) failedWith(ctx context.Context, tok *token, ne *NodeError, dec ErrorDecision, routing bool, attempts int, local *[]*token) *token {
	r.recordError(tok, ne, dec, attempts)
	if dec.Recover {
		r.applyState(dec.Update, false)
		if dec.Goto != "" {
			target := tok.call.graph.node(dec.Goto)
			if target == nil {
				err := r.nodeError(tok, CodeTask, fmt.Errorf("error policy: goto %q: no such node in graph %q", dec.Goto, tok.call.graph.g.ID))
				return r.fatal(tok, err)
			}
			tok.arrivals = 0 // it leaves its node: a join's arrivals are not the target's
			r.fallbacks.Add(1)
			if f := loopLeft(tok, target); f != nil {
				return r.leaveLoop(tok, f, target, local)
			}
			return r.moveTo(tok, target)
		}
		tok.arrivals = 0
		if routing {
			return r.endToken(tok)
		}
		tok.mode = modeFollow
		return r.follow(ctx, tok, local)
	}
	r.applyState(dec.Fallback, true)
	return r.fatal(tok, ne)
}

// loopLeft returns the outermost loop frame of the token's call whose body does not
// hold target: the frame a goto to target leaves. It is nil when target is inside
// every loop the token iterates in.
func loopLeft(tok *token, target *cnode) *frame {
	var out *frame
	for f := tok.frame; f != nil && f.kind != frameCall; f = f.parent {
		if f.kind == frameLoop && !f.loop.body[target] {
			out = f
		}
	}
	return out
}

// leaveLoop moves a token out of loop frame out (and every loop inside it) to target,
// as a break would: the loops take no further item and do not pass their closing
// node. Staying in the frame would run the rest of the flow from target once per
// remaining item, with the item still bound, and then once more after the loop. The
// token at target is a new unit of the loop's enclosing frame, opened by the loop's
// branch; the failed token is withdrawn from the frames it was in, so a split inside
// the loop body still joins its other branches.
func (r *run) leaveLoop(tok *token, out *frame, target *cnode, local *[]*token) *token {
	r.mu.Lock()
	leaveLoops(tok.frame, out.parent)
	out.parent.pending++
	next := r.newToken(target, modeArrive, out.parent, out.branch)
	if r.live != nil {
		r.commitLocked(next)
	}
	r.mu.Unlock()
	if t := r.endToken(tok); t != nil {
		*local = append(*local, t)
	}
	return next
}

// leaveLoops marks every loop frame from f up to stop (excluded) as left: it takes no
// further item and does not pass its closing node. The caller holds r.mu. Only flags:
// the items stay, since the iteration's other branches, on other goroutines, read the
// current one without the lock.
func leaveLoops(f, stop *frame) {
	for ; f != stop; f = f.parent {
		if f.kind == frameLoop {
			f.closing, f.left = nil, true
		}
	}
}

// fatal ends the branch, the sub-graph call or the run because of ne.
func (r *run) fatal(tok *token, ne *NodeError) *token {
	r.mu.Lock()
	r.errs = append(r.errs, ne)
	r.mu.Unlock()
	for f := tok.frame; f != nil && f.kind != frameCall; f = f.parent {
		if f.kind != frameSplit || f.split.n.Type != Parallel {
			continue
		}
		if f.policy == ContinueOnError {
			r.recordFailure(tok, ne, f)
			// The whole branch is withdrawn: a loop inside it must not go on with its
			// next item and reach the join as well.
			r.mu.Lock()
			leaveLoops(tok.frame, f)
			r.mu.Unlock()
			return r.endToken(tok)
		}
		break
	}
	if c := tok.call; c.caller != nil {
		if c.abort.CompareAndSwap(nil, ne) {
			c.cancel()
		}
		return r.endToken(tok)
	}
	r.halt(stateFailed, "", nil, ne)
	tok.mode = modeExec
	r.park(tok)
	return nil
}

// decideError computes the decision for a node failure.
func (r *run) decideError(ctx context.Context, tok *token, ne *NodeError) ErrorDecision {
	cn := tok.node
	def := ErrorDecision{Recover: IsRecoverable(ne), Retryable: IsRetryable(ne)}
	for _, m := range r.e.recoverable {
		if m(ne) {
			def.Recover = true
		}
	}
	if oe := cn.onError; oe != nil {
		matches := oe.recoverAll
		for _, c := range oe.codes {
			if c == ne.Code {
				matches = true
			}
		}
		if matches {
			def.Recover = true
		}
		if def.Recover {
			def.Goto, def.Update = oe.gotoID, oe.update
		}
		def.Fallback = oe.fallback
	}
	if p := r.e.errPolicy; p != nil {
		return p(ctx, &tok.view, cn.n, ne, def)
	}
	return def
}

// recordError appends the execution error record to the run and to the context.
func (r *run) recordError(tok *token, ne *NodeError, dec ErrorDecision, attempts int) ExecutionError {
	n := tok.node.n
	rec := ExecutionError{
		Severity: Fatal, Graph: n.graph.ID, Path: tok.call.path, NodeID: n.ID, NodeName: n.Title,
		NodeType: n.Type.String(), Branch: tok.branch, Step: ne.Step, Attempts: attempts, Time: time.Now().UTC(),
		Error: ToStructured(ne),
	}
	if dec.Error != nil {
		rec.Error = *dec.Error
	}
	if dec.Recover {
		rec.Severity, rec.Goto = Recoverable, dec.Goto
	} else {
		rec.Fallback = dec.Fallback
	}
	r.st.mu.Lock()
	// Clipped: another context made from a copy of these variables (NewContextWith,
	// a checkpoint's Vars) holds the same slice, and appending in place would write
	// its next record over ours.
	list := ExecutionErrorsOf(r.st.vars[r.e.errKey])
	r.st.vars[r.e.errKey] = append(slices.Clip(list), rec)
	r.st.mu.Unlock()
	r.mu.Lock()
	r.records = append(r.records, rec)
	r.mu.Unlock()
	return rec
}

// applyState applies a state update to the shared variables; a fallback update is also
// kept for the result.
func (r *run) applyState(update map[string]any, fallback bool) {
	if len(update) == 0 {
		return
	}
	r.st.mu.Lock()
	maps.Copy(r.st.vars, update)
	r.st.mu.Unlock()
	if !fallback {
		return
	}
	r.mu.Lock()
	r.fallback = mergeState(r.fallback, update)
	r.mu.Unlock()
}

// waitRetry waits before a retry; it reports false when ctx ended first.
func (r *run) waitRetry(ctx context.Context, p *RetryPolicy, retry int) bool {
	select {
	case <-r.e.clock.After(p.delay(retry)):
		return true
	case <-ctx.Done():
		return false
	}
}
