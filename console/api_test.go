package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/redact"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/workflow"
)

func TestTaskAPIStatuses(t *testing.T) {
	f := newFixture(t, true)
	post := func(path, token, body string) (int, string) {
		w := f.do(t, "POST", path, token, body)
		return w.Code, w.Body.String()
	}
	submit := func(node, action, extra string) string {
		return `{"graph":"leave-approval","instance":"req-1","node":"` + node + `","action":"` + action + `"` + extra + `}`
	}
	code, body := post("/api/tasks/submit", employeeToken, submit("lead", "forward", ""))
	assert.Equal(t, http.StatusForbidden, code, "the employee may not approve: %s", body)
	code, _ = post("/api/tasks/submit", leadToken, submit("nowhere", "forward", ""))
	assert.Equal(t, http.StatusNotFound, code)
	code, _ = post("/api/tasks/submit", leadToken, submit("lead", "approve", ""))
	assert.Equal(t, http.StatusBadRequest, code)
	code, _ = post("/api/tasks/submit", leadToken, `{"graph":"nope","instance":"req-1","node":"lead","action":"forward"}`)
	assert.Equal(t, http.StatusNotFound, code)
	code, _ = post("/api/tasks/submit", leadToken, submit("lead", "forward", `,"actor":{"actor":"director"}`))
	assert.Equal(t, http.StatusBadRequest, code, "the actor is the signed-in user's, never the body's")
	code, _ = post("/api/tasks/submit", leadToken, `{"graph":"leave-approval"}`)
	assert.Equal(t, http.StatusBadRequest, code)
	code, _ = post("/api/tasks/submit", leadToken, `not json`)
	assert.Equal(t, http.StatusBadRequest, code)
	code, _ = post("/api/tasks/submit", leadToken, submit("lead", "forward", `,"if_waiting":true`))
	assert.Equal(t, http.StatusConflict, code, "nobody claimed it yet")

	m := decode(t, f.do(t, "GET", "/api/tasks", leadToken, "").Body.String())
	assert.Equal(t, "lead", m["actor"])
	require.Len(t, m["tasks"], 1)
	assert.Empty(t, decode(t, f.do(t, "GET", "/api/tasks", employeeToken, "").Body.String())["tasks"])
	assert.Len(t, decode(t, f.do(t, "GET", "/api/tasks", adminToken, "").Body.String())["tasks"], 1, "an admin sees every task")

	code, body = post("/api/tasks/submit", leadToken, submit("lead", "forward", `,"comment":"fine by me"`))
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `"status": "completed"`, "3 days need no director")
	code, _ = post("/api/tasks/submit", leadToken, submit("lead", "forward", ""))
	assert.Equal(t, http.StatusConflict, code)

	m = decode(t, f.do(t, "GET", "/api/instances/req-1", leadToken, "").Body.String())
	history := m["history"].([]any)
	last := history[len(history)-1].(map[string]any)
	assert.Equal(t, "fine by me", last["comment"])
	assert.Equal(t, map[string]any{"actor": "lead"}, last["actor"])
}

func TestTaskFormsRedirectBack(t *testing.T) {
	f := newFixture(t, true)
	cookie := "flowteam_token=" + leadToken
	w := f.do(t, "POST", "/tasks/claim", "", "graph=leave-approval&instance=req-1&next=/instances/req-1", "Cookie", cookie)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	assert.Equal(t, "/instances/req-1", w.Header().Get("Location"))
	w = f.do(t, "POST", "/tasks/submit", "", "graph=leave-approval&instance=req-1&node=lead&action=forward&comment=ok&next=/tasks",
		"Cookie", cookie)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	w = f.do(t, "POST", "/tasks/submit", "", "graph=leave-approval&instance=req-1&node=lead&action=forward", "Cookie", cookie)
	assert.Equal(t, http.StatusConflict, w.Code)
	assert.Contains(t, w.Body.String(), `id="message"`)
}

// An instance stored masked keeps its rules through a console submit: the store
// holds no clear value and the same Meta, and no page or JSON answer shows the value.
func TestSubmitKeepsTheRulesTheInstanceRecords(t *testing.T) {
	const name = "Ada Lovelace"
	f := newFixture(t, true)
	ctx := context.Background()
	repo := workflow.NewStoreRepository(f.store).WithRedactor(redact.New(redact.Secrets("employee"))).WithMeta("redact=employee")
	x := workflow.NewExecutor(f.eng, workflow.NewActorController(), repo)
	_, err := x.ClaimTask(ctx, "leave-approval", "req-2", workflow.As("actor", "employee"),
		map[string]any{"days": 3, "employee": name})
	require.NoError(t, err)

	w := f.do(t, "POST", "/api/tasks/submit", employeeToken, `{"graph":"leave-approval","instance":"req-2","node":"file",
		"action":"forward","vars":{"employee":"`+name+`"},"comment":"filed by `+name+`"}`)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	snap, err := f.store.Load(ctx, "req-2")
	require.NoError(t, err)
	raw, err := json.Marshal(snap)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "Lovelace")
	assert.Contains(t, string(raw), "filed by ***")
	assert.Equal(t, []string{"redact=employee"}, snap.Meta)
	assert.Equal(t, []string{"employee"}, snap.Redacted)
	for _, path := range []string{"/instances/req-2", "/api/instances/req-2", "/instances", "/api/instances"} {
		w := f.do(t, "GET", path, leadToken, "")
		require.Equal(t, http.StatusOK, w.Code, path)
		assert.NotContains(t, w.Body.String(), "Lovelace", path)
	}
}

