package session

import (
	"encoding/base64"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/trace"
)

// The fields of a snapshot, as the decoder reads them. Every reader rejects unknown
// fields, so a snapshot written by a newer build is refused rather than half-read.

// vars parses the variables object (null is none).
func (d *decoder) vars(dst *map[string]any) error {
	if isNull, err := d.null(); isNull || err != nil {
		*dst = nil
		return err
	}
	if b, err := d.next(); err != nil {
		return err
	} else if b != '{' {
		return d.errorf("vars: want an object, found %q", b)
	}
	v, err := d.value(-1) // the values are at depth 0, as the encoder counts
	if err != nil {
		return err
	}
	*dst = v.(map[string]any)
	return nil
}

// snapshot parses a whole snapshot into s.
func (d *decoder) snapshot(s *Snapshot) error {
	err := d.object(true, func(key []byte) error {
		switch string(key) {
		case "format":
			if err := d.intField(&s.Format); err != nil {
				return err
			}
			if s.Format != FormatVersion {
				if b, err := d.next(); err == nil && b != ',' && b != '}' {
					return nil // not a format at all ("01"): the object reports the syntax error
				}
				return formatErr(s.Format)
			}
			return nil
		case "instance":
			return d.str(&s.Instance)
		case "graph":
			return d.str(&s.Graph)
		case "hash":
			return d.str(&s.Hash)
		case "status":
			return d.str((*string)(&s.Status))
		case "version":
			var err error
			s.Version, err = d.int()
			return err
		case "created":
			return d.time(&s.Created)
		case "updated":
			return d.time(&s.Updated)
		case "expires":
			return d.time(&s.Expires)
		case "sources":
			return d.strings(&s.Sources)
		case "sealed":
			if isNull, err := d.null(); isNull || err != nil {
				return err // absent, as null is for every optional field: not sealed
			}
			var enc string
			if err := d.str(&enc); err != nil {
				return err
			}
			b, err := base64.StdEncoding.DecodeString(enc)
			if err != nil {
				return d.errorf("sealed: %v", err)
			}
			s.Sealed = b
			return nil
		}
		return d.bodyField(s, key)
	})
	if err != nil {
		return err
	}
	d.ws()
	if d.pos != len(d.data) {
		return d.errorf("data after the snapshot")
	}
	return nil
}

// bodyField parses one field of the body (shared with sealed bodies).
func (d *decoder) bodyField(s *Snapshot, key []byte) error {
	switch string(key) {
	case "runId":
		return d.str(&s.RunID)
	case "vars":
		return d.vars(&s.Vars)
	case "frontier":
		if isNull, err := d.null(); isNull || err != nil {
			return err
		}
		s.Frontier = new(flow.FrontierState)
		return d.frontier(s.Frontier)
	case "trace":
		return d.trace(&s.Trace)
	case "reason":
		return d.str(&s.Reason)
	case "errors":
		if isNull, err := d.null(); isNull || err != nil {
			return err
		}
		s.Errors = []ErrorRecord{}
		return d.array(func() error {
			s.Errors = append(s.Errors, ErrorRecord{})
			return d.errorRecord(&s.Errors[len(s.Errors)-1])
		})
	case "dropped":
		return d.strings(&s.Dropped)
	case "redacted":
		return d.strings(&s.Redacted)
	case "meta":
		return d.strings(&s.Meta)
	}
	return d.errorf("unknown field")
}

func (d *decoder) frontier(f *flow.FrontierState) error {
	return d.object(true, func(key []byte) error {
		switch string(key) {
		case "graph":
			return d.str(&f.Graph)
		case "frames":
			if isNull, err := d.null(); isNull || err != nil {
				return err
			}
			f.Frames = []flow.FrameState{}
			return d.array(func() error {
				f.Frames = append(f.Frames, flow.FrameState{})
				return d.frame(&f.Frames[len(f.Frames)-1])
			})
		case "tokens":
			if isNull, err := d.null(); isNull || err != nil {
				return err
			}
			f.Tokens = []flow.TokenState{}
			return d.array(func() error {
				f.Tokens = append(f.Tokens, flow.TokenState{})
				t := &f.Tokens[len(f.Tokens)-1]
				return d.object(true, func(key []byte) error {
					switch string(key) {
					case "node":
						return d.str(&t.Node)
					case "mode":
						return d.str(&t.Mode)
					case "frame":
						return d.intField(&t.Frame)
					case "branch":
						return d.str(&t.Branch)
					case "arrivals":
						return d.intField(&t.Arrivals)
					case "error":
						if isNull, err := d.null(); isNull || err != nil {
							return err
						}
						t.Error = new(flow.StructuredError)
						return d.structured(t.Error)
					}
					return d.errorf("unknown field")
				})
			})
		}
		return d.errorf("unknown field")
	})
}

