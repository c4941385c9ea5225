package team

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/trace"
)

// turnLog keeps the member turns of a team run that ended with an answer, so that a
// retry of the run, which flow may make by calling the team's graph again from its
// start, replays them instead of running the members again: their tool calls ran,
// their humans decided, and asked again a member would act a second time. It lives
// in the context variables (turnsKey), so a session snapshot carries it and a retry
// in another process replays too.
type turnLog struct {
	// RunID is the team run the log belongs to.
	RunID string `json:"runId"`
	// Turns are the run's answered turns, replayed ones included, in order.
	Turns []answeredTurn `json:"turns,omitempty"`
	// Replay are the answered turns of the failed run this run retries that no turn
	// of this run has replayed yet.
	Replay []answeredTurn `json:"replay,omitempty"`
}

// answeredTurn is one member turn that ended with an answer, or with a failure (the
// record says which).
type answeredTurn struct {
	// Question is a digest of the prompt the member answered: a turn replays only the
	// same question (a supervisor asked again may route with another task).
	Question string        `json:"question"`
	Record   TeamRecord    `json:"record"`
	Metrics  trace.Metrics `json:"metrics"`
	Handoff  *handoff      `json:"handoff,omitempty"`
	// Recovered marks a failed turn whose failure an error policy recovered: the run
	// went on past it, so a retry replays it. A failure that ended the run is not
	// replayed: its member goes on with its kept run, or starts afresh.
	Recovered bool `json:"recovered,omitempty"`
}

// turnsKey is the variable holding the team's turnLog. A name has no colon
// (checkName), so no team's other variables can be named so.
func (t *TeamAgent) turnsKey() string { return t.turnsVar }

// isTurnsKey reports whether k names a team's turn log (of any team: a new run
// drops them all).
func isTurnsKey(k string) bool {
	name, ok := strings.CutPrefix(k, "_team.")
	if !ok {
		return false
	}
	name, ok = strings.CutSuffix(name, ":turns")
	return ok && name != "" && checkName(name) == nil
}

// dropTurns removes the turn logs of the team and of the teams nested in it: their
// runs can no longer be retried (the team's completed, or its call's failure was
// recovered and the flow went on), and a log left behind would stay in the variables
// a snapshot stores and the command line prints.
func (t *TeamAgent) dropTurns(c *flow.Context) {
	c.Delete(t.turnsKey())
	for _, sub := range t.nested {
		sub.dropTurns(c)
	}
}

// turnQuestion is the question a turn answered, as its prompt or, for a replayed turn, as
// the digest its log entry keeps; the digest of a prompt is computed only when a log
// takes it (a root team keeps none, and hashes no prompt).
type turnQuestion struct{ prompt, digest string }

func (q turnQuestion) sum() string {
	if q.digest == "" {
		return questionDigest(q.prompt)
	}
	return q.digest
}

// questionDigest is the digest of a prompt a turn log keeps.
func questionDigest(prompt string) string {
	sum := sha256.Sum256([]byte(prompt))
	return hex.EncodeToString(sum[:])
}

// turnLogValue converts a stored value (a turnLog, or the maps a restored snapshot
// holds) into a copy.
func turnLogValue(v any) turnLog {
	switch l := v.(type) {
	case nil:
		return turnLog{}
	case turnLog:
		l.Turns, l.Replay = slices.Clone(l.Turns), slices.Clone(l.Replay)
		return l
	}
	var l turnLog
	if b, err := json.Marshal(v); err == nil {
		_ = json.Unmarshal(b, &l) // an unreadable log replays nothing: the members run again
	}
	return l
}

// startTurns begins the log of the team run runID when logged: the team's graph runs
// as a sub-graph (a nested team, or Task), or for an agent node of another graph
// (callInNode): only such an evaluation is made again from the start to retry it; a
// root evaluation is retried from its failed node, and a new one replays nothing.
// When the run retries the failed run retried, the turns that run (and the runs it
// retried) answered become the turns to replay.
func (t *TeamAgent) startTurns(c *flow.Context, runID, retried string, logged bool) {
	if !logged {
		c.Delete(t.turnsKey())
		return
	}
	c.Update(t.turnsKey(), func(old any, _ bool) any {
		l := turnLog{RunID: runID}
		if prev := turnLogValue(old); retried != "" && prev.RunID == retried {
			// Carried on, the failures that ended their runs (which never replay) would
			// grow the log by one per failed attempt.
			l.Replay = slices.DeleteFunc(append(prev.Turns, prev.Replay...),
				func(a answeredTurn) bool { return !a.canReplay() })
		}
		return l
	})
}

// logTurn adds an answered turn to the log of the team run runID, if it keeps one,
// with the digest of the question q it answered.
func (t *TeamAgent) logTurn(c *flow.Context, runID string, q turnQuestion, turn answeredTurn) {
	if _, ok := c.Get(t.turnsKey()); !ok {
		return // a root team keeps no log: no atomic update for it
	}
	_ = c.Atomic(func(v flow.Vars) error {
		old, ok := v.Get(t.turnsKey())
		if !ok {
			return nil
		}
		if l := turnLogValue(old); l.RunID == runID {
			turn.Question = q.sum()
			l.Turns = append(l.Turns, turn)
			v.Put(t.turnsKey(), l)
		}
		return nil
	})
}

