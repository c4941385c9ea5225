package flow

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
)

// Hash returns a hex SHA-256 of the graph's definition: ids, types, titles, conditions,
// tasks, meta and links with their priorities, in definition order. Two graphs with the
// same hash route the same way, so a stored frontier may be resumed on either. A Go task
// component counts by its type name.
func (g *Graph) Hash() string {
	type link struct {
		To, Title, When string
		Priority        int
		Meta            map[string]any
	}
	type node struct {
		ID, Type, Title, When, Task, Component string
		Meta                                   map[string]any
		Links                                  []link
	}
	doc := struct {
		ID, Title, Driver string
		Evaluator         string `json:",omitempty"` // absent for the default: hashes stay as they were
		Meta              map[string]any
		Nodes             []node
	}{ID: g.ID, Title: g.Title, Driver: g.Driver, Evaluator: g.Evaluator, Meta: g.Meta}
	for _, n := range g.nodes {
		nd := node{ID: n.ID, Type: n.Type.String(), Title: n.Title, When: n.When, Task: n.Task, Meta: n.Meta}
		if n.Component != nil {
			nd.Component = reflect.TypeOf(n.Component).String()
		}
		for _, l := range n.links {
			nd.Links = append(nd.Links, link{To: l.To, Title: l.Title, When: l.When, Priority: l.Priority, Meta: l.Meta})
		}
		doc.Nodes = append(doc.Nodes, nd)
	}
	// encoding/json sorts map keys, so the encoding is canonical.
	b, err := json.Marshal(doc)
	if err != nil {
		b = fmt.Appendf(nil, "%#v", doc) // meta that JSON cannot encode still hashes deterministically enough
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// FrontierState is the serializable form of a Frontier: plain data for a snapshot.
// Frames are listed parents first; tokens and frames refer to frames by index and to
// nodes by id within the graph of their call frame.
type FrontierState struct {
	Graph  string       `json:"graph"`  // id of the root graph
	Frames []FrameState `json:"frames"` // every frame a token is inside, parents first
	Tokens []TokenState `json:"tokens"` // the pending tokens
}

// FrameState is one frame of a frontier: a call of a graph (the root graph or a
// sub-graph), the branches of one split waiting for their join, or the iterations of
// one loop node. Parent, Call and Caller are indexes into FrontierState.Frames, -1
// for none.
type FrameState struct {
	Kind    string `json:"kind"`    // call, split or loop
	Parent  int    `json:"parent"`  // the enclosing frame; -1 for the root call
	Call    int    `json:"call"`    // the innermost call frame of a split or loop frame; -1 for a call frame
	Pending int    `json:"pending"` // units (tokens or nested frames) still running inside
	Branch  string `json:"branch"`  // branch id of the token that opened the frame
	// split
	Split   string `json:"split,omitempty"`   // id of the split node
	Join    string `json:"join,omitempty"`    // id of the join node, once a branch arrived there
	Arrived int    `json:"arrived,omitempty"` // branches that arrived at the join
	Policy  string `json:"policy,omitempty"`  // branch policy of a parallel split (ParseBranchPolicy)
	// Failed lists the branches a ContinueOnError split withdrew because they failed,
	// in the order they failed: if no branch reaches the join, the split fails with
	// all_branches_failed, joining these errors.
	Failed []FailedBranch `json:"failed,omitempty"`
	// loop
	Loop    string `json:"loop,omitempty"`    // id of the opening loop node
	Items   []any  `json:"items,omitempty"`   // the items the loop iterates over (numbers decode as json.Number: UnmarshalJSON)
	Index   int    `json:"index,omitempty"`   // position of the current item in Items
	Closing string `json:"closing,omitempty"` // id of the closing loop node, once reached; Loop's id once an error policy's goto left the loop (no closing node then)
	// call
	Graph  string `json:"graphId,omitempty"` // id of the called graph
	Path   string `json:"path,omitempty"`    // the call path (as in FlowTrace)
	Node   string `json:"node,omitempty"`    // the calling node in the caller's graph; empty for the root call
	Caller int    `json:"caller"`            // the caller's call frame; -1 for the root call
}

// UnmarshalJSON decodes a frame as encoding/json does, except that the numbers in
// Items stay json.Number, exact, instead of becoming float64: RestoreFrontier turns
// an integral one into an int64 and any other into a float64 (as a session snapshot
// restores them), so a loop over integers resumes with integers (`it == 3` and typed
// getters behave as before the restart, and an integer beyond float64's precision
// keeps its value).
//
// encoding/json passes no decoder options to an UnmarshalJSON method, so a caller's
// Decoder.DisallowUnknownFields does not reach the fields of a frame: an unknown key
// inside a frame is ignored, as a lenient decode would. No decoder in this module
// relies on it (package session reads frontiers with its own strict codec, and
// RestoreFrontier checks every frame it is given); a caller that must reject unknown
// frame fields checks them itself.
func (fs *FrameState) UnmarshalJSON(data []byte) error {
	type plain FrameState // the same fields, without this method
	var aux struct {
		*plain
		Items json.RawMessage `json:"items,omitempty"` // shadows plain's
	}
	aux.plain = (*plain)(fs)
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	if aux.Items == nil {
		return nil // no items: left as they were, as encoding/json leaves a missing field
	}
	dec := json.NewDecoder(bytes.NewReader(aux.Items))
	dec.UseNumber()
	return dec.Decode(&fs.Items)
}

// fromJSONNumbers returns v with its json.Numbers replaced: an integer that fits
// becomes an int64, any other number a float64. changed says whether v held one; the
// maps and lists holding one are copied, so the caller's state is left as it was.
func fromJSONNumbers(v any) (_ any, changed bool, err error) {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i, true, nil
		}
		f, err := t.Float64()
		if err != nil {
			return nil, false, fmt.Errorf("number %s: %w", t, err)
		}
		return f, true, nil
	case map[string]any:
		var out map[string]any
		for k, e := range t {
			n, ch, err := fromJSONNumbers(e)
			if err != nil {
				return nil, false, err
			}
			if ch {
				if out == nil {
					out = maps.Clone(t)
				}
				out[k] = n
			}
		}
		if out != nil {
			return out, true, nil
		}
	case []any:
		var out []any
		for i, e := range t {
			n, ch, err := fromJSONNumbers(e)
			if err != nil {
				return nil, false, err
			}
			if ch {
				if out == nil {
					out = slices.Clone(t)
				}
				out[i] = n
			}
		}
		if out != nil {
			return out, true, nil
		}
	}
	return v, false, nil
}

