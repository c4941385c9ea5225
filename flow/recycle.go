package flow

// A run's own state (the run, its root frame and its start token: about 800 bytes) is
// needed only while the run is in progress, and allocating it for every run was the
// largest fixed cost of a short run, most of it in the garbage collector. So the
// engine keeps the state of a finished run for its next one, when it can prove that
// nothing outside the engine still points into it:
//
//   - the graph is sealed (compiled.sealed): no Go task, Go condition, custom
//     evaluator, error policy, retry clock or sub-graph was handed the run's
//     context.Context or a view of its tokens;
//   - no interceptor saw the run and no checkpoint was taken;
//   - the run completed, so no Frontier references its tokens;
//   - nobody asked the run's context for its Done channel (which registers a callback
//     on the caller's context that could still be running).
//
// A recycled run's Result is a separate allocation, since the caller keeps it. A
// Context's Stop, Suspend, RunID and Trace reach the run only while holding the
// Context's lock, and the run detaches itself from the Context under that lock before
// it is recycled, so a late call never touches a recycled run.

// newRunState returns the state for a new run of cg: a recycled one when cg is sealed
// and one is pooled (reset left only what newRun, start and runRoot set), else a new
// one.
func (e *Engine) newRunState(cg *compiled) *run {
	if cg.sealed {
		if r, ok := e.runs.Get().(*run); ok {
			return r
		}
	}
	return new(run)
}

// recyclable reports whether nothing outside the engine can reach the finished run's
// state (see above), so that recycle may reuse it.
func (r *run) recyclable() bool {
	return r.private() && len(r.frontier) == 0 && runState(r.state.Load()) == stateRunning &&
		r.rctx.done == nil && r.rctx.stop == nil
}

// recycle gives the state of a recyclable run back to the engine. The caller must not
// use r afterwards.
func (r *run) recycle() {
	r.reset()
	r.e.runs.Put(r)
}

// private reports whether no code outside the engine was given the run's context or
// a view of its tokens: a sealed graph, no interceptor, no checkpoint.
func (r *run) private() bool {
	return r.root.graph.sealed && len(r.icpts) == 0 && r.ckpt == nil
}

// reset zeroes what a finished run may have left in its state, except the fields the
// next run sets before it reads them (see recycledFields in the test, which checks
// that nothing else is left). Clearing the whole struct would cost a write barrier
// for each of its hundred pointer slots whenever the garbage collector is marking;
// this writes only what is set, and drops the references to the caller's objects
// so that a pooled run does not keep them alive.
func (r *run) reset() {
	r.fc, r.st, r.rctx.parent, r.rctx.err = nil, nil, nil, nil
	if r.out != nil {
		r.out = nil
	}
	r.steps.Store(0)
	if r.errs != nil || r.failures != nil || r.records != nil || r.fallback != nil || r.frontier != nil ||
		r.reason != "" || r.err != nil || r.retries.Load() != 0 || r.fallbacks.Load() != 0 {
		r.errs, r.failures, r.records, r.fallback, r.frontier = nil, nil, nil, nil, nil
		r.reason, r.err = "", nil
		r.retries.Store(0)
		r.fallbacks.Store(0)
		r.withdrew.Store(false) // set only with failures
	}
	f := &r.rootFrame
	f.ctx, f.pending = nil, 0
	f.last.Store(0)
	t := &r.startTok
	t.view, t.retries = Context{}, 0 // a recycled run is never a resume: resumed stays false
	if t.interrupted || t.suspended || t.reason != "" || t.arrivals != 0 || t.resume != nil || t.cp != (position{}) || t.completed != nil || t.failure != nil {
		t.interrupted, t.suspended, t.reason, t.arrivals, t.resume, t.cp, t.completed, t.failure = false, false, "", 0, nil, position{}, nil, nil
	}
}
