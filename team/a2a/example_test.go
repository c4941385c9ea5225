package a2a_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"

	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/team/a2a"
	"github.com/flowteam/flowteam/testkit"
)

// A remote agent is called like a local one, and its failure is the same structured
// error.
func Example() {
	ctx := context.Background()
	analyst := a2a.NewServer(testkit.Analyst())
	defer analyst.Close()
	hs := httptest.NewServer(analyst.Handler())
	defer hs.Close()

	remote, err := a2a.NewClient(ctx, hs.URL, a2a.WithHTTPClient(hs.Client()))
	if err != nil {
		panic(err)
	}
	defer remote.Close()
	ans, err := remote.Call(ctx, "How risky is it?", team.NewSession("s-1"))
	if err != nil {
		panic(err)
	}
	fmt.Println(remote.Name(), "answered", ans.Content)

	failing := a2a.NewServer(testkit.FailingWith("patents", team.TypeAuthDenied, "no licence for patent_db"))
	defer failing.Close()
	hs2 := httptest.NewServer(failing.Handler())
	defer hs2.Close()
	patents, err := a2a.NewClient(ctx, hs2.URL, a2a.WithHTTPClient(hs2.Client()))
	if err != nil {
		panic(err)
	}
	defer patents.Close()
	_, err = patents.Call(ctx, "solid-state batteries", nil)
	var e *team.Error
	if errors.As(err, &e) {
		fmt.Println(e.Type, e.Retryable(), e.Message)
	}
	// Output:
	// analyst answered HIGH
	// auth_denied false no licence for patent_db
}
