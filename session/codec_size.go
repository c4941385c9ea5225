package session

import (
	"github.com/flowteam/flowteam/flow"
)

// The encoder's buffer is sized from an estimate of the encoding: grown by append
// from a small start, a large snapshot is copied at every growth (by 1.25x once it
// is large), and a save of 1 MB allocated about 5 MB. The estimate walks what the
// encoder will write without writing it; it counts strings as if nothing needed
// escaping and values encoding/json marshals at a guess, so it may fall short, and
// the buffer then grows as before.

// sizeSlack is the estimate's margin over the counted bytes (1/sizeSlack of them),
// for the escapes and the numbers longer than guessed.
const sizeSlack = 16

// sizeHintDepth bounds the nesting sizeHint walks into (a cycle fails the encoding
// anyway); deeper values are counted at a guess.
const sizeHintDepth = 32

// sizeHint returns about how many bytes encoding s takes.
func sizeHint(s *Snapshot) int {
	n := 320 + len(s.Instance) + len(s.Graph) + len(s.Hash) + len(s.Status) + len(s.RunID) + len(s.Reason)
	n += stringsSize(s.Sources) + stringsSize(s.Dropped) + stringsSize(s.Redacted)
	for k, v := range s.Vars {
		n += len(k) + 4 + valueSize(v, 0)
	}
	if f := s.Frontier; f != nil {
		n += frontierSize(f)
	}
	for k, r := range s.Trace.Last {
		n += 2*len(k) + len(r.GraphID) + len(r.NodeID) + len(r.NodeType) + len(r.Title) + 100
	}
	for i := range s.Errors {
		r := &s.Errors[i]
		n += len(r.Code) + len(r.Node) + len(r.Graph) + len(r.Path) + len(r.Branch) + len(r.Message) + len(r.Type) + len(r.Severity) + 120
	}
	n += (len(s.Sealed)+2)/3*4 + 12
	return n + n/sizeSlack
}

func frontierSize(f *flow.FrontierState) int {
	n := 40 + len(f.Graph)
	for i := range f.Frames {
		fr := &f.Frames[i]
		n += 200 + len(fr.Kind) + len(fr.Branch) + len(fr.Split) + len(fr.Join) + len(fr.Policy) +
			len(fr.Loop) + len(fr.Closing) + len(fr.Graph) + len(fr.Path) + len(fr.Node)
		for j := range fr.Failed {
			b := &fr.Failed[j]
			n += 80 + len(b.Node) + len(b.Branch) + structuredSize(&b.Error)
		}
		if len(fr.Items) > 0 {
			n += valueSize(fr.Items, 0)
		}
	}
	for _, t := range f.Tokens {
		n += 70 + len(t.Node) + len(t.Mode) + len(t.Branch)
		if t.Error != nil {
			n += 10 + structuredSize(t.Error)
		}
	}
	return n
}

func structuredSize(se *flow.StructuredError) int {
	return 32 + len(se.Type) + len(se.Code) + len(se.Message)
}

func stringsSize(ss []string) int {
	n := 16
	for _, s := range ss {
		n += len(s) + 3
	}
	return n
}

// valueSize returns about how many bytes appendValue writes for v.
func valueSize(v any, depth int) int {
	if depth > sizeHintDepth {
		return 16
	}
	switch t := v.(type) {
	case nil:
		return 4
	case string:
		return len(t) + 2
	case bool:
		return 5
	case int, int64, int32, uint, uint64, uint32, float64, float32:
		return 20
	case int16, int8, uint16, uint8:
		return 6
	case []any:
		n := 2
		for _, x := range t {
			n += 1 + valueSize(x, depth+1)
		}
		return n
	case map[string]any:
		n := 2
		for k, x := range t {
			n += len(k) + 4 + valueSize(x, depth+1)
		}
		return n
	case []string:
		return stringsSize(t)
	case map[string]string:
		n := 2
		for k, x := range t {
			n += len(k) + len(x) + 6
		}
		return n
	}
	return 64 // encoding/json's business: unknown without marshalling
}
