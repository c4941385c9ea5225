package console_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/workflow"
)

// nextEvent reads the data line of the next server-sent event.
func nextEvent(t *testing.T, sc *bufio.Scanner) string {
	t.Helper()
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			return data
		}
	}
	require.NoError(t, sc.Err())
	t.Fatal("event stream ended")
	return ""
}

func TestEventsFollowTheInstance(t *testing.T) {
	f := newFixture(t, false)
	ts := httptest.NewServer(f.srv)
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", ts.URL+"/instances/req-1/events", nil)
	require.NoError(t, err)
	req.Host = "localhost"
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	sc := bufio.NewScanner(resp.Body)
	first := nextEvent(t, sc)
	assert.Equal(t, "2/suspended/0", first)

	x := workflow.NewExecutor(f.eng, workflow.NewActorController(), workflow.NewStoreRepository(f.store))
	_, err = x.ClaimTask(ctx, "leave-approval", "req-1", workflow.As("actor", "lead"), nil)
	require.NoError(t, err)
	assert.Equal(t, "3/suspended/0", nextEvent(t, sc), "a save is news")
	cancel()
}

func TestInstancePageReadsTheStoreOnce(t *testing.T) {
	f := newFixture(t, false)
	srv, cs := f.countingServer(t)
	w := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/instances/req-1", nil)
	req.Host = "localhost"
	srv.ServeHTTP(w, req)
	require.Equal(t, http.StatusOK, w.Code)
	assert.Contains(t, w.Body.String(), `data-version="2/suspended/0"`, "the version the events stream starts with")
	assert.EqualValues(t, 1, cs.loads.Load())
}