// FailedBranch is one branch of a split frame that failed and was withdrawn (see
// FrameState.Failed).
type FailedBranch struct {
	Node   string          `json:"node"`   // the node that failed, in the graph of the split's call frame
	Branch string          `json:"branch"` // the failed branch's id
	Error  StructuredError `json:"error"`  // the failure, as ToStructured gives it
}

// TokenState is one pending token of a frontier.
type TokenState struct {
	Node string `json:"node"` // id of the node, in the graph of the token's call frame
	// Mode is what it does next there: arrive, begin (run the node, which has not
	// started: its join fired, or its loop ended), exec (run the node again), follow,
	// body, resume-call or failed.
	Mode   string `json:"mode"`
	Frame  int    `json:"frame"`  // index of its innermost frame in FrontierState.Frames
	Branch string `json:"branch"` // branch id
	// Arrivals is how many branches the join the token fires waited for, kept when
	// the join's own task suspended, was stopped or failed the run, so that the
	// join's NodeEnd (and its audit record) says so when it runs again.
	Arrivals int `json:"arrivals,omitempty"`
	// Error is the failure a "failed" token still has to report (every branch of a
	// split failed and the run halted before the failure was handled).
	Error *StructuredError `json:"error,omitempty"`
}

var modeNames = [...]string{modeArrive: "arrive", modeExec: "exec", modeFollow: "follow", modeBody: "body", modeResumeCall: "resume-call", modeFailed: "failed", modeBegin: "begin"}
var kindNames = [...]string{frameCall: "call", frameSplit: "split", frameLoop: "loop"}

// State returns the serializable form of the frontier.
func (f *Frontier) State() FrontierState {
	st := FrontierState{}
	f.appendState(&st, map[*frame]int{})
	return st
}

// appendState writes the frontier into st, appending to st.Frames and st.Tokens (a
// checkpoint passes recycled slices, emptied). index is an empty scratch map.
func (f *Frontier) appendState(st *FrontierState, index map[*frame]int) {
	st.Graph = f.graph.g.ID
	for _, t := range f.tokens {
		fi := st.addFrame(t.frame, index)
		ts := TokenState{Node: t.node.n.ID, Mode: modeNames[t.mode], Frame: fi, Branch: t.branch, Arrivals: t.arrivals}
		if t.failure != nil {
			se := ToStructured(t.failure)
			ts.Error = &se
		}
		st.Tokens = append(st.Tokens, ts)
	}
}

