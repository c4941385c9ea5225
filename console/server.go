package console

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/flowteam/flowteam/export/svg"
	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/workflow"
)

// Config is what a console serves.
type Config struct {
	// Engine holds the graphs (loaded from the definition files).
	Engine *flow.Engine
	// Sources maps a graph id to its definition text, shown on its page.
	Sources map[string]string
	// Store holds the instances.
	Store session.Store
	// Audit is a JSON Lines audit file, or a directory of them ("*.jsonl"); empty:
	// no audit timeline.
	Audit string
	// Users maps tokens to actors; nil: the console is read-only.
	Users *Users
	// ActorKey is the meta key naming a node's actor (default "actor").
	ActorKey string
	// Redactor masks variables and texts shown, with the rules each instance records
	// on top (see Redaction); nil masks the default sensitive keys only.
	Redactor *redact.Redactor
	// Redaction returns the redaction of an instance from its stored snapshot (nil
	// for an instance a claim creates): what the console shows of it is masked with
	// its Redactor, and a claim or submit saves it as it says. nil: Redactor with the
	// rules the instance records (Snapshot.Redacted, and the "redact=NAME" and
	// "redact-pattern=RE" entries of Snapshot.Meta), an instance that records any
	// saved masked again with its Meta. "flowteam serve" gives the rules of
	// "flowteam task".
	Redaction func(snap *session.Snapshot) (Redaction, error)
	// Logger receives the access log; nil: slog.Default().
	Logger *slog.Logger
	// Loopback refuses requests whose Host is not a loopback name (set when the
	// console listens on loopback only, against DNS rebinding).
	Loopback bool
	// Poll is how often a running instance's page checks for news (default 500ms).
	Poll time.Duration
}

// Server is the console's HTTP handler. Create it with New; Close releases its
// renderer.
type Server struct {
	cfg   Config
	rd    svg.Renderer
	pages pageSet
	audit *auditCache
	mux   *http.ServeMux
	cop   *http.CrossOriginProtection
}

// New returns a console serving cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Engine == nil || cfg.Store == nil {
		return nil, errors.New("console needs an engine and a store")
	}
	if cfg.ActorKey == "" {
		cfg.ActorKey = "actor"
	}
	if cfg.Redactor == nil {
		cfg.Redactor = redact.New()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 500 * time.Millisecond
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, pages: pages, audit: newAuditCache(cfg.Audit), mux: http.NewServeMux(),
		cop: http.NewCrossOriginProtection()}
	s.cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, http.StatusForbidden, "cross-origin request refused")
	}))
	if s.cfg.Redaction == nil {
		s.cfg.Redaction = s.recordedRedaction
	}
	s.routes()
	return s, nil
}

// Close releases the Graphviz renderer.
func (s *Server) Close() error { return s.rd.Close() }

// ServeHTTP serves the console: the Host check, the access log, then the routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	if s.cfg.Loopback && !loopbackHost(r.Host) {
		http.Error(rec, "this console answers on loopback names only", http.StatusMisdirectedRequest)
	} else {
		s.mux.ServeHTTP(rec, r)
	}
	u, _ := s.user(r)
	s.cfg.Logger.LogAttrs(r.Context(), slog.LevelInfo, "http",
		slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", rec.status),
		slog.Duration("duration", time.Since(start)), slog.String("actor", u.Actor), slog.String("remote", r.RemoteAddr))
}

func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/instances", http.StatusSeeOther)
	})
	m.Handle("GET /static/", http.FileServerFS(staticFS))
	m.HandleFunc("GET /login", s.loginPage)
	m.HandleFunc("POST /login", s.login)
	m.Handle("POST /logout", s.cop.Handler(http.HandlerFunc(s.logout)))

	page := func(pattern string, h http.HandlerFunc) { m.Handle(pattern, s.reader(h, true)) }
	page("GET /graphs", s.graphsPage)
	page("GET /graphs/{id}", s.graphPage)
	page("GET /graphs/{id}/picture", s.graphPicture)
	page("GET /instances", s.instancesPage)
	page("GET /instances/{id}", s.instancePage)
	page("GET /instances/{id}/picture", s.instancePicture)
	page("GET /instances/{id}/events", s.instanceEvents)
	page("GET /tasks", s.tasksPage)
	m.Handle("POST /tasks/claim", s.writer(s.claimForm))
	m.Handle("POST /tasks/submit", s.writer(s.submitForm))

	api := func(pattern string, h http.HandlerFunc) { m.Handle(pattern, s.reader(h, false)) }
	api("GET /api/graphs", s.apiGraphs)
	api("GET /api/graphs/{id}", s.apiGraph)
	api("GET /api/instances", s.apiInstances)
	api("GET /api/instances/{id}", s.apiInstance)
	api("GET /api/tasks", s.apiTasks)
	m.Handle("POST /api/tasks/claim", s.writer(s.apiClaim))
	m.Handle("POST /api/tasks/submit", s.writer(s.apiSubmit))
}

// executor returns the workflow executor acting for the users (the admins of the
// users file may operate every node) on repo; nil: the store as it is, for reading.
func (s *Server) executor(repo workflow.Repository) *workflow.Executor {
	ctrl := workflow.NewActorController(s.cfg.ActorKey)
	if s.cfg.Users != nil {
		ctrl = ctrl.WithAdmins(s.cfg.Users.admins()...)
	}
	if repo == nil {
		repo = workflow.NewStoreRepository(s.cfg.Store)
	}
	return workflow.NewExecutor(s.cfg.Engine, ctrl, repo)
}

// statusWriter remembers the status written, for the access log. It passes Flush
// on, for server-sent events.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// loopbackHost reports whether a Host header names this machine's loopback.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsLoopback reports whether a listen address (HOST:PORT) binds loopback only.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && host != "" && loopbackHost(host)
}

// ctxTimeout bounds the store and renderer work of one request.
func ctxTimeout(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), 30*time.Second)
}
