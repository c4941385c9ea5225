// Package testkit helps test graphs and agent teams without a network and
// without depending on timing or on what a model happens to write.
//
// Graph tests should check structure (which nodes ran, in which causal order, how
// often, on which branch) and business state, never the wording of a model's answer.
// A PathRecorder is a flow.Interceptor that records every node execution; the
// assertions read the recording the way Solon's Java topology tests read their
// CopyOnWriteArrayList of started node ids:
//
//	rec := testkit.NewPathRecorder()
//	res, err := engine.EvalGraph(ctx, g, fc, flow.WithEvalInterceptor(rec, 0))
//	require.NoError(t, err)
//	testkit.AssertVisited(t, rec, "analyst", "route", "manual")
//	testkit.AssertNotVisited(t, rec, "auto")
//	testkit.AssertVisitedInOrder(t, rec, "analyst", "route", "manual")
//
// or, fluently,
//
//	testkit.Expect(t, rec).Visited("analyst", "route", "manual").NotVisited("auto")
//
// An assertion never passes for want of anything to check: one given no ids, a nil
// recorder, and AssertNotVisited (or AssertVisitedTimes with 0) on a recorder that saw
// no node or for a plain id that is no node of the graphs that ran (a misspelt id)
// fail. A qualified id, or a plain id while a called sub-graph never ran, is taken as
// written.
//
// A failing assertion reports the whole recorded path (and, for sub-graphs and
// parallel branches, the qualified path and the nodes of each branch), so the failure
// says what did happen, not only what did not.
//
// Parallel branches complete in no fixed order: assert order only between nodes that
// are causally ordered (along one branch, or before a split and after its join), and
// use PathRecorder.ByBranch to check what each branch did.
//
// For agents and teams, testkit has deterministic agents (FixedAgent, Analyst,
// FailingAgent, SlowAgent) and ScriptedModel, a chat model that answers from a script,
// records every request and fails on cue. For sessions, MiniredisStore, RealRedisStore
// (the redis-server at $REDIS_ADDR, under a throw-away key prefix) and RedisStore (the
// real one when REDIS_ADDR is set, else miniredis) give Redis stores.
// Chain builds the linear graph the benchmarks measure per-node costs on.
// BuildCommand builds a command (flowteam) once per test process, for tests that run
// it as separate processes.
package testkit
