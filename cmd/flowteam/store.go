package main

import (
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/session"
)

// exitConflict is the exit code of a command that lost a race for an instance:
// another process resumed (or started) it first, it is running, or it completed.
const exitConflict = 3

// keyEnv names the environment variable holding the AES key (hex: 32, 48 or 64 digits)
// that encrypts stored snapshots; the same key must be set for run, resume and
// sessions show.
const keyEnv = "FLOWTEAM_SESSION_KEY"

const storeUsage = `Stores (--store DSN):
  memory:                  in this process only (nothing survives the command)
  file:DIR                 one JSON file per instance in DIR (run creates it;
                           a leading ~ is the home directory)
  redis://HOST:PORT/DB     Redis; also rediss:// and redis://USER:PASS@HOST:PORT/DB;
                           query options prefix=P (key prefix, default
                           "flowteam:session:") and ttl=DURATION (expiry of every save)
`

// storeFlags are the session flags shared by run and resume.
type storeFlags struct {
	dsn        string
	durability string
	ttl        time.Duration
	redact     setFlag // repeatable, each comma-separated
	patterns   setFlag // --redact-pattern, repeatable
	// leaseRenew and leaseTTL time the lease the process holds on the instance while
	// it runs it (--lease-renew, --lease-ttl).
	leaseRenew, leaseTTL time.Duration
	// solonTypes is --solon-types, which run and resume register: the files are read
	// with flow.SolonNodeTypes, and the instance records it for its resumes.
	solonTypes bool
}

const storeFlagsUsage = `  --durability M       on-exit (save when the run ends; run's default) or per-node
                       (also save after every completed node); resume keeps the
                       instance's unless --durability is given, which is then kept
  --ttl DURATION       the store forgets the instance unless it is saved again
                       within DURATION (e.g. 720h; 0: the store's own, a redis
                       DSN's ttl= or none); resume keeps the instance's unless
                       --ttl or a DSN's ttl= is given
  --redact KEYS        comma-separated variables declared secret (repeatable): their
                       values are masked as *** in the store, the output and the
                       audit, also where other text quotes them (a suspend reason);
                       the output and the audit always mask the variables under
                       sensitive keys (password, token, api_key, ...), the store
                       too once --redact or --redact-pattern is given; masked
                       variables are not restored: supply them again with --set;
                       resume masks the instance's again, --redact or not, and
                       adds these
  --redact-pattern RE  also mask every match of the regular expression RE
                       (repeatable; recorded with the instance as --redact is)
  --lease-renew D      while it runs the instance, the process holds a lease on it
                       (its host, pid and a random token, in the store) and renews
                       it every D (default 5s)
  --lease-ttl D        each renewal lasts D (default 30s, more than --lease-renew):
                       "resume --recover" is refused until D after the process
                       last renewed it, so a live run is never run twice
`

func (s *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.dsn, "store", "", "")
	fs.StringVar(&s.durability, "durability", "on-exit", "")
	fs.DurationVar(&s.ttl, "ttl", 0, "")
	fs.Var(&s.redact, "redact", "")
	fs.Var(&s.patterns, "redact-pattern", "")
	fs.DurationVar(&s.leaseRenew, "lease-renew", session.DefaultLeaseRenew, "")
	fs.DurationVar(&s.leaseTTL, "lease-ttl", session.DefaultLeaseTTL, "")
}

// checkLease checks --lease-renew and --lease-ttl.
func (s *storeFlags) checkLease() error {
	switch {
	case s.leaseRenew <= 0:
		return fmt.Errorf("--lease-renew must be positive, got %v", s.leaseRenew)
	case s.leaseTTL <= s.leaseRenew:
		return fmt.Errorf("--lease-ttl (%v) must be longer than --lease-renew (%v)", s.leaseTTL, s.leaseRenew)
	}
	return nil
}

