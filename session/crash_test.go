package session_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
	"github.com/flowteam/flowteam/session/storetest"
)

// The crash tests re-execute the test binary as a child process (TestMain sees
// childEnv) and kill it with SIGKILL: the only honest way to test what a dead process
// leaves behind.
const childEnv = "FLOWTEAM_SESSION_TEST_CHILD"

func childMain() int {
	var err error
	switch os.Getenv(childEnv) {
	case "save-loop":
		err = childSaveLoop(os.Getenv("STORE_DIR"), os.Getenv("INSTANCE"))
	case "per-node":
		err = childPerNode(os.Getenv("STORE_DIR"), os.Getenv("NODE_LOG"))
	default:
		err = fmt.Errorf("unknown child mode %q", os.Getenv(childEnv))
	}
	fmt.Fprintln(os.Stderr, "child:", err)
	return 1
}

// payload returns the content of version n of the save-loop snapshot: large enough
// that a write takes a while, and checkable.
func payload(n int64) (string, string) {
	p := strings.Repeat(fmt.Sprintf("version %d of the payload; ", n), 8000) // ~230 KB
	sum := sha256.Sum256([]byte(p))
	return p, hex.EncodeToString(sum[:])
}

// childSaveLoop saves new versions of one instance as fast as it can, printing
// "saved N" after each save returned.
func childSaveLoop(dir, id string) error {
	store, err := session.NewFileStore(dir)
	if err != nil {
		return err
	}
	ctx := context.Background()
	v := int64(0)
	if snap, err := store.Load(ctx, id); err == nil {
		v = snap.Version
	} else if !errors.Is(err, session.ErrNotFound) {
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	for ; ; v++ {
		snap := storetest.NewSnapshot(id)
		p, sum := payload(v + 1)
		snap.Vars["n"], snap.Vars["payload"], snap.Vars["sum"] = v+1, p, sum
		if err := store.Save(ctx, snap, v); err != nil {
			return err
		}
		fmt.Fprintf(out, "saved %d\n", v+1)
		out.Flush()
	}
}

// TestKillWhileSaving kills a process that saves to a file store in a loop, at random
// moments, again and again: whatever is left behind loads, and is either the last
// version the process reported saved or the one it was writing.
func TestKillWhileSaving(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	const id = "crash-1"
	store, err := session.NewFileStore(dir)
	require.NoError(t, err)
	var last int64
	for round := range 15 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"=save-loop", "STORE_DIR="+dir, "INSTANCE="+id)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		lines := bufio.NewScanner(stdout)
		// Wait for one save, then kill at a random moment of the following ones.
		require.True(t, lines.Scan(), "round %d: the child saved nothing: %s", round, stderr.String())
		reported := parseSaved(t, lines.Text())
		deadline := time.Now().Add(time.Duration(rand.IntN(40)) * time.Millisecond)
		for time.Now().Before(deadline) && lines.Scan() {
			reported = parseSaved(t, lines.Text())
		}
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		for lines.Scan() { // what it printed before dying
			reported = parseSaved(t, lines.Text())
		}
		err = cmd.Wait()
		require.Error(t, err, "killed")

		snap, err := store.Load(t.Context(), id)
		require.NoError(t, err, "round %d: the snapshot left behind loads", round)
		assert.GreaterOrEqual(t, snap.Version, reported, "round %d: a reported save is durable", round)
		assert.LessOrEqual(t, snap.Version, reported+1, "round %d: at most the save in progress", round)
		assert.GreaterOrEqual(t, snap.Version, last, "versions never go back")
		assert.Equal(t, snap.Version, snap.Vars["n"], "the body belongs to its version")
		p, sum := payload(snap.Version)
		assert.Equal(t, sum, snap.Vars["sum"])
		assert.True(t, p == snap.Vars["payload"], "round %d: payload of version %d intact", round, snap.Version)
		last = snap.Version
		t.Logf("round %d: killed after reported save %d, found version %d", round, reported, snap.Version)
	}
	ids, err := store.List(t.Context(), "")
	require.NoError(t, err)
	assert.Equal(t, []string{id}, ids, "temporary files are not instances")
	tmps, _ := filepath.Glob(filepath.Join(dir, ".tmp-*"))
	t.Logf("%d versions saved over 15 kills; %d temporary files left behind", last, len(tmps))
}

func parseSaved(t *testing.T, line string) int64 {
	n, err := strconv.ParseInt(strings.TrimPrefix(line, "saved "), 10, 64)
	require.NoError(t, err, "child line %q", line)
	return n
}

