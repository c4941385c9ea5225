package console_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
