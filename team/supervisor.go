package team

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/template"
	"time"
	"unicode"

	"github.com/flowteam/flowteam/flow"
	"github.com/google/jsonschema-go/jsonschema"
)

type supervisor struct{}

func (supervisor) Name() string                 { return "supervisor" }
func (supervisor) start(*TeamAgent, *TeamTrace) {}
func (supervisor) concurrent() bool             { return false }

func (supervisor) check(t *TeamAgent) error {
	if t.cfg.model == nil {
		return errors.New("needs a supervisor model (WithSupervisorModel)")
	}
	if t.cfg.instruction != "" {
		if _, err := parseTemplate(t.name+".supervisor", t.cfg.instruction); err != nil {
			return fmt.Errorf("supervisor instruction: %w", err)
		}
	}
	return nil
}

func (supervisor) build(t *TeamAgent, spec *flow.GraphSpec) error {
	spec.NodeByID(TeamNodeStart).LinkTo(TeamNodeSupervisor)
	st := &supervisorTask{t: t}
	if t.cfg.instruction != "" {
		st.tmpl, _ = parseTemplate(t.name+".supervisor", t.cfg.instruction)
	}
	spec.Activity(TeamNodeSupervisor).SetTitle("supervisor").SetMeta(MetaAgent, t.name).Do(st).LinkTo(TeamNodeRoute)
	route := spec.Exclusive(TeamNodeRoute)
	for i, m := range t.members {
		route.LinkTo(m.Name(), flow.LinkWhen(t.routeCond(m.Name())), flow.LinkTitle(m.Name()))
		t.memberNode(spec, i, m).LinkTo(TeamNodeSupervisor)
	}
	route.LinkTo(TeamNodeEnd, flow.LinkTitle("finish"))
	return nil
}

func (supervisor) afterMember(*TeamAgent, *TeamTrace, string, *Answer, *handoff) *RouteDecision {
	return nil
}

// afterFailure leaves the next step to the supervisor, which sees the failure.
func (supervisor) afterFailure(*TeamAgent, *TeamTrace, string) *RouteDecision { return nil }

func (supervisor) afterSkip(_ *TeamAgent, tr *TeamTrace, _, reason string) *RouteDecision {
	countSkip(tr, reason)
	return nil
}

// supervisorTask is the supervisor node's task.
type supervisorTask struct {
	t    *TeamAgent
	tmpl *template.Template
}

// AgentName names the team for the audit.
func (st *supervisorTask) AgentName() string { return st.t.name }

// Run makes one routing decision.
func (st *supervisorTask) Run(ctx context.Context, c *flow.Context, n *flow.Node) error {
	t := st.t
	tr := t.trace(c)
	var (
		dec  RouteDecision
		rec  *TeamRecord
		resp *ChatResponse
	)
	switch {
	case !t.cfg.icpts.supervisorContinue(ctx, tr):
		dec = RouteDecision{Action: ActionFinish, Source: SourceRule, Reason: ReasonInterceptor}
	case tr.Turns >= t.maxTurns:
		dec = RouteDecision{Action: ActionFinish, Source: SourceRule, Reason: ReasonMaxTurns}
	default:
		req, err := st.request(c, tr)
		if err != nil {
			return fmt.Errorf("team %q: supervisor: %w", t.name, err)
		}
		began := time.Now()
		resp, err = t.modelCall(ctx, c, n, tr, req)
		if err != nil {
			return fmt.Errorf("team %q: supervisor: %w", t.name, err)
		}
		dec = t.resolve(resp.Message)
		if dec.Action == ActionRoute && !dec.Unresolved && loopDetected(append(tr.Route, dec.To), t.cfg.loopRepeats) {
			dec = RouteDecision{Action: ActionFinish, Source: SourceRule, Reason: ReasonLoop, Raw: dec.To}
		}
		rec = &TeamRecord{Kind: RecordSupervisor, Role: RecordSupervisor, Source: RecordSupervisor, Node: n.ID,
			Branch: c.BranchID(), Content: summarize(resp.Message), Status: RunCompleted, Started: began,
			Duration: time.Since(began), Usage: resp.Usage}
	}
	dec.Turn = tr.Turns
	tr = t.update(c, func(tr *TeamTrace) {
		if rec != nil {
			rec.Turn = tr.Turns
			tr.Records = append(tr.Records, *rec)
			tr.addSupervisor(rec.Usage)
		}
		tr.decide(dec)
		if dec.Action == ActionFinish {
			if dec.Source == SourceRule {
				tr.State.Halt = dec.Reason
			}
			tr.FinalAnswer = t.lastAnswer(tr)
			if dec.Source == SourceTool && dec.Task != "" {
				tr.FinalAnswer = dec.Task // finished with an answer
			}
		}
	})
	t.setNext(c, tr)
	t.decided(ctx, tr, &dec, n.ID, c.BranchID())
	return nil
}

