package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/flowteam/flowteam/export"
	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/workflow"
)

// badRequest marks an error of the request itself (400).
type badRequest struct{ error }

func (b badRequest) Unwrap() error { return b.error }

// httpStatus maps an error to the HTTP status meaning what "flowteam task" exit
// codes mean: 404 unknown, 409 conflict, 403 not permitted, 400 bad input, 422 a
// task's script failed.
func httpStatus(err error) int {
	var bad badRequest
	var te *workflow.TaskError
	switch {
	case errors.Is(err, session.ErrNotFound), errors.Is(err, flow.ErrGraphNotFound), errors.Is(err, ErrNoRun),
		errors.Is(err, workflow.ErrUnknownNode):
		return http.StatusNotFound
	case errors.Is(err, workflow.ErrNotPermitted):
		return http.StatusForbidden
	case errors.Is(err, workflow.ErrConflict):
		return http.StatusConflict
	case errors.As(err, &te):
		return http.StatusUnprocessableEntity
	case errors.As(err, &bad), errors.Is(err, workflow.ErrUnknownAction), errors.Is(err, workflow.ErrNotReached),
		errors.Is(err, workflow.ErrWrongGraph), errors.Is(err, workflow.ErrWrongController), errors.Is(err, session.ErrInvalidID):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// fail answers an error: JSON under /api/, a plain page elsewhere.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if strings.HasPrefix(r.URL.Path, "/api/") {
		writeJSON(w, status, map[string]string{"error": msg})
		return
	}
	w.WriteHeader(status)
	s.render(w, r, "error", map[string]any{"Status": status, "StatusText": http.StatusText(status), "Message": msg})
}

func (s *Server) failErr(w http.ResponseWriter, r *http.Request, err error) {
	status := httpStatus(err)
	if status == http.StatusInternalServerError {
		s.cfg.Logger.ErrorContext(r.Context(), "console request failed", "path", r.URL.Path,
			"error", s.cfg.Redactor.String(err.Error()))
	}
	s.fail(w, r, status, s.cfg.Redactor.String(err.Error()))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v) // the client went away: nothing to tell
}

func (s *Server) apiGraphs(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"graphs": s.graphList()})
}

// apiGraph answers a graph as JSON (its definition document), or with ?format= any
// export format or svg.
func (s *Server) apiGraph(w http.ResponseWriter, r *http.Request) {
	g, err := s.graph(r.PathValue("id"))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	format := r.URL.Query().Get("format")
	if strings.EqualFold(format, "svg") {
		s.graphPicture(w, r)
		return
	}
	if format == "" {
		format = "json"
	}
	f, err := export.ParseFormat(format)
	if err != nil {
		s.failErr(w, r, badRequest{err})
		return
	}
	var b strings.Builder
	if err := export.Write(&b, g, f); err != nil {
		s.failErr(w, r, err)
		return
	}
	ctype := "text/plain; charset=utf-8"
	if f == export.FormatJSON {
		ctype = "application/json"
	}
	w.Header().Set("Content-Type", ctype)
	_, _ = w.Write([]byte(b.String()))
}

func (s *Server) apiInstances(w http.ResponseWriter, r *http.Request) {
	offset, limit, err := paging(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	p, err := s.instanceList(r.Context(), r.URL.Query().Get("status"), offset, limit)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

// paging reads ?offset= and ?limit= (default 0 and 50, at most 500).
func paging(r *http.Request) (offset, limit int, err error) {
	limit = 50
	q := r.URL.Query()
	for name, dst := range map[string]*int{"offset": &offset, "limit": &limit} {
		if v := q.Get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return 0, 0, badRequest{fmt.Errorf("%s %q: want a number of at least 0", name, v)}
			}
			*dst = n
		}
	}
	if limit == 0 || limit > 500 {
		limit = 500
	}
	return offset, limit, nil
}

