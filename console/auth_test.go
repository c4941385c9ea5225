package console_test

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/console"
)

func TestUsersRefuseShortTokens(t *testing.T) {
	_, err := console.NewUsers(map[string]console.User{"short": {Actor: "lead"}})
	assert.ErrorContains(t, err, "shorter than 16")
	_, err = console.NewUsers(map[string]console.User{leadToken: {}})
	assert.ErrorContains(t, err, "no actor")

	path := filepath.Join(t.TempDir(), "users.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"tiny-token": {"actor": "lead"}}`), 0o600))
	_, err = console.LoadUsers(path)
	assert.ErrorContains(t, err, "shorter than 16")
}

func TestUsersReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"`+leadToken+`": {"actor": "lead"}}`), 0o600))
	u, err := console.LoadUsers(path)
	require.NoError(t, err)
	got, ok := u.Lookup(leadToken)
	require.True(t, ok)
	assert.Equal(t, console.User{Actor: "lead"}, got)

	require.NoError(t, os.WriteFile(path, []byte(`{"`+adminToken+`": {"actor": "hr", "admin": true}}`), 0o600))
	require.NoError(t, u.Reload())
	_, ok = u.Lookup(leadToken)
	assert.False(t, ok, "a token taken out of the file is refused")
	got, ok = u.Lookup(adminToken)
	assert.True(t, ok)
	assert.True(t, got.Admin)

	require.NoError(t, os.WriteFile(path, []byte(`{"x": {"actor": "a"}}`), 0o600))
	assert.Error(t, u.Reload())
	_, ok = u.Lookup(adminToken)
	assert.True(t, ok, "a bad file keeps the users as they were")
}

func TestReadsNeedATokenWithUsers(t *testing.T) {
	f := newFixture(t, true)
	w := f.do(t, "GET", "/api/instances", "", "")
	assert.Equal(t, http.StatusUnauthorized, w.Code)
	w = f.do(t, "GET", "/api/instances", "not-a-known-token-at-all", "")
	assert.Equal(t, http.StatusUnauthorized, w.Code)
	w = f.do(t, "GET", "/instances/o-fail", "", "")
	assert.Equal(t, http.StatusSeeOther, w.Code)
	assert.Equal(t, "/login?next=%2Finstances%2Fo-fail", w.Header().Get("Location"))
	assert.Equal(t, http.StatusOK, f.do(t, "GET", "/api/instances", leadToken, "").Code)
	assert.Equal(t, http.StatusOK, f.do(t, "GET", "/login", "", "").Code)
	assert.Equal(t, http.StatusOK, f.do(t, "GET", "/static/console.css", "", "").Code)
}

func TestLoginSetsTheTokenCookie(t *testing.T) {
	f := newFixture(t, true)
	form := url.Values{"token": {leadToken}, "next": {"/instances/req-1"}}.Encode()
	w := f.do(t, "POST", "/login", "", form, "Sec-Fetch-Site", "same-origin")
	require.Equal(t, http.StatusSeeOther, w.Code)
	assert.Equal(t, "/instances/req-1", w.Header().Get("Location"))
	cookie := w.Result().Cookies()[0]
	assert.Equal(t, leadToken, cookie.Value)
	assert.True(t, cookie.HttpOnly)

	w = f.do(t, "GET", "/tasks", "", "", "Cookie", "flowteam_token="+leadToken)
	require.Equal(t, http.StatusOK, w.Code)
	assert.Contains(t, w.Body.String(), `<b id="actor">lead</b>`)
	assert.Contains(t, w.Body.String(), `href="/instances/req-1"`)

	w = f.do(t, "POST", "/login", "", url.Values{"token": {"wrong-token-0123456789"}}.Encode())
	assert.Equal(t, http.StatusUnauthorized, w.Code)
	w = f.do(t, "POST", "/login", "", url.Values{"token": {leadToken}, "next": {"//evil.example/"}}.Encode())
	assert.Equal(t, "/tasks", w.Header().Get("Location"), "a redirect stays on the site")
	w = f.do(t, "POST", "/login", "", form, "Sec-Fetch-Site", "cross-site")
	assert.Equal(t, http.StatusForbidden, w.Code)
}

func TestWritesNeedATokenAndTheSameOrigin(t *testing.T) {
	f := newFixture(t, true)
	body := `{"graph":"leave-approval","instance":"req-1"}`
	w := f.do(t, "POST", "/api/tasks/claim", "", body)
	assert.Equal(t, http.StatusUnauthorized, w.Code)
	w = f.do(t, "POST", "/api/tasks/claim", leadToken, body, "Sec-Fetch-Site", "cross-site")
	assert.Equal(t, http.StatusForbidden, w.Code)
	assert.Contains(t, w.Body.String(), "cross-origin")
	w = f.do(t, "POST", "/api/tasks/claim", leadToken, body, "Origin", "https://evil.example")
	assert.Equal(t, http.StatusForbidden, w.Code)
	w = f.do(t, "POST", "/tasks/claim", "", "graph=leave-approval&instance=req-1", "Cookie", "flowteam_token="+leadToken,
		"Sec-Fetch-Site", "cross-site")
	assert.Equal(t, http.StatusForbidden, w.Code, "a form posted from another site is refused, cookie or not")

	w = f.do(t, "POST", "/api/tasks/claim", leadToken, body, "Sec-Fetch-Site", "same-origin")
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	assert.Contains(t, w.Body.String(), `"node": "lead"`)
}

func TestLogout(t *testing.T) {
	f := newFixture(t, true)
	w := f.do(t, "POST", "/logout", "", "", "Cookie", "flowteam_token="+leadToken)
	require.Equal(t, http.StatusSeeOther, w.Code)
	c := w.Result().Cookies()[0]
	assert.True(t, c.MaxAge < 0 && c.Value == "")
	assert.True(t, strings.HasPrefix(w.Header().Get("Location"), "/login"))
}