// openStore opens the store a DSN names. close releases it. Its errors show the DSN
// without its password (shownDSN).
func openStore(dsn string) (store session.Store, closeFn func(), err error) {
	nop := func() {}
	shown := shownDSN(dsn)
	scheme, rest, ok := strings.Cut(dsn, ":")
	if !ok {
		return nil, nil, fmt.Errorf("--store %q: want memory:, file:DIR or redis://HOST:PORT/DB", shown)
	}
	switch scheme {
	case "memory":
		if rest != "" {
			return nil, nil, fmt.Errorf("--store %q: memory: takes nothing after the colon", shown)
		}
		return session.NewMemoryStore(), nop, nil
	case "file":
		if rest == "" {
			return nil, nil, fmt.Errorf("--store %q: want file:DIR", shown)
		}
		dir, err := homeDir(rest)
		if err != nil {
			return nil, nil, fmt.Errorf("--store %q: %w", shown, err)
		}
		fs, err := session.NewFileStore(dir)
		if err != nil {
			return nil, nil, fmt.Errorf("--store %q: %w", shown, err)
		}
		return fs, nop, nil
	case "redis", "rediss":
		u, err := url.Parse(dsn)
		if err != nil {
			// The url.Error would repeat the whole DSN: say only what is wrong.
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return nil, nil, fmt.Errorf("--store %q: %w", shown, err)
		}
		var opts []session.RedisOption
		q := u.Query()
		if p := q.Get("prefix"); q.Has("prefix") {
			opts = append(opts, session.WithPrefix(p))
		}
		if t := q.Get("ttl"); t != "" {
			d, err := time.ParseDuration(t)
			if err != nil || d < 0 {
				return nil, nil, fmt.Errorf("--store %q: ttl=%q: want a duration such as 24h", shown, t)
			}
			opts = append(opts, session.WithTTL(d))
		}
		q.Del("prefix")
		q.Del("ttl")
		u.RawQuery = q.Encode()
		ro, err := redis.ParseURL(u.String())
		if err != nil {
			return nil, nil, fmt.Errorf("--store %q: %w", shown, err)
		}
		// go-redis logs every failed dial to the process's stderr itself; the error
		// also reaches the store's caller, which reports it once, with its context.
		redis.SetLogger(quietRedisLogger{})
		rdb := redis.NewClient(ro)
		return session.NewRedisStore(rdb, opts...), func() { rdb.Close() }, nil
	}
	return nil, nil, fmt.Errorf("--store %q: unknown store %q: want memory:, file:DIR or redis://HOST:PORT/DB", shown, scheme+":")
}

// openExistingStore opens the store of a command that reads or changes stored instances
// (resume, sessions): a file store's directory must exist, so that a mistyped path is
// reported instead of being created and found empty.
func openExistingStore(dsn string) (store session.Store, closeFn func(), err error) {
	if dir, ok := strings.CutPrefix(dsn, "file:"); ok && dir != "" {
		dir, err := homeDir(dir)
		if err != nil {
			return nil, nil, fmt.Errorf("--store %q: %w", dsn, err)
		}
		fi, err := os.Stat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, nil, fmt.Errorf("--store %q: directory %s does not exist", dsn, dir)
		case err != nil:
			return nil, nil, fmt.Errorf("--store %q: %w", dsn, err)
		case !fi.IsDir():
			return nil, nil, fmt.Errorf("--store %q: %s is not a directory", dsn, dir)
		}
	}
	return openStore(dsn)
}

// dsnSetsTTL reports whether dsn gives the store a time to live of its own (redis's
// ttl= option), which every save then has unless --ttl says otherwise.
func dsnSetsTTL(dsn string) bool {
	u, err := url.Parse(dsn)
	return err == nil && (u.Scheme == "redis" || u.Scheme == "rediss") && u.Query().Get("ttl") != ""
}

// shownDSN returns dsn as messages show it: a URL with its password replaced by
// "xxxxx" (url.URL.Redacted), as stderr ends up in logs. A DSN with user info that does
// not parse as a URL, where the password's end cannot be told, is cut to its scheme.
func shownDSN(dsn string) string {
	u, err := url.Parse(dsn)
	switch {
	case err == nil && u.User != nil:
		if _, has := u.User.Password(); has {
			return u.Redacted()
		}
	case err != nil && strings.Contains(dsn, "@"):
		if scheme, _, ok := strings.Cut(dsn, "://"); ok {
			return scheme + "://..."
		}
	}
	return dsn
}

