package flow

import "sync/atomic"

// spawnBranches runs the last of toks on goroutines, as many as the engine's bound
// allows, and returns the tokens left to run on this goroutine.
//
// The goroutines share the tokens (branchQueue) and start one at a time: a goroutine
// that takes a token first makes sure another is ready to take the next, then runs
// its own. Every branch thus runs on a goroutine of its own should the others block,
// while branches that never block run one after the other on the goroutine that took
// the first, on the stack it already grew: a goroutine per branch would cost its
// creation and a stack of its own each.
func (r *run) spawnBranches(toks []*token) []*token {
	n := 0
	for n < len(toks) && r.acquire() {
		n++
	}
	if n == 0 {
		return toks
	}
	q := &branchQueue{r: r, toks: toks[len(toks)-n:], slots: int32(n)}
	q.c = q.toks[0].call
	q.start()
	return toks[:len(toks)-n]
}

// branchQueue holds the branches a fan-out runs on goroutines. It holds slots of the
// engine's bound, one per token: a goroutine it starts uses one, and the last
// goroutine to end gives back those no goroutine used.
type branchQueue struct {
	r       *run
	c       *frame // the tokens' call frame: its context, and its WaitGroup that counts the goroutines
	toks    []*token
	slots   int32
	next    atomic.Int32 // index of the next token to take
	started atomic.Int32 // goroutines started
	ready   atomic.Int32 // goroutines started that did not take a token yet
	live    atomic.Int32 // goroutines not ended
}

// take returns the next token no goroutine took yet, or nil.
func (q *branchQueue) take() *token {
	i := int(q.next.Add(1)) - 1
	if i >= len(q.toks) {
		return nil
	}
	return q.toks[i]
}

// start starts a goroutine if a slot is left.
func (q *branchQueue) start() {
	for {
		s := q.started.Load()
		if s >= q.slots {
			return
		}
		if q.started.CompareAndSwap(s, s+1) {
			break
		}
	}
	q.ready.Add(1)
	q.live.Add(1)
	q.c.wg.Add(1)
	go q.work()
}

// work is a branch goroutine: it drives the queue's tokens until none is left. It
// calls drive directly, with no frame in between: a goroutine starts with a small
// stack, and one more frame on every branch's path can make each fan-out copy it.
func (q *branchQueue) work() {
	defer q.end()
	q.ready.Add(-1)
	for tok := q.take(); tok != nil; tok = q.take() {
		// Another goroutine for the next token, unless one is ready, should this
		// token's branch block.
		if int(q.next.Load()) < len(q.toks) && q.ready.Load() == 0 {
			q.start()
		}
		q.r.drive(q.c.ctx, tok)
	}
}

// end ends a branch goroutine. After a panic (an interceptor's hook), which fails the
// run, a new goroutine takes this one's place and goes on with the queue: the tokens
// left there must still run, to end or park as the failed run has them do. Otherwise
// it gives back the goroutine's slot, and when it is the last, the slots no goroutine
// used. The goroutines start each other while they run, so once the last ended none
// starts again.
func (q *branchQueue) end() {
	if v := recover(); v != nil {
		q.r.branchPanicked(v)
		q.ready.Add(1)
		go q.work() // in this one's slot, counted in the WaitGroup and live
		return
	}
	defer q.c.wg.Done()
	n := int32(1)
	if q.live.Add(-1) == 0 {
		n += q.slots - q.started.Load()
	}
	for range n {
		<-q.r.e.sem
	}
}

// acquire takes a slot of the engine's bound on branch goroutines, if one is free.
func (r *run) acquire() bool {
	select {
	case r.e.sem <- struct{}{}:
		return true
	default:
		return false
	}
}
