package console

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
)

// MinTokenLen is the shortest token a users file may hold.
const MinTokenLen = 16

// cookieName is the cookie the login form sets, holding the token.
const cookieName = "flowteam_token"

// User is who a token signs in: an actor value (compared with a node's actor meta)
// and whether they administer every node and action.
type User struct {
	Actor string `json:"actor"`
	Admin bool   `json:"admin"`
}

// Users maps tokens to users, read from a JSON file:
//
//	{"TOKEN": {"actor": "lead", "admin": false}, ...}
//
// It is safe for concurrent use; Reload reads the file again.
type Users struct {
	path string
	mu   sync.RWMutex
	by   map[[32]byte]User // by the token's SHA-256: lookups do not compare secrets byte by byte
}

// LoadUsers reads a users file. A token shorter than MinTokenLen, or a user
// without an actor, is an error.
func LoadUsers(path string) (*Users, error) {
	u := &Users{path: path}
	return u, u.Reload()
}

// NewUsers returns Users holding the given tokens, checked as LoadUsers checks a
// file; Reload keeps them.
func NewUsers(tokens map[string]User) (*Users, error) {
	by, err := hashUsers(tokens)
	if err != nil {
		return nil, err
	}
	return &Users{by: by}, nil
}

// Reload reads the file again; on an error the users stay as they were.
func (u *Users) Reload() error {
	if u.path == "" {
		return nil
	}
	data, err := os.ReadFile(u.path)
	if err != nil {
		return fmt.Errorf("users file: %w", err)
	}
	var tokens map[string]User
	if err := json.Unmarshal(data, &tokens); err != nil {
		return fmt.Errorf("users file %s: %w", u.path, err)
	}
	by, err := hashUsers(tokens)
	if err != nil {
		return fmt.Errorf("users file %s: %w", u.path, err)
	}
	u.mu.Lock()
	u.by = by
	u.mu.Unlock()
	return nil
}

func hashUsers(tokens map[string]User) (map[[32]byte]User, error) {
	by := make(map[[32]byte]User, len(tokens))
	for tok, user := range tokens {
		if len(tok) < MinTokenLen {
			return nil, fmt.Errorf("token of actor %q is shorter than %d characters", user.Actor, MinTokenLen)
		}
		if strings.TrimSpace(user.Actor) == "" {
			return nil, errors.New("a token has no actor")
		}
		by[sha256.Sum256([]byte(tok))] = user
	}
	return by, nil
}

// Lookup returns the user of a token.
func (u *Users) Lookup(token string) (User, bool) {
	if u == nil || token == "" {
		return User{}, false
	}
	u.mu.RLock()
	defer u.mu.RUnlock()
	user, ok := u.by[sha256.Sum256([]byte(token))]
	return user, ok
}

// admins returns the actor values of the administrators.
func (u *Users) admins() []string {
	u.mu.RLock()
	defer u.mu.RUnlock()
	var out []string
	for _, user := range u.by {
		if user.Admin {
			out = append(out, user.Actor)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// token returns the request's bearer token, or the login cookie's.
func token(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		if t, ok := strings.CutPrefix(h, "Bearer "); ok {
			return strings.TrimSpace(t)
		}
		return ""
	}
	if c, err := r.Cookie(cookieName); err == nil {
		return c.Value
	}
	return ""
}

// user returns the signed-in user of the request.
func (s *Server) user(r *http.Request) (User, bool) {
	return s.cfg.Users.Lookup(token(r))
}

// reader guards a page or API read: with users, a signed-in user is needed (a page
// sends to the login form, the API answers 401); without, anyone may read.
func (s *Server) reader(h http.HandlerFunc, page bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Users != nil {
			if _, ok := s.user(r); !ok {
				if page {
					http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
					return
				}
				s.fail(w, r, http.StatusUnauthorized, "sign in: a bearer token is needed")
				return
			}
		}
		h(w, r)
	})
}

// writer guards a state-changing request: a same-origin request (CrossOriginProtection)
// of a signed-in user; without users the console is read-only.
func (s *Server) writer(h http.HandlerFunc) http.Handler {
	return s.cop.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Users == nil {
			s.fail(w, r, http.StatusForbidden, "the console is read-only (start it with --users)")
			return
		}
		if _, ok := s.user(r); !ok {
			s.fail(w, r, http.StatusUnauthorized, "sign in: a valid bearer token is needed")
			return
		}
		h(w, r)
	}))
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, "login", map[string]any{"Next": safeNext(r.URL.Query().Get("next")), "Error": ""})
}

// login checks the token of the form and sets it as a cookie.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if err := s.cop.Check(r); err != nil {
		s.fail(w, r, http.StatusForbidden, "cross-origin request refused")
		return
	}
	tok, next := r.PostFormValue("token"), safeNext(r.PostFormValue("next"))
	if _, ok := s.cfg.Users.Lookup(tok); !ok {
		w.WriteHeader(http.StatusUnauthorized)
		s.render(w, r, "login", map[string]any{"Next": next, "Error": "unknown token"})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: tok, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// safeNext keeps a redirect target on this site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/tasks"
	}
	return next
}