// homeDir returns dir with a leading "~" (alone or before a slash) replaced by the home
// directory. No shell expands the "~" of "file:~/sessions": taken as is, it would make
// a directory named "~" in the current one.
func homeDir(dir string) (string, error) {
	rest, ok := strings.CutPrefix(dir, "~")
	if !ok || (rest != "" && rest[0] != '/' && rest[0] != filepath.Separator) {
		return dir, nil // "~user" stays as it is: only the own home directory is meant
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	return home + rest, nil
}

// quietRedisLogger drops go-redis's own log lines.
type quietRedisLogger struct{}

func (quietRedisLogger) Printf(context.Context, string, ...any) {}

// cipherFromEnv returns the Cipher for the key in $FLOWTEAM_SESSION_KEY, or nil.
func cipherFromEnv() (*session.Cipher, error) {
	k := os.Getenv(keyEnv)
	if k == "" {
		return nil, nil
	}
	key, err := hex.DecodeString(strings.TrimSpace(k))
	if err != nil {
		return nil, fmt.Errorf("$%s: want hex digits: %w", keyEnv, err)
	}
	c, err := session.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("$%s: %w", keyEnv, err)
	}
	return c, nil
}

// redactKeys returns the variables named by the comma-separated lists of the --redact
// flags. A list naming none (" , ") is an error: taken for no redaction, it would store
// in clear the values the user meant to mask.
func redactKeys(lists []string) ([]string, error) {
	var keys []string
	for _, list := range lists {
		n := len(keys)
		for _, k := range strings.Split(list, ",") {
			if k = strings.TrimSpace(k); k != "" {
				keys = append(keys, k)
			}
		}
		if len(keys) == n {
			return nil, fmt.Errorf("--redact %q names no variable", list)
		}
	}
	return keys, nil
}

// settings are how an instance is run that the command records with it
// (Snapshot.Meta, as "name=value" entries), so that a resume runs it the same way
// unless its own flags say otherwise.
type settings struct {
	durability session.Durability
	steps      int  // the step limit of each evaluation; 0: the engine's
	solonTypes bool // the definition files are read with --solon-types
	// redact names the variables to mask, sorted, each once. They are recorded
	// whether or not such a variable exists (Snapshot.Redacted names only those
	// masked): one that a task sets after a resume must be masked too.
	redact []string
	// patterns are the --redact-pattern expressions, sorted, each once.
	patterns []string
	// other are the meta entries that are not the command's (another program's),
	// kept as they are: the Runner saves the entries it is given in place of the
	// instance's.
	other []string
}

// Names of the settings' entries in Snapshot.Meta. Each redacted name has an entry
// of its own: a name may hold a comma.
const (
	metaDurability = "durability"
	metaSteps      = "steps"
	metaSolonTypes = "solon-types"
	metaRedact     = "redact"
)

// meta returns the entries that record st.
func (st settings) meta() []string {
	m := []string{metaDurability + "=" + st.durability.String()}
	if st.steps > 0 {
		m = append(m, metaSteps+"="+strconv.Itoa(st.steps))
	}
	if st.solonTypes {
		m = append(m, metaSolonTypes+"=true")
	}
	m = append(m, st.redactMeta()...)
	return append(m, st.other...)
}

// addRedact adds names to st.redact.
func (st *settings) addRedact(names ...string) {
	st.redact = append(st.redact, names...)
	slices.Sort(st.redact)
	st.redact = slices.Compact(st.redact)
}

// recordedSettings returns the settings recorded with snap, opened. An instance saved
// without them (by another program) gets on-exit durability, the engine's step limit,
// and masking the variables its last save masked (Snapshot.Redacted). Entries of other
// names are kept in other.
func recordedSettings(snap *session.Snapshot) (settings, error) {
	var st settings
	st.addRedact(snap.Redacted...)
	bad := func(err error) (settings, error) {
		return st, fmt.Errorf("instance %q records a bad setting: %w", snap.Instance, err)
	}
	for _, e := range snap.Meta {
		name, value, _ := strings.Cut(e, "=")
		switch name {
		case metaDurability:
			d, err := session.ParseDurability(value)
			if err != nil {
				return bad(err)
			}
			st.durability = d
		case metaSteps:
			n, err := strconv.Atoi(value)
			if err != nil || n < 1 {
				return bad(fmt.Errorf("step limit %q: want a number of at least 1", value))
			}
			st.steps = n
		case metaSolonTypes:
			b, err := strconv.ParseBool(value)
			if err != nil {
				return bad(fmt.Errorf("solon-types %q: want true or false", value))
			}
			st.solonTypes = b
		case metaRedact:
			st.addRedact(value)
		case metaRedactPattern:
			st.addPatterns(value)
		default:
			st.other = append(st.other, e)
		}
	}
	return st, nil
}