// replayable takes from the log of the team run runID the turn of the failed run it
// retries in which member answered the question q at node and branch, if there is
// one.
func (t *TeamAgent) replayable(c *flow.Context, runID, member, node, branch, q string) (answeredTurn, bool) {
	var (
		turn  answeredTurn
		found bool
	)
	if _, ok := c.Get(t.turnsKey()); !ok {
		return turn, false
	}
	_ = c.Atomic(func(v flow.Vars) error {
		old, ok := v.Get(t.turnsKey())
		if !ok {
			return nil
		}
		l := turnLogValue(old)
		if len(l.Replay) == 0 {
			return nil
		}
		if i := l.find(runID, member, node, branch, questionDigest(q)); i >= 0 {
			turn, found = l.Replay[i], true
			l.Replay = slices.Delete(l.Replay, i, i+1)
			v.Put(t.turnsKey(), l)
		}
		return nil
	})
	return turn, found
}

// replays reports whether replayable would find the turn of member at node and
// branch in the team run runID, which asks it prompt (called only if there are turns
// to replay).
func (t *TeamAgent) replays(c *flow.Context, runID, member, node, branch string, prompt func() string) bool {
	v, ok := c.Get(t.turnsKey())
	if !ok {
		return false
	}
	l := turnLogValue(v)
	return len(l.Replay) > 0 && l.find(runID, member, node, branch, questionDigest(prompt())) >= 0
}

// find returns the index in l.Replay of member's turn at node and branch that
// answered q, when l is the log of the team run runID, else -1.
func (l turnLog) find(runID, member, node, branch, q string) int {
	if l.RunID != runID {
		return -1
	}
	return slices.IndexFunc(l.Replay, func(a answeredTurn) bool {
		r := a.Record
		return r.Source == member && r.Node == node && r.Branch == branch && a.Question == q && a.canReplay()
	})
}

// canReplay reports whether a retry may replay the turn: an answer, or a failure an
// error policy recovered.
func (a answeredTurn) canReplay() bool { return a.Record.Status != RunFailed || a.Recovered }

// markRecovered marks the failed turns at node and branch in the team's turn log as
// recovered: the node's failure was recovered (its earlier attempts, if a retry
// policy retried it, were part of that execution).
func (t *TeamAgent) markRecovered(c *flow.Context, node, branch string) {
	_ = c.Atomic(func(v flow.Vars) error {
		old, ok := v.Get(t.turnsKey())
		if !ok {
			return nil
		}
		l, marked := turnLogValue(old), false
		for i := range l.Turns {
			if r := &l.Turns[i].Record; r.Status == RunFailed && r.Node == node && r.Branch == branch && !l.Turns[i].Recovered {
				l.Turns[i].Recovered, marked = true, true
			}
		}
		if marked {
			v.Put(t.turnsKey(), l)
		}
		return nil
	})
}

// answered records member's answered turn (q is its question) in the
// team's trace and in the run's turn log, and lets the protocol route after it.
func (t *TeamAgent) answered(c *flow.Context, member string, q turnQuestion, rec TeamRecord, ans *Answer, ho *handoff) (*TeamTrace, *RouteDecision) {
	var dec *RouteDecision
	tr := t.update(c, func(tr *TeamTrace) {
		tr.Turns++
		rec.Turn = tr.Turns
		tr.Records = append(tr.Records, rec)
		tr.Route = append(tr.Route, member)
		tr.addMember(member, ans.Metrics)
		if tr.State.Waiting == member {
			tr.State.Waiting = ""
		}
		dec = t.proto.afterMember(t, tr, member, ans, ho)
	})
	t.logTurn(c, tr.RunID, q, answeredTurn{Record: rec, Metrics: ans.Metrics, Handoff: ho})
	t.setNext(c, tr)
	return tr, dec
}

// failedTurn records member's failed turn (q is its question) in the
// team's trace and in the run's turn log, and lets the protocol route after it.
func (t *TeamAgent) failedTurn(c *flow.Context, member string, q turnQuestion, rec TeamRecord) (*TeamTrace, *RouteDecision) {
	var dec *RouteDecision
	tr := t.update(c, func(tr *TeamTrace) {
		tr.Turns++
		rec.Turn = tr.Turns
		tr.Records = append(tr.Records, rec)
		tr.Route = append(tr.Route, member)
		if tr.State.Waiting == member {
			tr.State.Waiting = ""
		}
		dec = t.proto.afterFailure(t, tr, member)
	})
	t.logTurn(c, tr.RunID, q, answeredTurn{Record: rec})
	if dec != nil {
		t.setNext(c, tr)
	}
	return tr, dec
}