// addFrame adds fr and the frames it refers to (parents first) to st, once each, and
// returns its index (-1 for nil).
func (st *FrontierState) addFrame(fr *frame, index map[*frame]int) int {
	if fr == nil {
		return -1
	}
	if i, ok := index[fr]; ok {
		return i
	}
	parent, caller := st.addFrame(fr.parent, index), -1
	if fr.kind == frameCall {
		caller = st.addFrame(fr.caller, index)
	}
	call := -1
	if fr.kind != frameCall {
		call = st.addFrame(fr.call, index)
	}
	fs := FrameState{Kind: kindNames[fr.kind], Parent: parent, Call: call, Caller: caller, Pending: fr.pending, Branch: fr.branch}
	switch fr.kind {
	case frameSplit:
		fs.Split, fs.Arrived, fs.Policy = fr.split.n.ID, fr.arrived, fr.policy.String()
		if fr.join != nil {
			fs.Join = fr.join.n.ID
		}
		if len(fr.failed) > 0 {
			fs.Failed = make([]FailedBranch, len(fr.failed))
			for i, ne := range fr.failed {
				fs.Failed[i] = FailedBranch{Node: ne.Node, Branch: ne.Branch, Error: ToStructured(ne)}
			}
		}
	case frameLoop:
		fs.Loop, fs.Items, fs.Index = fr.loop.n.ID, fr.items, fr.index
		switch {
		case fr.left:
			fs.Closing = fr.loop.n.ID // the flow left the loop: no closing node (FrameState.Closing)
		case fr.closing != nil:
			fs.Closing = fr.closing.n.ID
		}
	case frameCall:
		fs.Graph, fs.Path = fr.graph.g.ID, fr.path
		if fr.node != nil {
			fs.Node = fr.node.n.ID
		}
	}
	index[fr] = len(st.Frames)
	st.Frames = append(st.Frames, fs)
	return index[fr]
}

// ErrBadFrontier is returned when a frontier state does not fit its graph.
var ErrBadFrontier = errors.New("invalid frontier")

