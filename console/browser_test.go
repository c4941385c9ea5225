package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/workflow"
)

// browserPath finds Chromium or Chrome; the browser tests skip without one.
func browserPath(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium or chrome on PATH")
	return ""
}

// newBrowser starts a headless browser with a fresh profile.
func newBrowser(t *testing.T) context.Context {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(browserPath(t)), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
	}
	// The whole browser lives at most two minutes: a browser that hangs fails the
	// test instead of holding it until the test binary's timeout.
	life, cancelLife := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancelLife)
	actx, cancelAlloc := chromedp.NewExecAllocator(life, opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	require.NoError(t, chromedp.Do(bctx)) // starts the browser, with no deadline (see chromedp.Run)
	ctx, cancel := context.WithTimeout(bctx, 40*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitText waits until the element's text contains want, on the page loading now
// or the next one.
func waitText(sel, want string) chromedp.Action[chromedp.Void] {
	poll := chromedp.Poll[bool](fmt.Sprintf(`(document.querySelector(%q)||{}).textContent?.includes(%q)`, sel, want),
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second))
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		var err error
		for range 50 {
			if _, err = poll(ctx, t); err == nil || !retriable(err) {
				return chromedp.Void{}, err
			}
			time.Sleep(100 * time.Millisecond)
		}
		return chromedp.Void{}, err
	}
}

// afterNavigation waits for the selector to be visible on the page a click or a
// submit is loading: a query that runs while the old page goes is retried.
func afterNavigation(sel string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		var err error
		for range 50 {
			if _, err = chromedp.WaitVisible(chromedp.CSS(sel))(ctx, t); err == nil || !retriable(err) {
				return chromedp.Void{}, err
			}
			time.Sleep(100 * time.Millisecond)
		}
		return chromedp.Void{}, err
	}
}

func TestBrowserRunPictureAndInbox(t *testing.T) {
	ctx := newBrowser(t)
	f := newFixture(t, true)
	ts := httptest.NewServer(f.srv)
	defer ts.Close()
	x := workflow.NewExecutor(f.eng, workflow.NewActorController(), workflow.NewStoreRepository(f.store))
	employee, director := workflow.As("actor", "employee"), workflow.As("actor", "director")
	_, err := x.ClaimTask(ctx, "leave-approval", "req-2", employee, map[string]any{"days": 8})
	require.NoError(t, err)
	_, err = x.SubmitTask(ctx, "leave-approval", "req-2", workflow.Submit{Node: "file", Action: workflow.Forward, Actor: employee})
	require.NoError(t, err)

	// The instance page asks for a sign-in, then shows the failed node red.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(ts.URL+"/instances/o-fail"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), leadToken),
		clickToLoad("#login button"),
		afterNavigation("#picture svg"),
	))
	fill, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("#node_bill path"), "fill"))
	require.NoError(t, err)
	assert.Equal(t, "#ef9a9a", fill.Value)

	// The lead claims req-2 and approves it with a comment; the director must follow.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(ts.URL+"/instances/req-2"),
		clickToLoad("form.claim button"),
		waitText("#tasks", "waiting"),
		chromedp.SetValue(chromedp.CSS("form.submit select[name=action]"), "forward"),
		chromedp.SendKeys(chromedp.CSS("form.submit input[name=comment]"), "enjoy the sun"),
		clickToLoad("form.submit button"),
		waitText("#history", "enjoy the sun"),
		waitText("#tasks", "director"),
	))
	status, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("status")))
	require.NoError(t, err)
	assert.Equal(t, "running", status)

	// The director approves elsewhere: the open page follows by server-sent events.
	_, err = x.ClaimTask(ctx, "leave-approval", "req-2", director, nil)
	require.NoError(t, err)
	_, err = x.SubmitTask(ctx, "leave-approval", "req-2", workflow.Submit{Node: "director", Action: workflow.Forward, Actor: director})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, waitText("#status", "completed")))
	vars, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("vars")))
	require.NoError(t, err)
	assert.Contains(t, vars, "booked")

	// A call without a token is refused, and so is a form posted from another origin.
	noToken, err := chromedp.Run(ctx, chromedp.Evaluate[int](`fetch("/api/tasks/claim", {method: "POST", credentials: "omit",
		headers: {"Content-Type": "application/json"}, body: '{"graph":"leave-approval","instance":"req-1"}'}).then(r => r.status)`,
		chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, noToken)

	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><form id="f" method="post" action="%s/tasks/submit"><input name="graph" value="leave-approval">
			<input name="instance" value="req-1"><input name="node" value="lead"><input name="action" value="forward"><button>Approve</button></form>`, ts.URL)
	}))
	defer evil.Close()
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)),
		clickToLoad("#f button"),
		afterNavigation("#message"),
	))
	message, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("message")))
	require.NoError(t, err)
	assert.Contains(t, message, "cross-origin")
	st, err := x.State(context.Background(), "leave-approval", "req-1", "lead")
	require.NoError(t, err)
	assert.Equal(t, workflow.Unknown, st, "the forged submit changed nothing")
}

// clickToLoad clicks the element from the page's script, which returns at once,
// where a DOM click could see its page go while it runs.
func clickToLoad(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).click()`, sel))
}

// retriable reports whether a query failed only because the page it ran on went.
func retriable(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "navigated") || strings.Contains(msg, "Cannot find context")
}
