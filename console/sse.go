package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/trace"
)

// version is a fingerprint of what an instance page shows: the snapshot's version
// and status and the number of audit records. It changes when a node completes.
func (s *Server) version(ctx context.Context, id string) (string, error) {
	recs, err := s.audit.records(id)
	if err != nil {
		return "", err
	}
	snap, err := s.cfg.Store.Load(ctx, id)
	switch {
	case errors.Is(err, session.ErrNotFound):
		snap = nil
	case err != nil:
		return "", err
	}
	return fingerprint(snap, recs), nil
}

// fingerprint is the version of an instance stored as snap (nil: not stored) with
// the audit records recs.
func fingerprint(snap *session.Snapshot, recs trace.Records) string {
	if snap == nil {
		return fmt.Sprintf("-/-/%d", len(recs))
	}
	return fmt.Sprintf("%d/%s/%d", snap.Version, snap.Status, len(recs))
}

// instanceEvents streams server-sent events for an instance page: a "change"
// event carrying the fingerprint, now and whenever it changes (polled). The stream
// ends when the client goes or the server shuts down (the request's context).
func (s *Server) instanceEvents(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	tick := time.NewTicker(s.cfg.Poll)
	defer tick.Stop()
	last := ""
	for {
		v, err := s.version(r.Context(), id)
		if err == nil && v != last {
			last = v
			if _, err := fmt.Fprintf(w, "event: change\ndata: %s\n\n", v); err != nil {
				return
			}
			if rc.Flush() != nil {
				return
			}
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}
