package team

import (
	"fmt"
	"strings"

	"github.com/flowteam/flowteam/flow"
)

type swarm struct {
	entry string
}

// WithEntryMember names the member of a Swarm team that holds the conversation first
// (default: the first member).
func WithEntryMember(member string) Option {
	return teamOption("WithEntryMember", func(c *teamConfig) { c.swarm.entry = member })
}

func (s *swarm) Name() string     { return "swarm" }
func (s *swarm) concurrent() bool { return false }

func (s *swarm) check(t *TeamAgent) error {
	if s.entry != "" && t.byName[s.entry] == nil {
		return fmt.Errorf("entry %q is not a member", s.entry)
	}
	return nil
}

func (s *swarm) entryOf(t *TeamAgent) string {
	if s.entry != "" {
		return s.entry
	}
	return t.names[0]
}

func (s *swarm) build(t *TeamAgent, spec *flow.GraphSpec) error {
	spec.NodeByID(TeamNodeStart).LinkTo(TeamNodeRoute)
	route := spec.Exclusive(TeamNodeRoute)
	for i, m := range t.members {
		route.LinkTo(m.Name(), flow.LinkWhen(t.routeCond(m.Name())), flow.LinkTitle(m.Name()))
		t.memberNode(spec, i, m).LinkTo(TeamNodeRoute)
	}
	route.LinkTo(TeamNodeEnd, flow.LinkTitle("finish"))
	return nil
}

func (s *swarm) start(t *TeamAgent, tr *TeamTrace) {
	d := RouteDecision{Action: ActionRoute, To: s.entryOf(t), Source: SourceProtocol}
	tr.decide(d)
}

func (s *swarm) afterMember(t *TeamAgent, tr *TeamTrace, member string, ans *Answer, ho *handoff) *RouteDecision {
	d := RouteDecision{Turn: tr.Turns, From: member}
	finishWith := func(reason, source string) *RouteDecision {
		d.Action, d.To, d.Reason, d.Source = ActionFinish, "", reason, source
		if source == SourceRule {
			tr.State.Halt = reason
		}
		tr.decide(d)
		tr.FinalAnswer = t.lastAnswer(tr)
		return &d
	}
	var target string
	switch {
	case ho != nil:
		target, d.Task, d.Source = ho.To, ho.Reason, SourceTool
	default:
		if to, ok := parseTransfer(ans.Content); ok {
			target, d.Source = to, SourceText
		}
	}
	if target == "" {
		if containsFold(ans.Content, t.finish) {
			return finishWith(ReasonFinishMarker, SourceText)
		}
		return finishWith(ReasonNoHandoff, SourceProtocol)
	}
	name, ok := t.member(target)
	if !ok {
		if t.isFinish(target) {
			return finishWith(ReasonFinishMarker, d.Source)
		}
		fb := t.fallback(strings.TrimSpace(ans.Content))
		fb.Turn, fb.From = tr.Turns, member
		if fb.Action == ActionFinish {
			tr.decide(fb)
			tr.FinalAnswer = t.lastAnswer(tr)
			return &fb
		}
		d = fb
		name = fb.To
	}
	if tr.Turns >= t.maxTurns {
		return finishWith(ReasonMaxTurns, SourceRule)
	}
	tr.State.Transfers++
	d.Action, d.To = ActionRoute, name
	tr.decide(d)
	return &d
}

// afterFailure finishes: the member holding the conversation failed and handed it to
// nobody. Routing back to it would retry it outside any retry policy (and it may not
// be idempotent); a node retry policy still retries it, as Halt is left unset.
func (s *swarm) afterFailure(t *TeamAgent, tr *TeamTrace, member string) *RouteDecision {
	d := RouteDecision{Turn: tr.Turns, Action: ActionFinish, From: member, Source: SourceRule, Reason: ReasonMemberFailed}
	tr.decide(d)
	tr.FinalAnswer = t.lastAnswer(tr)
	return &d
}

func (s *swarm) afterSkip(t *TeamAgent, tr *TeamTrace, member, reason string) *RouteDecision {
	countSkip(tr, reason)
	d := RouteDecision{Turn: tr.Turns, Action: ActionFinish, From: member, Source: SourceRule, Reason: reason}
	tr.State.Halt = reason
	tr.decide(d)
	tr.FinalAnswer = t.lastAnswer(tr)
	return &d
}