// An instance stored whole is shown masked by the console's Redactor: its variables,
// and the history's variables and comments that quote them; a submit that fails
// says so without the value.
func TestHistoryMasksWhatTheStoreHoldsWhole(t *testing.T) {
	const name = "Grace Hopper"
	f := newFixture(t, true)
	w := f.do(t, "POST", "/api/tasks/submit", leadToken, `{"graph":"leave-approval","instance":"req-1","node":"lead",
		"action":"back","vars":{"employeeName":"`+name+`"},"comment":"ask `+name+`"}`)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	snap, err := f.store.Load(context.Background(), "req-1")
	require.NoError(t, err)
	assert.Equal(t, name, snap.Vars["employeeName"], "no rules recorded: stored whole")
	body := f.do(t, "GET", "/api/instances/req-1", leadToken, "").Body.String()
	assert.NotContains(t, body, "Hopper")
	assert.Contains(t, body, `"comment": "ask ***"`)
	assert.NotContains(t, f.do(t, "GET", "/instances/req-1", leadToken, "").Body.String(), "Hopper")

	w = f.do(t, "POST", "/api/tasks/submit", leadToken, `{"graph":"leave-approval","instance":"req-1","node":"nowhere-`+name+`",
		"action":"forward"}`)
	assert.Equal(t, http.StatusNotFound, w.Code)
	assert.NotContains(t, w.Body.String(), "Hopper", "the error message quotes the node id")
}

// A recorded pattern that does not compile, or that matches the empty text, hides
// the instance rather than show it unmasked or unreadable.
func TestBadRecordedPatternHidesTheInstance(t *testing.T) {
	f := newFixture(t, false)
	empty := &session.Snapshot{Instance: "empty", Graph: "order", Hash: strings.Repeat("0", 64), Status: session.StatusSuspended,
		Reason: "waiting", Meta: []string{"redact-pattern=x*"}}
	require.NoError(t, f.store.Save(context.Background(), empty, 0))
	w := f.do(t, "GET", "/api/instances/empty", "", "")
	assert.Equal(t, http.StatusInternalServerError, w.Code)
	assert.Contains(t, w.Body.String(), "matches the empty text")
	snap := &session.Snapshot{Instance: "bad", Graph: "order", Hash: strings.Repeat("0", 64), Status: session.StatusSuspended, Reason: "waiting for card-1234",
		Meta: []string{"redact-pattern=("}}
	require.NoError(t, f.store.Save(context.Background(), snap, 0))
	w = f.do(t, "GET", "/api/instances/bad", "", "")
	assert.Equal(t, http.StatusInternalServerError, w.Code)
	assert.NotContains(t, w.Body.String(), "card-1234")
	w = f.do(t, "GET", "/api/instances", "", "")
	assert.NotContains(t, w.Body.String(), "card-1234")
	assert.Contains(t, w.Body.String(), `"reason": "***"`)
}

func TestClaimAndSubmitReadTheStoreOnce(t *testing.T) {
	f := newFixture(t, true)
	srv, cs := f.countingServer(t)
	post := func(path, body string) {
		t.Helper()
		w := httptest.NewRecorder()
		req := httptest.NewRequest("POST", path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+leadToken)
		req.Header.Set("Content-Type", "application/json")
		req.Host = "localhost"
		srv.ServeHTTP(w, req)
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	}
	post("/api/tasks/claim", `{"graph":"leave-approval","instance":"req-1"}`)
	assert.EqualValues(t, 1, cs.loads.Swap(0), "claim")
	post("/api/tasks/submit", `{"graph":"leave-approval","instance":"req-1","node":"lead","action":"forward"}`)
	assert.EqualValues(t, 1, cs.loads.Swap(0), "submit")
	post("/api/tasks/claim", `{"graph":"leave-approval","instance":"req-new"}`)
	assert.EqualValues(t, 1, cs.loads.Swap(0), "a claim that creates the instance")
	snap, err := f.store.Load(context.Background(), "req-1")
	require.NoError(t, err)
	assert.Equal(t, session.StatusCompleted, snap.Status)
}
