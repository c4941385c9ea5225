package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/workflow"
)

// Redaction is how the console masks one instance.
type Redaction struct {
	// Redactor masks what the console shows of the instance (its variables, history,
	// suspend reason, errors, audit records, picture tooltips) and the error messages
	// of requests on it; nil: Config.Redactor.
	Redactor *redact.Redactor
	// Store saves the instance masked with Redactor when a claim or submit changes it
	// (workflow.StoreRepository.WithRedactor); false saves it whole.
	Store bool
	// Meta is the Snapshot.Meta a masked save records (workflow.StoreRepository.WithMeta),
	// so that the next program to open the instance applies the same rules.
	Meta []string
}

// recordedRedaction is the redaction of an instance when Config.Redaction is nil:
// Config.Redactor with the rules snap records (the variables its last save masked,
// and the "redact=NAME" and "redact-pattern=RE" entries of its Meta, which flowteam
// writes). An instance that records any is saved masked again, its Meta kept.
func (s *Server) recordedRedaction(snap *session.Snapshot) (Redaction, error) {
	if snap == nil {
		return Redaction{Redactor: s.cfg.Redactor}, nil
	}
	names := slices.Clone(snap.Redacted)
	var pats []*regexp.Regexp
	for _, e := range snap.Meta {
		name, value, _ := strings.Cut(e, "=")
		switch name {
		case "redact":
			names = append(names, value)
		case "redact-pattern":
			re, err := regexp.Compile(value)
			if err != nil {
				return Redaction{}, err // showing its matches in clear is worse than not showing the instance
			}
			if re.MatchString("") {
				// It would put a mask between every two characters; flowteam refuses it too.
				return Redaction{}, fmt.Errorf("redact-pattern %q matches the empty text", value)
			}
			pats = append(pats, re)
		}
	}
	return Redaction{Redactor: s.cfg.Redactor.With(redact.Secrets(names...), redact.Patterns(pats...)),
		Store: len(names)+len(pats) > 0, Meta: snap.Meta}, nil
}

// redaction returns the redaction of the instance stored as snap (nil: an instance
// not stored yet), its Redactor having learned the secret values snap holds.
func (s *Server) redaction(snap *session.Snapshot) (Redaction, error) {
	rd, err := s.cfg.Redaction(snap)
	if err != nil {
		if snap != nil {
			return rd, fmt.Errorf("instance %q: redaction rules: %w", snap.Instance, err)
		}
		return rd, fmt.Errorf("redaction rules: %w", err)
	}
	if rd.Redactor == nil {
		rd.Redactor = s.cfg.Redactor
	}
	if snap != nil {
		rd.Redactor = rd.Redactor.ForVars(snap.Vars)
	}
	return rd, nil
}

// taskExecutor returns the executor of a claim or submit on instance, which saves it
// as its redaction says, and the Redactor of the request's error messages, which has
// learned the secret values of the stored instance and of vars, the request's.
func (s *Server) taskExecutor(r *http.Request, instance string, vars map[string]any) (*workflow.Executor, *redact.Redactor, error) {
	snap, err := s.cfg.Store.Load(r.Context(), instance)
	if err != nil {
		if !errors.Is(err, session.ErrNotFound) {
			return nil, s.cfg.Redactor, err
		}
		snap = nil // a claim creates it
	}
	rd, err := s.redaction(snap)
	if err != nil {
		return nil, s.cfg.Redactor, err
	}
	repo := workflow.NewStoreRepository(s.cfg.Store)
	if rd.Store {
		repo = repo.WithRedactor(rd.Redactor).WithMeta(rd.Meta...)
	}
	return s.executor(&loadedRepository{StoreRepository: repo, id: instance, snap: snap}), rd.Redactor.ForVars(vars), nil
}

// loadedRepository answers the first Load of the instance a claim or submit has
// loaded already with that snapshot (nil: not stored), so that the request reads
// the store once; a later Load, after a lost race, reads the store. It serves one
// request, which loads from one goroutine.
type loadedRepository struct {
	*workflow.StoreRepository
	id   string
	snap *session.Snapshot
	used bool
}

func (r *loadedRepository) Load(ctx context.Context, id string) (*workflow.Instance, error) {
	if id != r.id || r.used {
		return r.StoreRepository.Load(ctx, id)
	}
	r.used = true
	if r.snap == nil {
		return nil, fmt.Errorf("instance %q: %w", id, session.ErrNotFound)
	}
	return workflow.FromSnapshot(r.snap)
}

// maskedError is an error whose message a Redactor masked; errors.Is and errors.As
// see the error under it.
type maskedError struct {
	err error
	msg string
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }

// maskError returns err with its message masked by red (nil for a nil err).
func maskError(red *redact.Redactor, err error) error {
	if err == nil {
		return nil
	}
	return &maskedError{err: err, msg: red.String(err.Error())}
}

// redactAudit masks the error messages, reasons and attributes of the records with
// red, which has learned the secret values of the stored variables (Server.redaction):
// v.Vars, masked already, would teach it none.
func redactAudit(v *InstanceView, red *redact.Redactor) {
	for i := range v.Audit {
		r := &v.Audit[i]
		r.Reason = red.String(r.Reason)
		if r.Error != nil {
			e := *r.Error
			e.Message = red.String(e.Message)
			r.Error = &e
		}
		if r.Attrs != nil {
			r.Attrs = red.Map(r.Attrs)
		}
	}
}
