// Package session stores flow instances so that a run can stop (it suspends, stops,
// fails, or its process dies) and continue later, in this process or another one,
// from exactly where it stood.
//
// A Runner runs a registered graph under an instance id (the business key) and saves
// every outcome in a Store; Resume loads the instance, applies updates to its
// variables and continues from the stored frontier. Nothing is replayed:
//
//	r := session.NewRunner(eng, session.NewMemoryStore(), session.WithDurability(session.PerNode))
//	res, err := r.Run(ctx, "leave", flow.NewContextWith("leave-42", map[string]any{"days": 5}))
//	// res.Status is suspended: the manager has not decided yet. Later, anywhere:
//	res, err = r.Resume(ctx, "leave-42", map[string]any{"approved": true})
//
// # Snapshots
//
// A Snapshot is versioned JSON: the format version, the instance id, the graph id
// and its definition hash, the status, the variables, the frontier (pending nodes,
// join arrivals, loop positions), the FlowTrace, the suspend reason and the
// execution errors. Encode and Decode write and read it with
// github.com/go-json-experiment/json; Decode is strict and never half-loads a
// snapshot. Encode says what becomes of each kind of value (an integer comes back
// as an int64, any other number as a float64) and names every variable that cannot
// be written (an *UnserializableError), unless DropUnserializable leaves them out.
//
// # Stores
//
// A Store keeps one snapshot per instance id and checks versions: Save succeeds only
// if the stored version is the one expected (0: none stored), else it stores nothing
// and returns ErrConflict. MemoryStore, FileStore (one file per instance, written
// atomically and synced) and RedisStore (one Lua script, one round trip per save)
// implement it, and TTLStore for expiry. ValidateID is the one rule for instance ids.
// The conformance suite in session/storetest checks any Store.
//
// # Running and resuming
//
// Run claims the instance id (a snapshot with status running, version 1) before the
// first node runs, so an id that exists is an ErrConflict and nothing runs. Resume
// checks the definitions and claims the instance with a save that expects the
// version it loaded: of any number of concurrent resumes exactly one proceeds. An
// instance that is running needs Recover (its process is known to be dead); a
// completed one is ErrCompleted. A suspended node runs again on resume, so it can see
// the decision it waited for.
//
// # Definitions
//
// A snapshot records the definition hash of its root graph (Snapshot.Hash) and of
// every graph the root reaches through sub-graph calls (Snapshot.Called). Resume
// refuses a snapshot whose graphs changed since with a *DefinitionChangedError
// naming the graph and both hashes (Runner.CheckDefinition runs the same check),
// unless WithMigration adapts the snapshot or accepts the change. A snapshot saved
// before the called graphs were recorded is checked on its root graph alone.
//
// # Leases
//
// The process running an instance holds a Lease, recorded in the snapshot: its host,
// pid and a random token, and an expiry it renews while the run goes on (WithLease:
// every 5 seconds, for 30 seconds, by default). Renewals are saves of the instance,
// serialized with its checkpoints, so they never conflict with them; a PerNode
// checkpoint renews the lease as it saves, so a run whose nodes complete more often
// than the renewal interval makes no save for its lease. Resume, with
// Recover or not, refuses an instance whose lease is fresh (a *LeaseHeldError): a
// live run is never run twice. A renewal that finds the instance taken over cancels
// the run with ErrLeaseLost.
//
// # Durability
//
// OnExit (the default) saves at the claim and when the run ends. PerNode also saves
// after every completed node: a process killed at any moment resumes (with Recover)
// from its last checkpoint, and a node whose completion was checkpointed never runs
// again. A node in flight when the process died runs again, so side effects must be
// idempotent, or queued with flow.Context.Effect: an EffectStore (RedisStore) makes
// them in the save of the node's checkpoint, so they are made once. A save that took
// effect but could not be made durable returns ErrNotDurable and must not be retried
// as a failed save.
//
// # Protection
//
// Keep credentials out of flow variables. What must be stored can be masked
// (WithRedaction, WithRedactor: a redact.Redactor replaces the variables declared
// secret or under a sensitive key by "***", names them in Snapshot.Redacted, and masks
// their values wherever other variables, the suspend reason or error messages quote
// them; a redacted variable is not restored on resume unless the resume supplies it),
// encrypted (WithCipher: the body is sealed with AES-GCM, the header stays in clear
// for version checks and listing) and given a time to live (WithExpiry). A snapshot
// stores the definition hash, not the definition: Snapshot.Sources (WithSources)
// records where the definitions came from.
package session