// request builds the supervisor's model request.
func (st *supervisorTask) request(c *flow.Context, tr *TeamTrace) (*ChatRequest, error) {
	t := st.t
	var sys strings.Builder
	if st.tmpl != nil {
		instr, err := renderTemplate(st.tmpl, c, tr.Prompt)
		if err != nil {
			return nil, fmt.Errorf("instruction: %w", err)
		}
		sys.WriteString(instr + "\n\n")
	} else {
		fmt.Fprintf(&sys, "You are the supervisor of the team %q. You do not do the work yourself: you decide which member acts next.\n\n", t.name)
	}
	sys.WriteString("Members:\n")
	for _, m := range t.members {
		fmt.Fprintf(&sys, "- %s: %s\n", m.Name(), m.Role())
	}
	fmt.Fprintf(&sys, "\nCall the tool %q with {\"to\": \"<member>\", \"task\": \"<what the member should do>\"} to let a member act. "+
		"When the task is done, call it with {\"to\": %q} (optionally with \"answer\"), or answer %s.", RouteToolName, t.finish, t.finish)

	var user strings.Builder
	user.WriteString("Task: " + tr.Prompt)
	first := true
	for _, r := range tr.Records {
		if r.Kind != RecordMember {
			continue
		}
		if first {
			user.WriteString("\n\nWork so far:")
			first = false
		}
		switch r.Status {
		case RunCompleted:
			user.WriteString("\n[" + r.Source + "] " + r.Content)
		default:
			user.WriteString("\n" + describeRecord(r.Source, r))
		}
	}
	targets := append(append([]string{}, t.names...), t.finish)
	tool := ToolDef{Name: RouteToolName, Description: "Choose the member that acts next, or finish.",
		Parameters: routeSchema(t.finish, targets)}
	return &ChatRequest{Messages: []Message{SystemMessage(sys.String()), UserMessage(user.String())},
		Tools: []ToolDef{tool}, Options: t.cfg.options}, nil
}

