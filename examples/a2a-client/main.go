// Command a2a-client calls the agents of the a2a-server example as flowteam agents:
// the desk, streaming, printing the remote team's events as they come, and the
// patent agent, whose failed task comes back as the structured *team.Error it was
// on the server (type, code, retryable).
//
//	go run ./examples/a2a-server &
//	go run ./examples/a2a-client -url http://127.0.0.1:8090
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/team/a2a"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8090", "base URL of the a2a-server example")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, http.DefaultClient, *url); err != nil {
		fmt.Fprintln(os.Stderr, "a2a-client:", err)
		os.Exit(1)
	}
}

// run calls the desk and the patent agent served under base.
func run(ctx context.Context, out io.Writer, hc *http.Client, base string) error {
	base = strings.TrimSuffix(base, "/")
	deskAgent, err := a2a.NewClient(ctx, base+"/desk/", a2a.WithHTTPClient(hc))
	if err != nil {
		return err
	}
	defer deskAgent.Close()
	fmt.Fprintf(out, "%s: %s\n", deskAgent.Name(), deskAgent.Role())
	for ev, err := range team.Stream(ctx, deskAgent, "Write a brief on the European e-bike market.", team.NewSession("s-1")) {
		if err != nil {
			return err
		}
		if ev.Kind == team.EventRunEnd && ev.Agent != deskAgent.Name() {
			fmt.Fprintf(out, "  remote %s %s\n", ev.Agent, ev.Status)
		}
		if ev.Kind == team.EventRunEnd && ev.Answer != nil {
			fmt.Fprintf(out, "answer: %s\n", ev.Answer.Content)
		}
	}

	patents, err := a2a.NewClient(ctx, base+"/patents/", a2a.WithHTTPClient(hc))
	if err != nil {
		return err
	}
	defer patents.Close()
	_, err = patents.Call(ctx, "solid-state battery patents", nil)
	var e *team.Error
	if !errors.As(err, &e) {
		return fmt.Errorf("patents: want a structured error, got %v", err)
	}
	fmt.Fprintf(out, "patents failed: type %s, code %s, retryable %t: %s\n", e.Type, e.Code, e.Retryable(), e.Message)
	return nil
}
