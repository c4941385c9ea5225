package console

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/trace"
	"github.com/flowteam/flowteam/workflow"
)

// GraphInfo is a graph in the graphs list.
type GraphInfo struct {
	ID    string `json:"id"`
	Title string `json:"title,omitempty"`
	Nodes int    `json:"nodes"`
}

func (s *Server) graphList() []GraphInfo {
	var out []GraphInfo
	for _, g := range s.cfg.Engine.Graphs() {
		out = append(out, GraphInfo{ID: g.ID, Title: g.Title, Nodes: len(g.Nodes())})
	}
	slices.SortFunc(out, func(a, b GraphInfo) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// InstanceRow is an instance in the instances list.
type InstanceRow struct {
	ID      string    `json:"id"`
	Graph   string    `json:"graph"`
	Status  string    `json:"status"`
	Reason  string    `json:"reason,omitempty"`
	Updated time.Time `json:"updated"`
}

// InstancePage is one page of the instances list.
type InstancePage struct {
	Instances []InstanceRow `json:"instances"`
	Total     int           `json:"total"`
	Offset    int           `json:"offset"`
	Limit     int           `json:"limit"`
	Status    string        `json:"status,omitempty"`
}

func (s *Server) instanceList(ctx context.Context, status string, offset, limit int) (*InstancePage, error) {
	st := session.Status(status)
	if status != "" && !st.Valid() {
		return nil, badRequest{fmt.Errorf("unknown status %q", status)}
	}
	ids, err := s.cfg.Store.List(ctx, st)
	if err != nil {
		return nil, err
	}
	p := &InstancePage{Total: len(ids), Offset: offset, Limit: limit, Status: status, Instances: []InstanceRow{}}
	for _, id := range ids[min(offset, len(ids)):min(offset+limit, len(ids))] {
		snap, err := s.cfg.Store.Load(ctx, id)
		if errors.Is(err, session.ErrNotFound) {
			continue // deleted since List
		}
		if err != nil {
			return nil, err
		}
		reason := redact.Mask // rules that do not compile: the reason could quote a secret
		if rd, err := s.redaction(snap); err == nil {
			reason = rd.Redactor.String(snap.Reason)
		}
		p.Instances = append(p.Instances, InstanceRow{ID: id, Graph: snap.Graph, Status: string(snap.Status),
			Reason: reason, Updated: snap.Updated})
	}
	return p, nil
}

// InstanceView is everything one instance page shows.
type InstanceView struct {
	ID       string                `json:"id"`
	Graph    string                `json:"graph"`
	Status   string                `json:"status"`
	Reason   string                `json:"reason,omitempty"`
	Version  int64                 `json:"version,omitempty"`
	Updated  time.Time             `json:"updated,omitzero"`
	Workflow bool                  `json:"workflow"`
	Vars     map[string]any        `json:"vars"`
	Errors   []session.ErrorRecord `json:"errors"`
	History  []workflow.Entry      `json:"history"`
	Tasks    []TaskView            `json:"tasks"`
	Audit    trace.Records         `json:"audit"`
	Calls    []string              `json:"calls"`
	run      *Run
	redactor *redact.Redactor
	// version is the fingerprint (Server.version) of what the view was built from.
	version string
}

// Live reports whether the instance may still change by itself or by a person.
func (v *InstanceView) Live() bool {
	return v.Status == string(session.StatusRunning) || v.Status == string(session.StatusSuspended)
}

// TaskView is a task waiting in an instance.
type TaskView struct {
	Instance string `json:"instance"`
	Graph    string `json:"graph"`
	Node     string `json:"node"`
	Title    string `json:"title,omitempty"`
	State    string `json:"state"`
	Actor    string `json:"actor,omitempty"` // who operates it (the node's actor meta)
}

// instanceView gathers the instance from the store and the audit; an instance known
// to neither is ErrNoRun (404). What it holds is masked by the instance's redaction.
func (s *Server) instanceView(ctx context.Context, id string) (*InstanceView, error) {
	recs, err := s.audit.records(id)
	if err != nil {
		return nil, err
	}
	x := s.executor(nil)
	run, st, err := loadRun(ctx, s.cfg.Store, x, recs, id, s.cfg.Engine.Graph)
	if err != nil {
		if rd, rerr := s.redaction(st.snap); rerr == nil {
			err = maskError(rd.Redactor, err) // a condition's error may quote a variable
		}
		return nil, err
	}
	rd, err := s.redaction(st.snap)
	if err != nil {
		return nil, err
	}
	v := &InstanceView{ID: id, Graph: run.Graph, Status: run.Status, Vars: map[string]any{},
		Errors: []session.ErrorRecord{}, History: []workflow.Entry{}, Tasks: []TaskView{}, Audit: recs.Sorted(),
		run: run, redactor: rd.Redactor, version: fingerprint(st.snap, recs)}
	if v.Audit == nil {
		v.Audit = trace.Records{}
	}
	for _, p := range run.Paths() {
		if p != run.Graph {
			v.Calls = append(v.Calls, p)
		}
	}
	if snap := st.snap; snap != nil {
		v.Status, v.Version, v.Updated = string(snap.Status), snap.Version, snap.Updated
		v.Reason = v.redactor.String(snap.Reason)
		for _, e := range snap.Errors {
			e.Message = v.redactor.String(e.Message)
			v.Errors = append(v.Errors, e)
		}
		if st.inst == nil {
			v.Vars = v.redactor.Map(snap.Vars)
		}
	}
	if st.inst != nil {
		if err := s.addWorkflow(ctx, x, v, st); err != nil {
			return nil, maskError(v.redactor, err)
		}
	}
	redactAudit(v, v.redactor)
	return v, nil
}

// addWorkflow adds an approval instance's variables, history and waiting tasks, the
// tasks as loadRun found them unless it did not look.
func (s *Server) addWorkflow(ctx context.Context, x *workflow.Executor, v *InstanceView, st stored) error {
	inst := st.inst
	v.Workflow, v.Status = true, string(inst.Status)
	v.Vars = v.redactor.Map(inst.Vars)
	v.History = workflow.RedactHistory(v.redactor, inst.History)
	if inst.Status != workflow.Running {
		return nil
	}
	tasks := st.next
	if tasks == nil {
		var err error
		if tasks, err = x.NextTasksOf(ctx, inst, nil); err != nil {
			return err
		}
	}
	for i := range tasks {
		v.Tasks = append(v.Tasks, s.taskView(v.ID, inst.Graph, &tasks[i]))
	}
	return nil
}

func (s *Server) taskView(instance, graph string, t *workflow.Task) TaskView {
	return TaskView{Instance: instance, Graph: graph, Node: t.ID(), Title: t.Node.Title, State: string(t.State),
		Actor: t.Node.MetaString(s.cfg.ActorKey)}
}

// inbox returns the tasks the user may operate, over every running approval instance.
func (s *Server) inbox(ctx context.Context, u User) ([]TaskView, error) {
	ids, err := s.cfg.Store.List(ctx, session.StatusSuspended)
	if err != nil {
		return nil, err
	}
	out := []TaskView{}
	x := s.executor(nil)
	for _, id := range ids {
		snap, err := s.cfg.Store.Load(ctx, id)
		if err != nil {
			continue // gone since List, or unreadable: the instance page says why
		}
		if !workflow.HoldsInstance(snap) {
			continue
		}
		if _, ok := s.cfg.Engine.Graph(snap.Graph); !ok {
			continue
		}
		inst, err := workflow.FromSnapshot(snap)
		if err != nil {
			continue
		}
		tasks, err := x.NextTasksOf(ctx, inst, workflow.As(s.cfg.ActorKey, u.Actor))
		if err != nil {
			continue
		}
		for i := range tasks {
			t := s.taskView(id, snap.Graph, &tasks[i])
			if u.Admin || t.Actor == u.Actor {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// graph returns a loaded graph or a not-found error.
func (s *Server) graph(id string) (*flow.Graph, error) {
	g, ok := s.cfg.Engine.Graph(id)
	if !ok {
		return nil, fmt.Errorf("graph %q: %w", id, flow.ErrGraphNotFound)
	}
	return g, nil
}
