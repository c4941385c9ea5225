package flow

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/flowteam/flowteam/internal/jsonvars"
)

// Hash returns a hex SHA-256 of the graph's definition: ids, types, titles, conditions,
// tasks, meta and links with their priorities, in definition order. Two graphs with the
// same hash route the same way, so a stored frontier may be resumed on either. A Go task
// component counts by its type name. It is computed once per graph.
func (g *Graph) Hash() string {
	g.hashOnce.Do(func() { g.hash = g.definitionHash() })
	return g.hash
}

func (g *Graph) definitionHash() string {
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
	Split string `json:"split,omitempty"` // id of the split node
	Join  string `json:"join,omitempty"`  // id of the join node, once a branch arrived there
	// Arrived is, for a split, the branches that arrived at its join; for a call made
	// by a join's task, the branches that join waited for, which the node reports
	// again when it runs on resume (absent in frontiers written before calls kept
	// them: the node then reports none).
	Arrived int    `json:"arrived,omitempty"`
	Policy  string `json:"policy,omitempty"` // branch policy of a parallel split (ParseBranchPolicy)
	// Failed lists the branches a ContinueOnError split withdrew because they failed,
	// in the order they failed: if no branch reaches the join, the split fails with
	// all_branches_failed, joining these errors.
	Failed []FailedBranch `json:"failed,omitempty"`
	// loop
	Loop    string `json:"loop,omitempty"`    // id of the opening loop node
	Items   []any  `json:"items,omitempty"`   // the items the loop iterates over (integers decode as int64: UnmarshalJSON)
	Index   int    `json:"index,omitempty"`   // position of the current item in Items
	Closing string `json:"closing,omitempty"` // id of the closing loop node, once reached; Loop's id once an error policy's goto left the loop (no closing node then)
	// call
	Graph  string `json:"graphId,omitempty"` // id of the called graph
	Path   string `json:"path,omitempty"`    // the call path (as in FlowTrace)
	Node   string `json:"node,omitempty"`    // the calling node in the caller's graph; empty for the root call
	Caller int    `json:"caller"`            // the caller's call frame; -1 for the root call
}

// UnmarshalJSON decodes a frame as encoding/json does, except that a number in Items
// is an int64 when it is an integral literal that fits, else a float64 (as a session
// snapshot restores them), so a loop over integers resumes with integers (`it == 3`
// and typed getters behave as before the restart, and an integer beyond float64's
// precision keeps its value); a number beyond float64 is an error.
//
// encoding/json passes no decoder options to an UnmarshalJSON method, so a caller's
// Decoder.DisallowUnknownFields does not reach the fields of a frame: an unknown key
// inside a frame is ignored, as a lenient decode would. No decoder in this module
// relies on it (package session reads frontiers with its own strict codec, and
// RestoreFrontier checks every frame it is given); a caller that must reject unknown
// frame fields checks them itself.
func (fs *FrameState) UnmarshalJSON(data []byte) error {
	type plain FrameState // the same fields, without this method
	return jsonvars.Unmarshal(data, (*plain)(fs))
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
		fs.Graph, fs.Path, fs.Arrived = fr.graph.g.ID, fr.path, fr.arrived
		if fr.node != nil {
			fs.Node = fr.node.n.ID
		}
	}
	index[fr] = len(st.Frames)
	st.Frames = append(st.Frames, fs)
	return index[fr]
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