// RestoreFrontier rebuilds a Frontier for root (the graph the run started from) from its
// serialized state. Sub-graph frames are resolved through the calling node, as at run
// time. Every reference is checked, and so is each frame's pending count against the
// tokens and frames inside it (see checkPending); on any mismatch nothing is returned
// and the error (wrapping ErrBadFrontier) says what did not fit.
func (e *Engine) RestoreFrontier(root *Graph, st FrontierState) (*Frontier, error) {
	bad := func(format string, args ...any) (*Frontier, error) {
		return nil, fmt.Errorf("%w: %s", ErrBadFrontier, fmt.Sprintf(format, args...))
	}
	cg, err := e.prepare(root)
	if err != nil {
		return nil, err
	}
	if st.Graph != root.ID {
		return bad("state is for graph %q, not %q", st.Graph, root.ID)
	}
	if len(st.Tokens) == 0 {
		return bad("no pending tokens")
	}
	frames := make([]*frame, len(st.Frames))
	ref := func(i, self int) (*frame, bool) {
		if i == -1 {
			return nil, true
		}
		if i < 0 || i >= self {
			return nil, false // parents come first
		}
		return frames[i], true
	}
	for i, fs := range st.Frames {
		parent, ok := ref(fs.Parent, i)
		if !ok {
			return bad("frame %d: parent %d out of order", i, fs.Parent)
		}
		if fs.Pending < 0 {
			return bad("frame %d: negative pending count", i)
		}
		f := &frame{parent: parent, pending: fs.Pending, branch: fs.Branch}
		switch fs.Kind {
		case "call":
			f.kind, f.call = frameCall, f
			caller, ok := ref(fs.Caller, i)
			if !ok {
				return bad("frame %d: caller %d out of order", i, fs.Caller)
			}
			if caller == nil {
				if parent != nil || i != 0 {
					return bad("frame %d: a root call frame must come first and have no parent", i)
				}
				f.graph, f.path = cg, cg.g.ID
			} else {
				if parent == nil || parent.call != caller {
					return bad("frame %d: call frame's parent is not in its caller", i)
				}
				cn := caller.graph.node(fs.Node)
				if cn == nil || cn.kind != taskSubgraph {
					return bad("frame %d: node %q of graph %q does not call a sub-graph", i, fs.Node, caller.graph.g.ID)
				}
				child, err := e.resolveCall(cn)
				if err != nil {
					return bad("frame %d: %v", i, err)
				}
				if child.g.ID != fs.Graph {
					return bad("frame %d: node %q calls %q, state says %q", i, fs.Node, child.g.ID, fs.Graph)
				}
				f.graph, f.node, f.caller, f.depth = child, cn, caller, caller.depth+1
				f.path = caller.path + "/" + cn.n.ID + "/" + child.g.ID
			}
		case "split", "loop":
			call, ok := ref(fs.Call, i)
			if !ok || call == nil || call.kind != frameCall || parent == nil || parent.call != call {
				return bad("frame %d: bad call frame %d", i, fs.Call)
			}
			f.call = call
			g := call.graph
			if fs.Kind == "split" {
				f.kind = frameSplit
				if f.split = g.node(fs.Split); f.split == nil || len(f.split.links) < 2 {
					return bad("frame %d: %q is not a split node of graph %q", i, fs.Split, g.g.ID)
				}
				if fs.Pending > len(f.split.links) {
					// A split starts one branch per true link at most, and only ends them.
					return bad("frame %d (split %q): %d branches pending, but the node has %d links", i, fs.Split, fs.Pending, len(f.split.links))
				}
				if fs.Join != "" {
					if f.join = g.node(fs.Join); f.join == nil || !f.join.join {
						return bad("frame %d: %q is not a join node of graph %q", i, fs.Join, g.g.ID)
					}
				}
				if fs.Arrived < 0 || (fs.Arrived > 0) != (f.join != nil) {
					// A join is set by the first arrival: arrivals without one would fire
					// a join at no node, a join without arrivals would never fire.
					return bad("frame %d (split %q): %d arrivals at join %q", i, fs.Split, fs.Arrived, fs.Join)
				}
				f.arrived = fs.Arrived
				if f.policy, err = ParseBranchPolicy(fs.Policy); err != nil {
					return bad("frame %d: %v", i, err)
				}
				if len(fs.Failed) > 0 && (f.split.n.Type != Parallel || f.policy != ContinueOnError) {
					// Only a ContinueOnError parallel split withdraws failed branches
					// (fatal): restored elsewhere, they would fail the split with
					// all_branches_failed for branches that never failed there.
					return bad("frame %d: failed branches in split %q, which is not a parallel split with branch policy continue", i, fs.Split)
				}
				for j, fb := range fs.Failed {
					n := g.node(fb.Node)
					if n == nil {
						return bad("frame %d: failed branch %d: no node %q in graph %q", i, j, fb.Node, g.g.ID)
					}
					f.failed = append(f.failed, &NodeError{Graph: n.n.graph.ID, Path: call.path, Node: n.n.ID, NodeType: n.n.Type,
						Title: n.n.Title, Branch: fb.Branch, Code: fb.Error.Code, Err: errors.New(fb.Error.Message)})
					f.failedIn = append(f.failedIn, f.branchOf(fb.Branch))
				}
			} else {
				f.kind = frameLoop
				if f.loop = g.node(fs.Loop); f.loop == nil || f.loop.loopVar == "" {
					return bad("frame %d: %q is not an opening loop node of graph %q", i, fs.Loop, g.g.ID)
				}
				if fs.Index < 0 || fs.Index >= len(fs.Items) {
					return bad("frame %d: loop index %d outside %d items", i, fs.Index, len(fs.Items))
				}
				f.index = fs.Index
				items, _, err := fromJSONNumbers(fs.Items) // decoded by FrameState.UnmarshalJSON
				if err != nil {
					return bad("frame %d: loop items: %v", i, err)
				}
				f.items = slices.Clone(items.([]any))
				switch {
				case fs.Closing == fs.Loop:
					f.left = true
				case fs.Closing != "":
					if f.closing = g.node(fs.Closing); f.closing == nil || !f.closing.isClose {
						return bad("frame %d: %q is not a closing loop node of graph %q", i, fs.Closing, g.g.ID)
					}
					if !f.loop.closers[f.closing] { // another loop's: the flow would go on from there
						return bad("frame %d: %q does not close loop %q", i, fs.Closing, fs.Loop)
					}
				}
			}
		default:
			return bad("frame %d: unknown kind %q", i, fs.Kind)
		}
		if len(fs.Failed) > 0 && f.kind != frameSplit {
			return bad("frame %d: failed branches in a %s frame", i, fs.Kind)
		}
		frames[i] = f
	}
	if len(frames) == 0 {
		return bad("no frames")
	}
	fr := &Frontier{graph: cg}
	for i, ts := range st.Tokens {
		f, ok := ref(ts.Frame, len(frames))
		if !ok || f == nil {
			return bad("token %d: bad frame %d", i, ts.Frame)
		}
		n := f.call.graph.node(ts.Node)
		if n == nil {
			return bad("token %d: no node %q in graph %q", i, ts.Node, f.call.graph.g.ID)
		}
		mode := slices.Index(modeNames[:], ts.Mode)
		if mode < 0 || tokenMode(mode) == modeResumeCall {
			return bad("token %d: bad mode %q", i, ts.Mode)
		}
		if ts.Arrivals < 0 {
			return bad("token %d: negative arrivals %d", i, ts.Arrivals)
		}
		t := &token{node: n, mode: tokenMode(mode), frame: f, call: f.call, branch: ts.Branch, arrivals: ts.Arrivals}
		if t.mode == modeFailed {
			if ts.Error == nil {
				return bad("token %d: a failed token without its error", i)
			}
			t.failure = &NodeError{Graph: n.n.graph.ID, Path: f.call.path, Node: n.n.ID, NodeType: n.n.Type, Title: n.n.Title,
				Branch: ts.Branch, Code: ts.Error.Code, Err: errors.New(ts.Error.Message)}
		}
		if t.mode == modeBody && (f.kind != frameLoop || f.loop != n) {
			return bad("token %d: a loop body token at %q outside the loop frame of that node", i, ts.Node)
		}
		fr.tokens = append(fr.tokens, t)
	}
	if err := checkPending(st, frames); err != nil {
		return nil, err
	}
	return fr, nil
}

