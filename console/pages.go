package console

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/trace"
	"github.com/flowteam/flowteam/workflow"
)

//go:embed templates/*.html
var templateFS embed.FS

// staticFS holds static/, served under /static/.
//
//go:embed static
var staticFS embed.FS

// pageNames are the pages; each is parsed with base.html and taskforms.html.
var pageNames = []string{"error", "login", "graphs", "graph", "instances", "instance", "tasks"}

// pageSet holds one template per page.
type pageSet map[string]*template.Template

func parsePages() (pageSet, error) {
	funcs := template.FuncMap{
		"json": func(v any) (string, error) {
			b, err := json.MarshalIndent(v, "", "  ")
			return string(b), err
		},
		"taskForm": func(t TaskView, u User, next string) map[string]any {
			return map[string]any{"Task": t, "User": u, "Next": next, "Actions": []workflow.Action{
				workflow.Forward, workflow.Back, workflow.ForwardJump, workflow.BackJump, workflow.Restart, workflow.Terminate}}
		},
	}
	set := pageSet{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/base.html", "templates/taskforms.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console template %s: %w", name, err)
		}
		set[name] = t
	}
	return set, nil
}

// render writes a page: the data, the signed-in user and whether sign-in exists.
// It renders into a buffer first, so a template error is a clean 500.
func (s *Server) render(w http.ResponseWriter, r *http.Request, name string, data any) {
	u, _ := s.user(r)
	var b bytes.Buffer
	err := s.pages[name].ExecuteTemplate(&b, "base", map[string]any{"User": u, "Auth": s.cfg.Users != nil, "Data": data})
	if err != nil {
		s.cfg.Logger.ErrorContext(r.Context(), "console page failed", "page", name, "error", err)
		http.Error(w, "page failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

func (s *Server) graphsPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, "graphs", s.graphList())
}

// drawGraph draws the graph the request names.
func (s *Server) drawGraph(w http.ResponseWriter, r *http.Request) (*flow.Graph, []byte, bool) {
	g, err := s.graph(r.PathValue("id"))
	if err != nil {
		s.failErr(w, r, err)
		return nil, nil, false
	}
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	img, err := s.rd.Graph(ctx, g)
	if err != nil {
		s.failErr(w, r, err)
		return nil, nil, false
	}
	return g, img, true
}

func (s *Server) graphPage(w http.ResponseWriter, r *http.Request) {
	if g, img, ok := s.drawGraph(w, r); ok {
		s.render(w, r, "graph", map[string]any{"ID": g.ID, "Title": g.Title, "Picture": inlineSVG(img),
			"Source": s.cfg.Sources[g.ID]})
	}
}

func (s *Server) graphPicture(w http.ResponseWriter, r *http.Request) {
	if _, img, ok := s.drawGraph(w, r); ok {
		w.Header().Set("Content-Type", "image/svg+xml")
		_, _ = w.Write(img)
	}
}

func (s *Server) instancesPage(w http.ResponseWriter, r *http.Request) {
	offset, limit, err := paging(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	status := r.URL.Query().Get("status")
	p, err := s.instanceList(r.Context(), status, offset, limit)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	link := func(off int) string {
		q := url.Values{"offset": {strconv.Itoa(off)}, "limit": {strconv.Itoa(limit)}}
		if status != "" {
			q.Set("status", status)
		}
		return "/instances?" + q.Encode()
	}
	data := map[string]any{"Page": p, "Prev": "", "Next": "", "Statuses": []session.Status{session.StatusRunning,
		session.StatusSuspended, session.StatusStopped, session.StatusFailed, session.StatusCompleted}}
	if offset > 0 {
		data["Prev"] = link(max(0, offset-limit))
	}
	if offset+limit < p.Total {
		data["Next"] = link(offset + limit)
	}
	s.render(w, r, "instances", data)
}

// drawInstance gathers the instance the request names and draws the call its
// ?path= names (default: the root call).
func (s *Server) drawInstance(w http.ResponseWriter, r *http.Request) (*InstanceView, string, []byte, bool) {
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	v, err := s.instanceView(ctx, r.PathValue("id"))
	if err != nil {
		s.failErr(w, r, err)
		return nil, "", nil, false
	}
	path := r.URL.Query().Get("path")
	if path == "" {
		path = v.Graph
	}
	img, err := s.picture(ctx, v, path)
	if err != nil {
		s.failErr(w, r, err)
		return nil, "", nil, false
	}
	return v, path, img, true
}

func (s *Server) instancePage(w http.ResponseWriter, r *http.Request) {
	v, path, img, ok := s.drawInstance(w, r)
	if !ok {
		return
	}
	// The fingerprint is that of the very records and snapshot the page shows: any
	// later change differs from it and refreshes the page.
	s.render(w, r, "instance", map[string]any{"View": v, "Path": path, "Picture": inlineSVG(img),
		"Version": v.version, "HasAudit": s.cfg.Audit != "", "Timeline": timelineRows(v.Audit)})
}

func (s *Server) instancePicture(w http.ResponseWriter, r *http.Request) {
	if _, _, img, ok := s.drawInstance(w, r); ok {
		w.Header().Set("Content-Type", "image/svg+xml")
		_, _ = w.Write(img)
	}
}

// picture draws the call at path of the instance, its tooltips redacted as the
// page is, its calling nodes linking to their calls' pages.
func (s *Server) picture(ctx context.Context, v *InstanceView, path string) ([]byte, error) {
	if !v.run.Has(path) {
		return nil, badRequest{fmt.Errorf("instance %q has no call %q", v.ID, path)}
	}
	g, err := s.graph(v.run.Call(path).Graph)
	if err != nil {
		return nil, err
	}
	v.run.redact(v.redactor)
	link := func(child string) string {
		return "/instances/" + url.PathEscape(v.ID) + "?path=" + url.QueryEscape(child)
	}
	return Picture(ctx, &s.rd, g, v.run, path, link)
}

// inlineSVG is Graphviz's SVG without its XML prolog and doctype, to sit in a page.
// Graphviz escapes every text it writes, so the markup is safe to include.
func inlineSVG(img []byte) template.HTML {
	if i := bytes.Index(img, []byte("<svg")); i >= 0 {
		img = img[i:]
	}
	return template.HTML(img)
}

func (s *Server) tasksPage(w http.ResponseWriter, r *http.Request) {
	u, ok := s.user(r)
	var tasks []TaskView
	if ok {
		var err error
		if tasks, err = s.inbox(r.Context(), u); err != nil {
			s.failErr(w, r, err)
			return
		}
	}
	s.render(w, r, "tasks", tasks)
}

// claimForm and submitForm are the inbox's forms: the API's actions, then back to
// the page the form was on.
func (s *Server) claimForm(w http.ResponseWriter, r *http.Request) {
	req := TaskRequest{Graph: r.PostFormValue("graph"), Instance: r.PostFormValue("instance")}
	if _, err := s.claim(r, req); err != nil {
		s.failErr(w, r, err)
		return
	}
	http.Redirect(w, r, safeNext(r.PostFormValue("next")), http.StatusSeeOther)
}

func (s *Server) submitForm(w http.ResponseWriter, r *http.Request) {
	req := TaskRequest{Graph: r.PostFormValue("graph"), Instance: r.PostFormValue("instance"),
		Node: r.PostFormValue("node"), Action: r.PostFormValue("action"), Comment: r.PostFormValue("comment")}
	if _, err := s.submit(r, req); err != nil {
		s.failErr(w, r, err)
		return
	}
	http.Redirect(w, r, safeNext(r.PostFormValue("next")), http.StatusSeeOther)
}

// timelineRows writes the audit timeline's table rows. A page may hold ten thousand
// records: written here, every field escaped with html.EscapeString, they cost a
// tenth of what the template's reflection would.
func timelineRows(recs trace.Records) template.HTML {
	var b strings.Builder
	cell := func(s string) {
		b.WriteString("<td>")
		b.WriteString(html.EscapeString(s))
		b.WriteString("</td>")
	}
	for i := range recs {
		r := &recs[i]
		b.WriteString(`<tr class="`)
		b.WriteString(html.EscapeString(string(r.Status)))
		b.WriteString(`">`)
		cell(strconv.FormatInt(r.Seq, 10))
		cell(r.Time.Format("15:04:05.000"))
		cell(string(r.Status))
		cell(r.Path)
		cell(r.NodeID)
		cell(r.BranchID)
		took, detail := "", r.Reason
		if r.Duration != 0 {
			took = r.Duration.String()
		}
		if r.Error != nil {
			detail = r.Error.Code + ": " + r.Error.Message + detail
		}
		cell(took)
		cell(detail)
		b.WriteString("</tr>\n")
	}
	return template.HTML(b.String())
}
