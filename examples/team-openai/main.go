// Command team-openai runs the editorial desk of the team-supervisor example (package
// desk: a supervisor directing a researcher, a writer and a reviewer) on an
// OpenAI-compatible chat-completions API instead of scripted models, through package
// team/openai (the official OpenAI Go SDK).
//
// It reads the API from the environment:
//
//	FLOWTEAM_OPENAI_BASE_URL  the API root, e.g. https://api.openai.com/v1 (or a local
//	                          server: http://localhost:11434/v1 for Ollama)
//	FLOWTEAM_OPENAI_API_KEY   the key, sent as a bearer token (may be empty for local servers)
//	FLOWTEAM_OPENAI_MODEL     the model, e.g. gpt-4o-mini
//
//	go run ./examples/team-openai "Write a brief on the European e-bike market."
//
// The supervisor's and the members' answers stream to the terminal as they are
// generated. The run needs a model that calls tools (the researcher's lookup, the
// supervisor's route); with one that does not, the supervisor's text is read for a
// member's name and, failing that, the team finishes (see team.Supervisor).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/team/openai"

	"github.com/flowteam/flowteam/examples/team-supervisor/desk"
)

// Environment variables the example reads.
const (
	EnvBaseURL = "FLOWTEAM_OPENAI_BASE_URL"
	EnvAPIKey  = "FLOWTEAM_OPENAI_API_KEY"
	EnvModel   = "FLOWTEAM_OPENAI_MODEL"
)

// DefaultPrompt is the assignment when none is given on the command line.
const DefaultPrompt = "Write a brief on the European e-bike market for our investors."

// Config is what the example needs to reach the API.
type Config struct {
	BaseURL, APIKey, Model string
}

// ConfigFromEnv reads the configuration; it fails naming what is missing.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{BaseURL: getenv(EnvBaseURL), APIKey: getenv(EnvAPIKey), Model: getenv(EnvModel)}
	var missing []string
	if c.BaseURL == "" {
		missing = append(missing, EnvBaseURL)
	}
	if c.Model == "" {
		missing = append(missing, EnvModel)
	}
	if len(missing) > 0 {
		return c, fmt.Errorf("set %s (and %s if the API needs a key)", strings.Join(missing, " and "), EnvAPIKey)
	}
	return c, nil
}

func main() {
	cfg, err := ConfigFromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "team-openai:", err)
		os.Exit(2)
	}
	prompt := DefaultPrompt
	if len(os.Args) > 1 {
		prompt = strings.Join(os.Args[1:], " ")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, cfg, prompt); err != nil {
		fmt.Fprintln(os.Stderr, "team-openai:", err)
		os.Exit(1)
	}
}

// run builds the desk on the API and streams one run to out.
func run(ctx context.Context, out io.Writer, cfg Config, prompt string) error {
	client, err := openai.New(cfg.Model, openai.WithBaseURL(cfg.BaseURL), openai.WithAPIKey(cfg.APIKey),
		openai.WithTimeout(2*time.Minute))
	if err != nil {
		return err
	}
	tm, err := desk.New(desk.Same(client))
	if err != nil {
		return err
	}
	sess := team.NewSession("desk-openai")
	streaming := ""
	for ev, err := range team.Stream(ctx, tm, prompt, sess) {
		if err != nil {
			return err
		}
		if ev.Kind != team.EventReasonDelta && streaming != "" {
			fmt.Fprintln(out)
			streaming = ""
		}
		switch ev.Kind {
		case team.EventReasonDelta:
			if ev.Delta == "" {
				continue
			}
			if streaming != ev.RunID {
				fmt.Fprintf(out, "  [%s] ", ev.Agent)
				streaming = ev.RunID
			}
			fmt.Fprint(out, ev.Delta)
		case team.EventDecision:
			if ev.Route.Action == team.ActionRoute {
				fmt.Fprintf(out, "→ %s %s\n", ev.Route.To, ev.Route.Task)
			} else {
				fmt.Fprintf(out, "→ finish (%s)\n", ev.Route.Reason)
			}
		case team.EventToolEnd:
			fmt.Fprintf(out, "  · %s %s → %s\n", ev.Call.Name, ev.Call.Args, ev.Observation.Status)
		}
	}
	tr := tm.Trace(sess.Context())
	if tr == nil {
		return errors.New("the team left no trace")
	}
	m := tr.Metrics
	fmt.Fprintf(out, "\nanswer: %s\nroute: %s\ntokens: %d (think %d), model calls %d\n",
		tr.FinalAnswer, strings.Join(tr.Route, " → "), m.TotalTokens, m.ThinkTokens, m.ModelCalls)
	return nil
}