// checkPending checks each frame's pending count against what the state holds inside
// the frame. The count is what makes a join fire, a loop go on and a call return: too
// high and they never do, too low and they do early (the count then goes negative and
// they never do again). The engine counts one unit per token whose innermost frame it
// is and one per frame nested directly in it: a split or loop frame stands for the
// branch or iteration that opened it, a sub-graph call frame for its calling token,
// which waits outside the frontier. Branches that arrived at the join, ended or failed
// are no longer counted. Every frame of a frontier has something in it, and a loop
// runs one iteration at a time.
func checkPending(st FrontierState, frames []*frame) error {
	units := make([]int, len(frames))
	for _, fs := range st.Frames {
		if fs.Parent >= 0 {
			units[fs.Parent]++
		}
	}
	for _, ts := range st.Tokens {
		units[ts.Frame]++
	}
	for i, f := range frames {
		switch {
		case units[i] == 0:
			return fmt.Errorf("%w: frame %d (%s): nothing is inside it", ErrBadFrontier, i, f.describe())
		case f.pending != units[i]:
			return fmt.Errorf("%w: frame %d (%s): pending %d, but %d tokens or frames are inside it",
				ErrBadFrontier, i, f.describe(), f.pending, units[i])
		case f.kind == frameLoop && f.pending != 1:
			return fmt.Errorf("%w: frame %d (%s): %d units inside, but a loop runs one iteration at a time",
				ErrBadFrontier, i, f.describe(), f.pending)
		}
	}
	return nil
}

// describe names a frame for messages.
func (f *frame) describe() string {
	switch f.kind {
	case frameSplit:
		return fmt.Sprintf("split %q in %s", f.split.n.ID, f.call.path)
	case frameLoop:
		return fmt.Sprintf("loop %q in %s", f.loop.n.ID, f.call.path)
	}
	return fmt.Sprintf("call of %q at %s", f.graph.g.ID, f.path)
}

func (c *compiled) node(id string) *cnode {
	n := c.g.byID[id]
	if n == nil {
		return nil
	}
	return &c.nodes[n.index]
}

// resolveCall returns the compiled graph a sub-graph node calls.
func (e *Engine) resolveCall(cn *cnode) (*compiled, error) {
	if cn.subGraph != nil {
		return e.prepare(cn.subGraph)
	}
	return e.lookup(cn.subID)
}