// parallelGraph: s, then a parallel split into a1 -> a2 and b1 -> b2, joined at j,
// then after and e. Every task appends its node id to the log; b2 calls hang first.
func parallelGraph(t testing.TB, eng *flow.Engine, log func(string), hang func()) {
	task := func(_ context.Context, _ *flow.Context, n *flow.Node) error {
		log(n.ID)
		if n.ID == "b2" {
			hang()
		}
		return nil
	}
	s := flow.NewSpec("par")
	s.Start("s").DoFunc(task).LinkTo("p")
	s.Parallel("p").LinkTo("a1").LinkTo("b1")
	s.Activity("a1").DoFunc(task).LinkTo("a2")
	s.Activity("a2").DoFunc(task).LinkTo("j")
	s.Activity("b1").DoFunc(task).LinkTo("b2")
	s.Activity("b2").DoFunc(task).LinkTo("j")
	s.Parallel("j").DoFunc(task).LinkTo("after")
	s.Activity("after").DoFunc(task).LinkTo("e")
	s.End("e").DoFunc(task)
	g, err := s.Build()
	if err != nil {
		panic(err)
	}
	if err := eng.Register(g); err != nil {
		panic(err)
	}
}

func fileLogger(path string) func(string) {
	return func(id string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			panic(err)
		}
		fmt.Fprintln(f, id)
		f.Close()
	}
}

// childPerNode runs the parallel graph with per-node durability; b2 never returns.
func childPerNode(dir, logPath string) error {
	store, err := session.NewFileStore(dir)
	if err != nil {
		return err
	}
	eng := flow.NewEngine()
	parallelGraph(nil, eng, fileLogger(logPath), func() { select {} })
	r := session.NewRunner(eng, store, session.WithDurability(session.PerNode))
	_, err = r.Run(context.Background(), "par", flow.NewContext("par-1"))
	return fmt.Errorf("run returned: %v", err)
}

// TestPerNodeKilledProcessResumes kills a process in the middle of a parallel run
// with per-node durability, once branch a has finished and branch b is inside b2, and
// resumes it in this process: no completed node runs again (a1 and a2 included), the
// node in flight (b2) runs again.
func TestPerNodeKilledProcessResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	logPath := filepath.Join(t.TempDir(), "nodes.log")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=per-node", "STORE_DIR="+dir, "NODE_LOG="+logPath)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()

	store, err := session.NewFileStore(dir)
	require.NoError(t, err)
	// Branch a is done and b is in b2 once the last checkpoint shows b2 pending and a
	// either pending at the join (a2 completed last: a had not arrived yet) or counted
	// as an arrival of the split (b1 completed last). Polling is the only way to watch
	// another process.
	settled := func() (string, bool) {
		snap, err := store.Load(t.Context(), "par-1")
		if err != nil || snap.Frontier == nil {
			return "no frontier yet", false
		}
		var ns []string
		for _, tok := range snap.Frontier.Tokens {
			ns = append(ns, tok.Node)
		}
		slices.Sort(ns)
		arrived := 0
		for _, f := range snap.Frontier.Frames {
			if f.Kind == "split" && f.Split == "p" {
				arrived = f.Arrived
			}
		}
		state := fmt.Sprintf("pending %v, arrived at the join %d", ns, arrived)
		return state, slices.Equal(ns, []string{"b2", "j"}) && arrived == 0 || slices.Equal(ns, []string{"b2"}) && arrived == 1
	}
	inB2 := func() bool {
		data, _ := os.ReadFile(logPath)
		return slices.Contains(strings.Fields(string(data)), "b2")
	}
	if !assert.Eventually(t, func() bool { _, ok := settled(); return ok && inB2() }, time.Minute, 5*time.Millisecond) {
		data, _ := os.ReadFile(logPath)
		state, _ := settled()
		t.Fatalf("no checkpoint with a done and b in b2: %s, nodes run %q, child stderr %q", state, data, stderr.String())
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	cmd.Wait()
	killed = true

	snap, err := store.Load(t.Context(), "par-1")
	require.NoError(t, err)
	assert.Equal(t, session.StatusRunning, snap.Status, "the dead process never saved an outcome")
	eng := flow.NewEngine()
	parallelGraph(t, eng, fileLogger(logPath), func() {})
	r := session.NewRunner(eng, store, session.WithDurability(session.PerNode))
	_, err = r.Resume(t.Context(), "par-1", nil)
	require.ErrorIs(t, err, session.ErrRunning, "without Recover a running instance is not taken over")
	_, err = r.Resume(t.Context(), "par-1", nil, session.Recover())
	var held *session.LeaseHeldError
	require.ErrorAs(t, err, &held, "Recover waits until the dead process's lease expires")
	assert.Equal(t, cmd.Process.Pid, held.Lease.PID)
	expireLease(t, store, "par-1")
	res, err := r.Resume(t.Context(), "par-1", nil, session.Recover())
	require.NoError(t, err)
	assert.Equal(t, flow.StatusCompleted, res.Status)

	data, err := os.ReadFile(logPath)
	require.NoError(t, err)
	runs := map[string]int{}
	for _, id := range strings.Fields(string(data)) {
		runs[id]++
	}
	assert.Equal(t, map[string]int{"s": 1, "a1": 1, "a2": 1, "b1": 1, "b2": 2, "j": 1, "after": 1, "e": 1}, runs,
		"completed nodes ran once; b2, in flight when the process died, twice")
}