// routeSchema is the schema of the route tool's arguments: a target among targets,
// and the member's task or the team's answer.
func routeSchema(finish string, targets []string) *jsonschema.Schema {
	to := &jsonschema.Schema{Type: "string", Description: "a member's name, or " + finish + " when the task is done"}
	for _, t := range targets {
		to.Enum = append(to.Enum, t)
	}
	return &jsonschema.Schema{Type: "object", Required: []string{"to"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
		Properties: map[string]*jsonschema.Schema{
			"to":     to,
			"task":   {Type: "string", Description: "what the member should do"},
			"answer": {Type: "string", Description: "the team's final answer, when finishing"},
		}}
}

// summarize renders a supervisor message for its record.
func summarize(m Message) string {
	if len(m.ToolCalls) == 0 {
		return m.Content
	}
	parts := []string{}
	if m.Content != "" {
		parts = append(parts, m.Content)
	}
	for _, tc := range m.ToolCalls {
		parts = append(parts, tc.Name+string(tc.Args))
	}
	return strings.Join(parts, "\n")
}

// resolve reads a routing decision from the supervisor's message.
func (t *TeamAgent) resolve(m Message) RouteDecision {
	for _, tc := range m.ToolCalls {
		args := toolArgs(tc.Args)
		var to string
		switch {
		case tc.Name == RouteToolName || tc.Name == TransferToolName:
			for _, k := range []string{"to", "member", "agent", "name", "next"} {
				if to = args[k]; to != "" {
					break
				}
			}
		case strings.HasPrefix(tc.Name, TransferToolName+"_"):
			to = strings.TrimPrefix(tc.Name, TransferToolName+"_")
		default:
			continue
		}
		task := args["task"]
		if task == "" {
			task = args["instruction"]
		}
		raw := tc.Name + string(tc.Args)
		if t.isFinish(to) {
			return RouteDecision{Action: ActionFinish, Source: SourceTool, Task: args["answer"], Reason: ReasonFinishMarker}
		}
		if name, ok := t.member(to); ok {
			return RouteDecision{Action: ActionRoute, To: name, Task: task, Source: SourceTool}
		}
		return t.fallback(raw)
	}
	text := strings.TrimSpace(m.Content)
	if text == "" && len(m.ToolCalls) > 0 {
		return t.fallback(summarize(m))
	}
	// An explicit choice (the text is a member's name, or a "route:" line) beats the
	// finish marker found anywhere in the prose ("not finished yet"); the marker
	// beats a member merely named in it.
	if name, ok := t.memberNamed(text); ok {
		return RouteDecision{Action: ActionRoute, To: name, Source: SourceText}
	}
	if containsFold(text, t.finish) {
		return RouteDecision{Action: ActionFinish, Source: SourceText, Reason: ReasonFinishMarker}
	}
	if name, ok := t.memberInText(text); ok {
		return RouteDecision{Action: ActionRoute, To: name, Source: SourceText}
	}
	return t.fallback(text)
}

// fallback is the decision that replaces an unresolvable one.
func (t *TeamAgent) fallback(raw string) RouteDecision {
	d := RouteDecision{Action: ActionFinish, Source: SourceFallback, Reason: ReasonUnresolved, Raw: raw, Unresolved: true}
	if t.cfg.fallback != "" {
		d.Action, d.To = ActionRoute, t.cfg.fallback
	}
	return d
}

func (t *TeamAgent) isFinish(s string) bool {
	s = strings.TrimSpace(s)
	return strings.EqualFold(s, t.finish) || strings.EqualFold(s, "finish") || strings.EqualFold(s, TeamNodeEnd)
}

// member finds a member by name, ignoring case.
func (t *TeamAgent) member(s string) (string, bool) {
	s = strings.TrimSpace(s)
	for _, n := range t.names {
		if strings.EqualFold(n, s) {
			return n, true
		}
	}
	return "", false
}

// memberNamed finds the member a text chooses explicitly: the whole text (quotes and
// punctuation aside) or a "route:"/"next:" line.
func (t *TeamAgent) memberNamed(text string) (string, bool) {
	trim := func(s string) string {
		return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) && r != '-' && r != '_' })
	}
	if n, ok := t.member(trim(text)); ok {
		return n, true
	}
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		for _, p := range []string{"route:", "next:", "route to", "transfer_to:", "transfer to"} {
			if len(l) >= len(p) && strings.EqualFold(l[:len(p)], p) {
				if n, ok := t.member(trim(l[len(p):])); ok {
					return n, true
				}
			}
		}
	}
	return "", false
}

// memberInText finds the only member a text names, if it names exactly one.
func (t *TeamAgent) memberInText(text string) (string, bool) {
	var found []string
	words := strings.FieldsFunc(text, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.')
	})
	for _, n := range t.names {
		for _, w := range words {
			if strings.EqualFold(strings.Trim(w, "."), n) {
				found = append(found, n)
				break
			}
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return "", false
}

func containsFold(s, sub string) bool {
	return sub != "" && strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// loopDetected reports whether route ends in one member repeated n times, or two
// members alternating n times (n < 2 disables the check).
func loopDetected(route []string, n int) bool {
	if n < 2 {
		return false
	}
	l := len(route)
	if l >= n {
		same := true
		for i := l - n; i < l; i++ {
			if route[i] != route[l-1] {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	if l >= 2*n && route[l-1] != route[l-2] {
		for i := l - 2*n; i < l; i++ {
			if route[i] != route[l-1-(l-1-i)%2] {
				return false
			}
		}
		return true
	}
	return false
}
