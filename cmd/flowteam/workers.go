package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/flowteam/flowteam/worker"
)

const workersUsage = `Usage: flowteam workers --store redis://... [--queue NAME] [--output FORMAT]

Lists the live workers of a queue (name, host, pid, runs in progress and ended, last
heartbeat) and the queue's depth (entries not acknowledged), its pending entries
(taken by a worker), its oldest entry, its wake-ups and its dead letters: entries
delivered to more workers than their limit (worker.WithMaxDeliveries, 5), each of
which stopped before the run ended, and queued resumes whose sealed updates a worker
could not open. A dead letter's instance is recorded as failed with the reason
(sessions show); after a fix, resume --queue runs it again. The newest dead letters
are listed.

Output (json): {"queue", "depth", "pending", "oldest", "wakeups", "nextWakeup",
"deadLetters", "recentDeadLetters": [{"id", "entry", "instance", "deliveries",
"consumer", "time", "reason", "updates" or "sealedUpdates"}], "workers": [{"name",
"host", "pid", "running", "done", "concurrency", "started", "heartbeat", "expires"}]}.
`

// recentDeadLetters is the number of dead letters workers lists.
const recentDeadLetters = 5

func cmdWorkers(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("flowteam workers", flag.ContinueOnError)
	var qf queueFlags
	var output string
	qf.register(fs)
	outputFlag(fs, &output)
	pos, help, err := parseCommandLine(fs, args)
	switch {
	case help:
		fmt.Fprint(stdout, workersUsage)
		return exitOK
	case err == nil && len(pos) > 0:
		err = fmt.Errorf("workers takes no arguments, got %q", pos)
	case err == nil && output != "text" && output != "json":
		err = fmt.Errorf("--output must be text or json, not %q", output)
	}
	if err != nil {
		return usageError(stderr, "workers", err)
	}
	fail := failer(stderr, "workers")
	q, closeStore, err := qf.open()
	if err != nil {
		return fail(exitUsage, err)
	}
	defer closeStore()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := q.Stats(ctx)
	if err != nil {
		return fail(exitFail, err)
	}
	live, err := q.Workers(ctx)
	if err != nil {
		return fail(exitFail, err)
	}
	dead, err := q.DeadLetters(ctx, recentDeadLetters)
	if err != nil {
		return fail(exitFail, err)
	}
	if output == "json" {
		err = writeWorkersJSON(stdout, qf.queue, st, live, dead)
	} else {
		err = writeWorkersText(stdout, qf.queue, st, live, dead)
	}
	if err != nil {
		return fail(exitFail, err)
	}
	return exitOK
}

func writeWorkersJSON(w io.Writer, queue string, st worker.Stats, live []worker.Info, dead []worker.DeadLetter) error {
	out := struct {
		Queue       string              `json:"queue"`
		Depth       int64               `json:"depth"`
		Pending     int64               `json:"pending"`
		Oldest      *time.Time          `json:"oldest"`
		Wakeups     int64               `json:"wakeups"`
		NextWakeup  *time.Time          `json:"nextWakeup"`
		DeadLetters int64               `json:"deadLetters"`
		RecentDead  []worker.DeadLetter `json:"recentDeadLetters"`
		Workers     []worker.Info       `json:"workers"`
	}{Queue: queue, Depth: st.Depth, Pending: st.Pending, Wakeups: st.Wakeups, DeadLetters: st.DeadLetters,
		RecentDead: dead, Workers: live}
	if !st.Oldest.IsZero() {
		out.Oldest = &st.Oldest
	}
	if !st.NextWakeup.IsZero() {
		out.NextWakeup = &st.NextWakeup
	}
	if out.Workers == nil {
		out.Workers = []worker.Info{}
	}
	if out.RecentDead == nil {
		out.RecentDead = []worker.DeadLetter{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func writeWorkersText(w io.Writer, queue string, st worker.Stats, live []worker.Info, dead []worker.DeadLetter) error {
	now := time.Now()
	fmt.Fprintf(w, "queue %s: depth %d, pending %d", queue, st.Depth, st.Pending)
	if !st.Oldest.IsZero() {
		fmt.Fprintf(w, ", oldest entry %s (%s ago)", st.Oldest.UTC().Format(time.RFC3339), now.Sub(st.Oldest).Round(time.Second))
	}
	fmt.Fprintf(w, ", wake-ups %d", st.Wakeups)
	if !st.NextWakeup.IsZero() {
		fmt.Fprintf(w, " (next %s)", st.NextWakeup.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(w, ", dead letters %d\n", st.DeadLetters)
	for _, d := range dead {
		fmt.Fprintf(w, "dead letter %s: instance %s, delivered %d times, last to %s, at %s", d.ID, d.Instance,
			d.Deliveries, d.Consumer, d.Time.UTC().Format(time.RFC3339))
		if d.Reason != "" {
			fmt.Fprintf(w, ": entry %s", d.Reason)
		}
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tHOST\tPID\tRUNNING\tDONE\tLAST HEARTBEAT")
	for _, in := range live {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d/%d\t%d\t%s ago\n", in.Name, in.Host, in.PID, in.Running, in.Concurrency,
			in.Done, now.Sub(in.Heartbeat).Round(time.Millisecond))
	}
	return tw.Flush()
}
