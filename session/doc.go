// Package session stores flow instances so that a run can stop (suspend, stop, fail,
// or the process dies) and continue later, in this process or another one, from
// exactly where it stood.
//
// # Snapshots
//
// A Snapshot is versioned JSON: the format version, the graph id and the hash of its
// definition (flow.Graph.Hash), the business instance id, the status, the variables,
// the frontier (flow.FrontierState: pending nodes with call path and branch id, join
// arrivals, loop positions, inclusive activation counts, the failed branches of a
// ContinueOnError split), the FlowTrace, the suspend reason, the execution errors, a
// version that every save increases by one, and timestamps. Encode and Decode read and
// write it with a hand-written codec (a save per node must cost microseconds); the
// output is plain JSON.
//
// Values: JSON has one number type, so after a round trip an integer literal that fits
// is an int64 and any other number a float64 (a float64 3.0 comes back as int64 3, and
// any integral float within int64's range as the int64 of the same value; a uint64
// beyond it as a float64); objects are map[string]any, arrays []any, and other Go
// values come back in their JSON form (a time.Time as a string, a struct as a map, a
// []byte as base64, a nil slice, map or pointer as nil; but a nil []any or
// map[string]any comes back empty, not nil). A string that is not valid UTF-8 comes
// back with U+FFFD in place of the bad bytes, as encoding/json writes it (also inside
// what a MarshalJSON writes); a variable name or a key of a map[string]any that is not
// is unserializable (repaired, two keys could become one). A value that cannot be
// written as JSON (a func, a channel, NaN, a cycle, a failing MarshalJSON, or one
// whose output Decode would not read back: a repeated key, a number beyond float64)
// fails the save with an *UnserializableError naming every such variable;
// DropUnserializable (Encode) or WithDropUnserializable (Runner) leaves them out and
// lists them in Snapshot.Dropped. Decode is strict: unknown or repeated fields,
// trailing data, a missing required field, another format version, an out-of-range
// number or bytes that are not valid UTF-8 (the encoder writes a string's invalid
// UTF-8 as U+FFFD, as encoding/json does, so they can only be damage) reject the whole
// snapshot (ErrCorrupt, ErrFormat); nothing is ever half-loaded.
//
// # Stores
//
// A Store keeps one snapshot per instance id and checks versions: Save(ctx, snap,
// expected) succeeds only if the stored version is expected (0: none stored), else it
// returns ErrConflict and stores nothing; if snap.Created is set, the stored snapshot
// must also have been created then, because an instance deleted or expired and
// created again restarts its versions. MemoryStore, FileStore (one file per instance,
// temporary file + fsync + rename + directory fsync, flock across processes) and
// RedisStore (one Lua script per save: one round trip) implement it, as well as
// TTLStore for expiry. ValidateID is the common rule for instance ids; every store
// applies it. FileStore and RedisStore never save over or delete a snapshot of a
// format this build cannot read (ErrFormat; a Redis hash written before this check
// existed carries no format and is not checked), nor a Redis key at an instance's
// place that is not a hash (another program's: Load and Delete report ErrCorrupt,
// List leaves it out). The conformance suite in
// session/storetest checks any Store.
//
// A save that took effect but whose durability the store cannot assure (FileStore:
// the directory sync after the rename failed) returns an error wrapping
// ErrNotDurable, with the snapshot stamped as stored: it is not a failed save, and a
// retry expecting the previous version would conflict with it. A Runner fails the run
// as for any failed save but saves over the version that was stored: after a
// checkpoint, the outcome (checkpoint_failed); after a claim, before any node ran,
// status failed with the frontier, so a Resume needs no Recover. FileStore waits for its lock only as long as the caller's
// context lasts, follows no symbolic link, and refuses a lock file with more than
// one link (a hard link planted at it) rather than lock another file (see FileStore).
//
// # Running and resuming
//
// A Runner runs registered graphs with a store. Run claims the instance id (a snapshot
// with status running, version 1) before the first node, so an id that exists is an
// ErrConflict and nothing runs; when the run ends its outcome is saved (suspended,
// stopped, failed with its frontier, or completed). Resume loads a snapshot, checks the
// definition hash (ErrDefinitionChanged names both hashes unless WithMigration adapts
// the snapshot), restores frontier and context, applies the updates, and claims the
// instance with a save that expects the loaded version and stores status running:
// that is the only step that can race, so of any number of concurrent resumes exactly
// one proceeds and the others get ErrConflict before running any node (also when the
// instance was deleted or expired and created again since the Load: the claim
// carries the loaded creation time). An instance
// whose status is running is an ErrConflict too (ErrRunning), unless Recover says its
// process is known to be dead; a completed one is ErrCompleted (also an ErrConflict).
// Resume never replays: it continues from the frontier, and a suspended node runs
// again so it can see the decision it waited for.
//
// Graphs with agent nodes (package team) keep an agent's run that waits for a human in
// the instance's variables. The Runner knows nothing of agents, so a new Run over an
// instance's variables, or a resume that completes, does not discard runs left waiting
// at nodes it never reaches; give the Runner's engine team.DiscardStaleRuns() as an
// interceptor and they are discarded as team.RunFlow and ResumeFlow discard them.
//
// Expected versions: Store.Save expecting 0 creates only (ErrConflict if the id is
// stored), as Run's claim does. ExpectVersion(v) makes a Resume check the loaded
// version too; no stored snapshot is at version 0, so ExpectVersion(0) always fails
// rather than meaning "any version" (leave the option out for that).
//
// # Durability
//
// OnExit (the default) saves at the claim and when the run ends. A process that dies
// in between leaves the claim behind (status running, the frontier the run started
// from, the updates already applied); Recover continues from there, running again the
// nodes the dead process had run.
//
// PerNode also saves after every completed node (flow.WithCheckpoint): the checkpoint
// holds the positions of all live branches and the variables copied atomically with
// them. A process killed at any moment resumes (with Recover) from its last checkpoint:
// a node whose completion was checkpointed never runs again, including the finished
// branches of a parallel gateway, whose arrivals at the join are in the frontier. A node
// that was in flight, in this or another branch, when the process died is in the
// frontier and runs again: delivery is exactly-once for completed nodes as far as the
// checkpoint is concerned, and at-least-once for nodes in flight, so their side effects
// must be idempotent. A failed checkpoint save fails the run at that node (code
// checkpoint_failed). The cost is one save per node; it does not grow with the history
// of the run, only with the size of its state.
//
// # Protection
//
// Secrets should not be stored at all: keep credentials out of flow variables. What
// must be stored can be protected three ways.
//
// Redaction (WithRedaction, WithRedactor): the snapshot is masked with a
// redact.Redactor. The variables declared secret or under a sensitive key (password,
// token, api_key, ...) are replaced by "***" and named in Snapshot.Redacted, and their
// values are masked wherever they appear in other variables, the suspend reason and
// the error messages. Redacted variables are not restored: a resumed instance does
// not have them (the mask is not the value) unless the resume's updates supply them.
//
// Encryption (WithCipher, NewCipher): the body of the snapshot (variables, frontier,
// FlowTrace, reason, errors, run id, dropped and redacted names, meta) is sealed with AES-GCM
// under a caller-supplied 128-, 192- or 256-bit key and stored as Snapshot.Sealed:
// one version byte (2), a random 12-byte nonce, then the ciphertext and tag. The
// header (format, instance, graph, hash, status, version, timestamps, sources) stays in
// clear, because stores check versions and list by status without the key; the
// additional authenticated data binds the body to the format, instance, graph,
// definition hash and status, so a body moved to another instance, or a status
// changed in the clear, does not open (ErrDecrypt). Snapshots sealed by earlier
// builds (version byte 1, status not bound) still open. The version and timestamps
// cannot be bound (a store stamps them after sealing): see Cipher.
//
// Expiry (WithExpiry, or a store's default TTL): every save sets a time to live; an
// instance not saved again within it is forgotten (Redis expires the key; the memory
// and file stores treat it as not found).
//
// # Definitions
//
// A snapshot stores the definition hash, not the definition. Resume needs the graph
// registered in the Runner's engine; Snapshot.Sources may record the definition files
// (WithSources), which is how the flowteam command finds them again ("flowteam resume
// ID --store DSN"), and Snapshot.Meta what else a program needs to resume the instance
// as it was run (WithMeta; the flowteam command records its durability, step limit and
// redacted names there). A definition that changed is detected by its hash.
package session
