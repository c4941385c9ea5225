// Package interceptor holds ready-made flow.Interceptors: the audit log (Audit, with
// JSON Lines, log/slog and in-memory sinks), run metrics (Metrics, optionally recorded
// as OpenTelemetry metrics), OpenTelemetry spans (Tracing), and the Redactor they
// share.
//
//	sink, err := interceptor.OpenJSONL("audit.jsonl")
//	...
//	defer sink.Close()
//	engine := flow.NewEngine(flow.WithInterceptor(interceptor.NewAudit(interceptor.WithSink(sink)), 0))
//
// # What the audit records
//
// A FlowTrace keeps only the last node per call path, for recovery; it cannot say which
// path a run took, how often a node ran or what ran in parallel. The audit can: for
// every run it writes (see trace.Record)
//
//   - a run STARTED record (empty node id) when the root graph's evaluation begins,
//     Resumed set for Resume;
//   - for every node execution, a STARTED record and exactly one terminal record:
//     COMPLETED, FAILED (with a structured error {type, code, message}), INTERRUPTED
//     (Context.Interrupt, or cancelled because the run or its sub-graph call failed
//     elsewhere) or SUSPENDED (with the reason), with its duration, step, branch id,
//     join arrivals, retry attempt and recovery flags;
//   - a terminal run record with the run's outcome and duration.
//
// The pairing is complete by construction: the engine calls OnNodeEnd once for every
// OnNodeStart whatever happens (stop, interrupt, suspend, a panicking task,
// cancellation, fail-fast, step limit), so unlike Solon a task need not record
// SUSPENDED by hand. The audit also keeps the executions in progress per run (keyed by
// branch view and node): should a panic escape the engine or another interceptor and
// leave one open, the run's end writes a FAILED record with code "node_end_missing"
// for it and logs a warning. Records are numbered per run (Seq) and carry the
// instance, run and branch ids, so parallel branches can be told apart without
// relying on arrival order; trace.Records.Verify checks the invariants. A randomized
// test (invariant_test.go) builds thousands of graphs and injects every one of those
// events to check them.
//
// A node event that reaches the audit after its run's records were written (an
// interceptor gave up on the run, by a panic, while a node went on) or outside any
// run the audit intercepted is written alone as an orphan record: Seq 0, with the run
// and instance ids of its run when the audit knows them. An orphan is outside every
// run's sequence, and Verify accepts it: a run that left one behind still verifies.
//
// Record times cost no clock read per node: a node's STARTED and terminal records
// take the start and end the engine measured (flow.NodeEnd.Start and Duration, from
// the run's start plus the monotonic clock), so the STARTED record gets its time when
// the node ends, or when its batch is written if that comes first. Times never go
// back in sequence order.
//
// Sub-graph evaluations have no run records: the calling node's STARTED and terminal
// records frame them, and the sub-graph's node records carry its call path
// ("root/callNode/child"), which is how the timeline of "flowteam audit" indents them.
//
// The run record's status is the engine's (flow.Invocation.Outcome): COMPLETED,
// SUSPENDED (with the reason), INTERRUPTED (reason "stopped") for a run stopped with
// Context.Stop, or FAILED with the run's error, including failures that happen outside
// any node (the step limit, a cancelled context between nodes), which have no FAILED
// node record.
//
// The agent name of a record comes from the node's meta "agent" or from a Go task with
// an AgentName() string method (WithAgentName changes this).
//
// # Sinks and failures
//
// Records are buffered per run and written when the run ends (the root graph's
// InterceptFlow returns), or in batches of WithBatchSize during long runs; a batch
// reaches every sink in sequence order. For a JSONL sink the audit encodes each record
// (without reflection) as it is added, into the run's pooled buffer, and the sink
// writes a batch with one call under its mutex: concurrent runs sharing a sink never
// interleave lines, and files opened with OpenJSONL are in O_APPEND mode, so other
// writers (processes, or other sinks on the same path) append whole batches too.
// WithFsync syncs after every batch; a sink on a pipe (stdout piped to another
// program), a terminal or a device has nothing to sync and is not synced, rather than
// failing every batch. Rotation is the operator's.
//
// Each line of a JSONL sink is one record, a self-contained JSON object with the
// fields of trace.Record. To keep lines short, fields with empty values are left out,
// and so is "path" when it equals "graph" (every record of a root graph: only
// sub-graph records carry a path). trace.Record's UnmarshalJSON puts it back, so Go
// readers and "flowteam audit" see it; with jq, read it as (.path // .graph).
//
// A failing sink does not fail the run: its first failure is logged through slog and
// every failure counted (Audit.Failures). WithStrict makes the root InterceptFlow
// return the error as well, which fails the run when it ends: a failure in a mid-run
// batch does not stop the run's nodes, and the run's terminal record keeps the run's
// own outcome.
//
// # Redaction
//
// Records never carry variables unless WithAttrs adds some, but error messages and
// suspend reasons are free text that may quote them. Before a record reaches a sink
// (and before a span is exported), the Redactor masks the values of sensitive keys: the
// defaults (password, secret, secret_key, token, api_key, authorization, ...) plus
// configured ones, case-insensitive and ignoring '_', '-', '.', matching keys that end
// with them, in nested maps and in key=value, key: value, key<TAB>value, JSON "key":
// "value", XML <key>value</key> and command-line --key value text (tabs count as spaces
// around a separator, a value may start on the next line, as in YAML or a folded
// header, a YAML block scalar (|, >) is all its lines, a single-quoted value runs over
// the doubled quotes that escape a quote in it, and a Cookie header's value is all its
// cookies), including the text of errors, Stringers and fmt.Formatters kept as
// attributes (a Formatter is looked at as it prints with %+v, %v and %s, since a text
// sink calls Format, not String).
//
// The goal is that a secret following a configured key in any common serialisation is
// masked. So a key may also be the value of a "name" or "key" member whose secret is
// in the "value" member beside it (XML properties and parameters, HAR, Kubernetes and
// AWS name/value pairs, in text and as maps or structs; in an HTML <meta>, the
// "content" member: <meta name="csrf-token" content="x">) or, in XML, in the
// element's text (not for an HTML void element, <input>, <meta>, <img>, which has
// none: the label after <input name="password"> stays); or the text of a "key" or
// "name" element whose secret is in the element after it (property lists, XML-RPC); an XML namespace prefix (x:name, <ns:password>) does
// not hide a key. An HTML password field says by its type what its value is: in
// <input type="password" value="x">, whatever the field's name and the attributes'
// order, and in a {"type": "password", "value": ...} map, the value is that of
// "password" (the type "password" only: {"type": "token"} names a kind). A key, its separator and the quotes of its value may be escaped:
// percent-encoded (a URL, a form body, where a '+' next to an encoded separator is a
// space: password+%3D+x), HTML or XML character references (&quot;), JSON \u
// escapes, or several of these in layers; the value is masked where it stands, in its
// escaped form. The password of a URL (postgres://app:pw@db) and of a Go MySQL DSN
// (app:pw@tcp(db:3306)/x) is the value of "password". SQL's account passwords are
// masked too (IDENTIFIED BY pw, IDENTIFIED
// WITH plugin BY 'pw' or AS 'hash', REPLACE 'old'): after keywords in upper case a
// bare or quoted value, after others only a single-quoted one, unless they follow
// the account of a CREATE USER or ALTER USER statement in any case (create user bob
// identified by pw; prose has "a user bob identified by his email"), every account
// of such a statement's list included (create user a identified by x, b identified
// by y); in a form-encoded
// query string, a '+' between them is a space (IDENTIFIED+BY+%27pw%27), and in SQL
// quoted by JSON or Go's %q an escaped line break or tab (\n, \r, \t) is one
// ({"sql":"create user a\nidentified by pw"}). So are
// MySQL's SET PASSWORD [FOR account] = pw, whatever the account (a quoted name may
// hold spaces: 'my user'@'%') and in any case (as "set password = pw" is a key and
// its value), and the argument of a PASSWORD('pw') or OLD_PASSWORD call wherever it
// stands (UPDATE mysql.user SET authentication_string = PASSWORD('pw')), by
// IDENTIFIED BY's rule for the keywords' case. A quoted password there ends at its
// closing quote as MySQL reads one, past a quote doubled or after a backslash
// ('x\',1' is x',1; in JSON, 'x\\',1'); single quotes elsewhere are a shell's. In
// JSON a double-quoted one has its quotes escaped: IDENTIFIED BY \"p w\".
// So are the passwords of Redis's AUTH pw and AUTH user pw, read as the command only
// where Redis takes one, as the first word of a line, of any quoted string
// ({"log":"AUTH pw"}), or after a redis-cli prompt ("127.0.0.1:6379> "), with one or
// two arguments that end the line, the string or an escaped line break (\n), the
// first of two not ending in ':' ("AUTH failed: %s" is a message) (an "auth" not
// in upper case and with no prompt must start its line unindented, as code indents
// a field "auth []string", and an argument of letters only reads as prose: "auth
// failed", "auth token expired"), and of redis-cli's -a pw and --pass pw
// (after "redis-cli" on the same line; ls -a x is another option). So is the
// password of an Oracle logon, user/password[@connect_identifier] (the user an
// Oracle name: a letter, then letters, digits, '_', '$', '#'), where a tool that
// takes one stands right before it, its flags between (sqlplus -s scott/pw@db, a
// quoted path to it too, expdp, impdp, sqlldr, dgmgrl, RMAN's target, catalog and
// auxiliary on a line with "rman" before them or after RMAN's own CONNECT command),
// or after userid=; the password ends at the '@'. In a quoted command an escaped tab
// (\t) separates its words as a tab does, and an escaped line break (\n) ends its
// line ({"cmd":"exp\tscott/pw@db"}). The deprecated exp and imp, words that more
// often abbreviate something else, take one only as a command word (first on a line,
// in a quoted command, after a prompt, a shell operator or a path, a Windows one too,
// maybe quoted: C:\oracle\bin\exp.exe, "C:\Program Files\...\exp.exe"; or after
// sudo, nohup, env or time, maybe by its absolute path (/usr/bin/time -v), that is a
// command word, their flags and VAR=value
// assignments between; after time, a word of prose too, the logon must have its '@',
// a parameter or what ends a shell command after it), and only a logon that
// ends as one does ('@', AS, ';', a quote, the end of the line) or is followed by a
// key=value parameter (exp scott/pw@db file=x.dmp) or what ends a shell command (a
// redirection, a pipe, &&, a comment: exp scott/pw > exp.log). CONNECT and
// conn are words of prose too ("connect I/O with pipes"): after them, the logon must
// be followed by '@', AS (AS SYSDBA), a ';', a closing quote or the end of its line.
// Elsewhere that shape is a path (a/b@c), a package (@scope/pkg@1.0), a module
// (example.com/mod@v1.2.3) or an address, and stays. These are the value of
// "password", as a URL's is.
//
// Ordinary words are not masked: a space alone does not separate a key from a value
// (but after a --flag, or before a quoted value, as in SQL's PASSWORD 'x'), so in
// prose ("wrong password for bob", "token bucket full", "auth failed for user bob",
// "identified by its id") the next word is not a secret, and text with no key
// followed by a value passes unchanged. A
// Kubernetes object name (lower-case letters, digits, '-', '.', '/') quoted after
// "secret", at the start of the text or after a ':', and before a status (`secret
// "db-creds" not found`, "already exists", "is forbidden:", "is invalid:") names a
// Secret and stays; a quoted token or password stays masked whatever follows it
// (`token "x" expired` quotes the token itself). Out of scope are secrets with no key
// before them (a bare token in a sentence, curl -u user:pw), a key and a bare value
// separated by a space only ("token abc", "auth for bob": prose reads the same),
// keys split from their values by other markup, short flags (-p pw) and other
// encodings (base64, gzip).
//
// An attribute is masked in every form a sink may write it: a []byte as text; a
// struct, pointer or other map as its JSON encoding and as fmt prints it (a slog text
// handler), which also covers values with no JSON encoding (a map[any]any, a struct
// with a func field) and unexported fields. Redaction looks 32 maps and slices deep
// and stops where a value contains itself, masking what lies beyond: a cyclic value
// neither hangs the audit nor reaches a sink whole.
//
// # Metrics
//
// Metrics counts per run the node executions by status, retries (failed attempts that
// were retried), recovered failures, fallbacks and human rejections, and the run's
// duration; Metrics.Run returns them by run id, the Memory sink computes the same
// from records, and with WithMeterProvider they become OpenTelemetry instruments.
// Fallbacks and rejections are not reported by the engine: code that knows calls
// trace.Count(ctx, trace.CountFallback, 1) with the run's context. A run started from
// a task with the task's context is a run of its own, with its own metrics: what its
// code counts is its, not also the starting run's (whose metrics do not count its
// nodes either), so adding up both runs counts every event once; see
// trace.WithRunCounterSink. A run id names one run: evaluations given the same id
// with flow.WithRunID (a run resumed under its own id; session.Runner gives each
// evaluation a new one) count for it together, also at the same time, as their audit
// records do.
//
// # Spans
//
// Tracing opens a span per graph evaluation and per node execution with a tracer
// provider passed in (no global state). Node spans are keyed by the branch view and
// node, as the engine guarantees one node at a time per view. Tracing is a
// flow.NodeStarter: a node's task runs with the node's span in its context, so what
// the task traces with that context (an instrumented HTTP or database client, a
// model call, a graph it evaluates) nests under the node's span.
package interceptor