// settings returns the settings these flags give, with the step limit steps.
func (s *storeFlags) settings(steps int) (settings, error) {
	d, err := session.ParseDurability(s.durability)
	if err != nil {
		return settings{}, fmt.Errorf("--durability: %w", err)
	}
	st, err := redactSettings(s.redact, s.patterns)
	if err != nil {
		return settings{}, err
	}
	st.durability, st.steps, st.solonTypes = d, steps, s.solonTypes
	return st, nil
}

// runner builds the session Runner that runs an instance with st and records st with
// it. sources are the definition files, recorded in the snapshot so that resume can
// load them again. extra options are applied last.
func (s *storeFlags) runner(eng *flow.Engine, store session.Store, sources []string, st settings,
	extra ...session.Option) (*session.Runner, error) {
	if s.ttl < 0 {
		return nil, fmt.Errorf("--ttl must not be negative, got %v", s.ttl)
	}
	if err := s.checkLease(); err != nil {
		return nil, err
	}
	opts := []session.Option{session.WithDurability(st.durability), session.WithSources(sources...),
		session.WithMeta(st.meta()...), session.WithLease(s.leaseRenew, s.leaseTTL)}
	if s.ttl > 0 {
		opts = append(opts, session.WithExpiry(s.ttl))
	}
	if st.redacts() {
		red, err := st.redactor()
		if err != nil {
			return nil, err
		}
		opts = append(opts, session.WithRedactor(red))
	}
	c, err := cipherFromEnv()
	if err != nil {
		return nil, err
	}
	if c != nil {
		opts = append(opts, session.WithCipher(c))
	}
	return session.NewRunner(eng, store, append(opts, extra...)...), nil
}

// eval runs g as "flowteam run" does, with st's step limit: with eng.Eval, or, with
// --store, through a session Runner that claims the instance, saves its outcome and
// records st with it. When nothing ran,
// res is nil and code is the exit code; otherwise code is the exit code the command
// should end with unless the run failed (exitFail when the outcome could not be
// saved).
func (s *storeFlags) eval(ctx context.Context, eng *flow.Engine, g *flow.Graph, files []string, fc *flow.Context,
	st settings, stderr io.Writer) (res *flow.Result, code int) {
	var opts []flow.EvalOption
	if st.steps > 0 {
		opts = append(opts, flow.WithSteps(st.steps))
	}
	if s.dsn == "" {
		res, err := eng.Eval(ctx, g.ID, fc, opts...)
		if res == nil {
			fmt.Fprintf(stderr, "flowteam run: %v\n", err)
			return nil, exitUsage
		}
		return res, exitOK
	}
	store, closeStore, err := openStore(s.dsn)
	if err != nil {
		fmt.Fprintf(stderr, "flowteam run: %v\n", err)
		return nil, exitUsage
	}
	defer closeStore()
	sources, err := absPaths(files)
	if err != nil {
		fmt.Fprintf(stderr, "flowteam run: %v\n", err)
		return nil, exitUsage
	}
	r, err := s.runner(eng, store, sources, st)
	if err != nil {
		fmt.Fprintf(stderr, "flowteam run: %v\n", err)
		return nil, exitUsage
	}
	out, err := r.Run(ctx, g.ID, fc, opts...)
	if out == nil {
		fmt.Fprintf(stderr, "flowteam run: %v\n", err)
		return nil, sessionExit(err)
	}
	if err != nil && err != out.Err { // not only the run's own error
		fmt.Fprintf(stderr, "flowteam run: %v\n", err) // the outcome could not be saved
		return out.Result, exitFail
	}
	return out.Result, exitOK
}

// sessionExit maps a session error to an exit code.
func sessionExit(err error) int {
	switch {
	case errors.Is(err, session.ErrConflict):
		return exitConflict
	case errors.Is(err, session.ErrNotFound), errors.Is(err, session.ErrInvalidID),
		errors.Is(err, session.ErrDefinitionChanged), errors.Is(err, session.ErrNoFrontier),
		errors.Is(err, session.ErrSealed), errors.Is(err, session.ErrDecrypt),
		errors.Is(err, session.ErrCorrupt), errors.Is(err, session.ErrFormat),
		errors.Is(err, flow.ErrGraphNotFound), errors.Is(err, flow.ErrBadFrontier):
		return exitUsage
	}
	return exitFail
}

func absPaths(files []string) ([]string, error) {
	out := make([]string, len(files))
	for i, f := range files {
		a, err := filepath.Abs(f)
		if err != nil {
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}