func (d *decoder) frame(f *flow.FrameState) error {
	return d.object(true, func(key []byte) error {
		switch string(key) {
		case "kind":
			return d.str(&f.Kind)
		case "parent":
			return d.intField(&f.Parent)
		case "call":
			return d.intField(&f.Call)
		case "pending":
			return d.intField(&f.Pending)
		case "branch":
			return d.str(&f.Branch)
		case "split":
			return d.str(&f.Split)
		case "join":
			return d.str(&f.Join)
		case "arrived":
			return d.intField(&f.Arrived)
		case "policy":
			return d.str(&f.Policy)
		case "failed":
			if isNull, err := d.null(); isNull || err != nil {
				return err
			}
			f.Failed = nil // an empty list reads as none, as the encoder omits it
			return d.array(func() error {
				f.Failed = append(f.Failed, flow.FailedBranch{})
				b := &f.Failed[len(f.Failed)-1]
				return d.object(true, func(key []byte) error {
					switch string(key) {
					case "node":
						return d.str(&b.Node)
					case "branch":
						return d.str(&b.Branch)
					case "error":
						if isNull, err := d.null(); isNull || err != nil {
							return err
						}
						return d.structured(&b.Error)
					}
					return d.errorf("unknown field")
				})
			})
		case "loop":
			return d.str(&f.Loop)
		case "items":
			if isNull, err := d.null(); isNull || err != nil {
				return err
			}
			if b, err := d.next(); err != nil {
				return err
			} else if b != '[' {
				return d.errorf("loop items: want an array, found %q", b)
			}
			v, err := d.value(0)
			if err == nil {
				f.Items = v.([]any)
			}
			return err
		case "index":
			return d.intField(&f.Index)
		case "closing":
			return d.str(&f.Closing)
		case "graphId":
			return d.str(&f.Graph)
		case "path":
			return d.str(&f.Path)
		case "node":
			return d.str(&f.Node)
		case "caller":
			return d.intField(&f.Caller)
		}
		return d.errorf("unknown field")
	})
}

// structured reads a flow.StructuredError into se.
func (d *decoder) structured(se *flow.StructuredError) error {
	return d.object(true, func(key []byte) error {
		switch string(key) {
		case "type":
			return d.str(&se.Type)
		case "code":
			return d.str(&se.Code)
		case "message":
			return d.str(&se.Message)
		}
		return d.errorf("unknown field")
	})
}

func (d *decoder) trace(t *trace.FlowTrace) error {
	if isNull, err := d.null(); isNull || err != nil {
		return err
	}
	return d.object(true, func(key []byte) error {
		if string(key) != "last" {
			return d.errorf("unknown field")
		}
		if isNull, err := d.null(); isNull || err != nil {
			return err
		}
		t.Last = map[string]trace.NodeRecord{}
		return d.object(false, func(path []byte) error {
			if _, dup := t.Last[string(path)]; dup {
				return d.errorf("trace: duplicate path %q", path)
			}
			p := d.makeString(path)
			var r trace.NodeRecord
			err := d.object(true, func(key []byte) error {
				switch string(key) {
				case "path":
					return d.str(&r.Path)
				case "graph":
					return d.str(&r.GraphID)
				case "node":
					return d.str(&r.NodeID)
				case "type":
					return d.str(&r.NodeType)
				case "title":
					return d.str(&r.Title)
				case "time":
					return d.time(&r.Time)
				}
				return d.errorf("unknown field")
			})
			t.Last[p] = r
			return err
		})
	})
}

func (d *decoder) errorRecord(r *ErrorRecord) error {
	return d.object(true, func(key []byte) error {
		switch string(key) {
		case "code":
			return d.str(&r.Code)
		case "node":
			return d.str(&r.Node)
		case "graph":
			return d.str(&r.Graph)
		case "path":
			return d.str(&r.Path)
		case "branch":
			return d.str(&r.Branch)
		case "step":
			return d.intField(&r.Step)
		case "message":
			return d.str(&r.Message)
		case "type":
			return d.str(&r.Type)
		case "severity":
			return d.str(&r.Severity)
		}
		return d.errorf("unknown field")
	})
}