func (s *Server) apiInstance(w http.ResponseWriter, r *http.Request) {
	if strings.EqualFold(r.URL.Query().Get("format"), "svg") {
		s.instancePicture(w, r)
		return
	}
	v, err := s.instanceView(r.Context(), r.PathValue("id"))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) apiTasks(w http.ResponseWriter, r *http.Request) {
	u, ok := s.user(r)
	if !ok {
		writeJSON(w, http.StatusOK, map[string]any{"actor": "", "tasks": []TaskView{}})
		return
	}
	tasks, err := s.inbox(r.Context(), u)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"actor": u.Actor, "tasks": tasks})
}

// TaskRequest is the body of POST /api/tasks/claim and /api/tasks/submit: the
// fields of "flowteam task claim/submit". The actor is always the signed-in user.
type TaskRequest struct {
	Graph     string         `json:"graph"`
	Instance  string         `json:"instance"`
	Node      string         `json:"node,omitempty"`
	Action    string         `json:"action,omitempty"`
	Comment   string         `json:"comment,omitempty"`
	Vars      map[string]any `json:"vars,omitempty"`
	IfWaiting bool           `json:"if_waiting,omitempty"`
}

func readTaskRequest(r *http.Request) (TaskRequest, error) {
	var req TaskRequest
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, badRequest{fmt.Errorf("request body: %w", err)}
	}
	if req.Graph == "" || req.Instance == "" {
		return req, badRequest{errors.New("graph and instance are required")}
	}
	return req, nil
}

func (s *Server) apiClaim(w http.ResponseWriter, r *http.Request) {
	req, err := readTaskRequest(r)
	if err == nil {
		var t *TaskView
		if t, err = s.claim(r, req); err == nil {
			writeJSON(w, http.StatusOK, map[string]any{"instance": req.Instance, "graph": req.Graph, "task": t})
			return
		}
	}
	s.failErr(w, r, err)
}

func (s *Server) apiSubmit(w http.ResponseWriter, r *http.Request) {
	req, err := readTaskRequest(r)
	if err == nil && (req.Node == "" || req.Action == "") {
		err = badRequest{errors.New("node and action are required")}
	}
	if err == nil {
		var o *workflow.Outcome
		if o, err = s.submit(r, req); err == nil {
			writeJSON(w, http.StatusOK, map[string]any{"instance": o.Instance, "graph": o.Graph, "node": o.Node,
				"action": o.Action, "status": o.Status})
			return
		}
	}
	s.failErr(w, r, err)
}

// claim claims the first task the signed-in user may operate; nil when none.
func (s *Server) claim(r *http.Request, req TaskRequest) (*TaskView, error) {
	if _, err := s.graph(req.Graph); err != nil {
		return nil, err
	}
	x, red, err := s.taskExecutor(r, req.Instance, req.Vars)
	if err != nil {
		return nil, maskError(red, err)
	}
	u, _ := s.user(r)
	t, err := x.ClaimTask(r.Context(), req.Graph, req.Instance, workflow.As(s.cfg.ActorKey, u.Actor), req.Vars)
	if err != nil || t == nil {
		return nil, maskError(red, err)
	}
	v := s.taskView(req.Instance, req.Graph, t)
	return &v, nil
}

// submit applies an action as the signed-in user.
func (s *Server) submit(r *http.Request, req TaskRequest) (*workflow.Outcome, error) {
	if _, err := s.graph(req.Graph); err != nil {
		return nil, err
	}
	x, red, err := s.taskExecutor(r, req.Instance, req.Vars)
	if err != nil {
		return nil, maskError(red, err)
	}
	u, _ := s.user(r)
	sub := workflow.Submit{Node: req.Node, Action: workflow.Action(req.Action), Actor: workflow.As(s.cfg.ActorKey, u.Actor),
		Vars: req.Vars, Comment: req.Comment}
	var o *workflow.Outcome
	if req.IfWaiting {
		o, err = x.SubmitTaskIfWaiting(r.Context(), req.Graph, req.Instance, sub)
	} else {
		o, err = x.SubmitTask(r.Context(), req.Graph, req.Instance, sub)
	}
	return o, maskError(red, err)
}
