package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"
)

// AppendJSON appends the JSON encoding of r to dst (one object, no newline) and
// returns the extended buffer. It writes the same fields as encoding/json with the
// struct tags of Record, in the same order, without reflection, but for the path,
// which it leaves out when it equals the graph id (the records of a root graph);
// Record.UnmarshalJSON puts it back. Time is written in UTC with nanoseconds. HTML
// characters are not escaped, as with json.Encoder.SetEscapeHTML(false). Attrs, if
// any, go through encoding/json. To encode many records, an Encoder is faster.
func (r *Record) AppendJSON(dst []byte) []byte {
	var e Encoder
	return e.Append(dst, r)
}

// Encoder appends records as JSON (see Record.AppendJSON), remembering the formatted
// date and time of the last second it wrote, which consecutive records share. The
// zero value is ready to use; an Encoder is not safe for concurrent use.
type Encoder struct {
	secs int64 // unix seconds of date, +1 (0: none yet)
	date [19]byte

	// The last sequence number written, in decimal in seqBuf[seqAt:]: records come
	// numbered 1, 2, 3..., so the next one is mostly a digit incremented in place.
	seq    int64
	seqBuf [20]byte
	seqAt  int

	// The encoded instance, run, branch and agent of the last record: the node
	// records of a branch of a run share them.
	instance, run, branch, agent string
	ids                          []byte
	idsOK                        bool

	// The encoded graph and path, and the node fields, of the last record: a run's
	// records share the first, a node's STARTED and terminal records the second.
	graph, path             string
	where                   []byte
	whereOK                 bool
	nodeID, nodeType, title string
	node                    []byte
	nodeOK                  bool

	// The encoded type of the last node: the few type names recur.
	typ    string
	typEnc []byte
}

// Append appends the JSON encoding of r to dst and returns the extended buffer.
func (e *Encoder) Append(dst []byte, r *Record) []byte {
	dst = append(dst, `{"seq":`...)
	dst = e.appendSeq(dst, r.Seq)
	dst = append(dst, `,"time":"`...)
	dst = e.appendTime(dst, r.Time)
	dst = appendStatus(dst, r.Status)
	dst = e.appendIdent(dst, r, true)
	return appendTail(dst, r)
}

// TimeLen is the length of a record time as Append writes it for the years 1970 to
// 9999: "2006-01-02T15:04:05.000000000Z".
const TimeLen = 30

// Spans locates parts of a record encoded by AppendUntimed, as offsets in the buffer.
type Spans struct {
	// Time is where the TimeLen bytes of the time placeholder begin.
	Time int
	// Ident is the range of the identity fields (graph, path, node, type, title,
	// instance, run, branch, agent), which a node's STARTED and terminal records share.
	Ident [2]int
}

// AppendUntimed appends r as Append does but with a placeholder of TimeLen bytes (the
// Unix epoch) instead of r.Time, for PutTime to fill in once the time is known. If
// ident is not nil, it is written as r's identity fields: it must be the Spans.Ident
// bytes of an earlier record with the same GraphID, Path, NodeID, NodeType, Title,
// InstanceID, RunID, BranchID and Agent (it may lie in dst).
func (e *Encoder) AppendUntimed(dst []byte, r *Record, ident []byte) ([]byte, Spans) {
	var sp Spans
	dst = append(dst, `{"seq":`...)
	dst = e.appendSeq(dst, r.Seq)
	sp.Time = len(dst) + len(`,"time":"`)
	// The time placeholder and the status in one piece: fewer appends.
	switch r.Status {
	case Started:
		dst = append(dst, `,"time":"`+untimed+`","status":"STARTED"`...)
	case Completed:
		dst = append(dst, `,"time":"`+untimed+`","status":"COMPLETED"`...)
	default:
		dst = append(dst, `,"time":"`+untimed...)
		dst = appendStatus(dst, r.Status)
	}
	sp.Ident[0] = len(dst)
	if ident != nil {
		dst = append(dst, ident...)
	} else {
		dst = e.appendIdent(dst, r, false)
	}
	sp.Ident[1] = len(dst)
	return appendTail(dst, r), sp
}

// untimed is the time placeholder of AppendUntimed.
const untimed = "1970-01-01T00:00:00.000000000Z"

// appendSeq appends seq in decimal. When it follows the last one written, it
// increments that one's digits rather than formatting it anew.
func (e *Encoder) appendSeq(dst []byte, seq int64) []byte {
	if seq <= 0 {
		e.seqAt = 0
		return appendInt(dst, seq)
	}
	b := &e.seqBuf
	if e.seqAt == 0 || seq != e.seq+1 {
		e.seqAt = putUint(b, uint64(seq))
	} else {
		i := len(b) - 1
		for i >= e.seqAt && b[i] == '9' {
			b[i] = '0'
			i--
		}
		if i < e.seqAt { // 9...9 became 10...0 (never past 19 digits: seq is an int64)
			e.seqAt--
			i = e.seqAt
			b[i] = '0'
		}
		b[i]++
	}
	e.seq = seq
	return append(dst, b[e.seqAt:]...)
}

func appendStatus(dst []byte, s Status) []byte {
	switch s {
	case Started:
		return append(dst, `","status":"STARTED"`...)
	case Completed:
		return append(dst, `","status":"COMPLETED"`...)
	}
	dst = append(dst, `","status":`...)
	return AppendJSONString(dst, string(s))
}

// appendIdent appends the identity fields, from the caches where r shares them with
// the previous record. The node fields as a whole are cached only if cacheNode
// (AppendUntimed's callers copy a node's identity from its STARTED record instead).
func (e *Encoder) appendIdent(dst []byte, r *Record, cacheNode bool) []byte {
	if !e.whereOK || r.GraphID != e.graph || r.Path != e.path {
		e.graph, e.path, e.whereOK = r.GraphID, r.Path, true
		e.where = append(e.where[:0], `,"graph":`...)
		e.where = AppendJSONString(e.where, r.GraphID)
		if r.Path != r.GraphID {
			e.where = append(e.where, `,"path":`...)
			e.where = AppendJSONString(e.where, r.Path)
		}
	}
	dst = append(dst, e.where...)
	switch {
	case !cacheNode:
		dst = e.appendNode(dst, r)
	case !e.nodeOK || r.NodeID != e.nodeID || r.NodeType != e.nodeType || r.Title != e.title:
		e.nodeID, e.nodeType, e.title, e.nodeOK = r.NodeID, r.NodeType, r.Title, true
		e.node = e.appendNode(e.node[:0], r)
		fallthrough
	default:
		dst = append(dst, e.node...)
	}
	if !e.idsOK || r.InstanceID != e.instance || r.RunID != e.run || r.BranchID != e.branch || r.Agent != e.agent {
		e.instance, e.run, e.branch, e.agent, e.idsOK = r.InstanceID, r.RunID, r.BranchID, r.Agent, true
		e.ids = append(e.ids[:0], `,"instance":`...)
		e.ids = AppendJSONString(e.ids, r.InstanceID)
		e.ids = append(e.ids, `,"run":`...)
		e.ids = AppendJSONString(e.ids, r.RunID)
		if r.BranchID != "" {
			e.ids = append(e.ids, `,"branch":`...)
			e.ids = AppendJSONString(e.ids, r.BranchID)
		}
		if r.Agent != "" {
			e.ids = append(e.ids, `,"agent":`...)
			e.ids = AppendJSONString(e.ids, r.Agent)
		}
	}
	return append(dst, e.ids...)
}

func (e *Encoder) appendNode(dst []byte, r *Record) []byte {
	if r.NodeID != "" {
		dst = append(dst, `,"node":`...)
		dst = AppendJSONString(dst, r.NodeID)
	}
	if r.NodeType != "" {
		if r.NodeType != e.typ || e.typEnc == nil {
			e.typ = r.NodeType
			e.typEnc = AppendJSONString(append(e.typEnc[:0], `,"type":`...), r.NodeType)
		}
		dst = append(dst, e.typEnc...)
	}
	if r.Title != "" {
		dst = append(dst, `,"title":`...)
		dst = AppendJSONString(dst, r.Title)
	}
	return dst
}

// appendTail appends the fields that follow the identity fields.
func appendTail(dst []byte, r *Record) []byte {
	if r.Step != 0 {
		dst = append(dst, `,"step":`...)
		dst = appendInt(dst, int64(r.Step))
	}
	if r.Attempt != 0 {
		dst = append(dst, `,"attempt":`...)
		dst = appendInt(dst, int64(r.Attempt))
	}
	if r.Duration != 0 {
		dst = append(dst, `,"duration_ns":`...)
		dst = appendInt(dst, int64(r.Duration))
	}
	if e := r.Error; e != nil {
		dst = append(dst, `,"error":{"type":`...)
		dst = AppendJSONString(dst, e.Type)
		dst = append(dst, `,"code":`...)
		dst = AppendJSONString(dst, e.Code)
		dst = append(dst, `,"message":`...)
		dst = AppendJSONString(dst, e.Message)
		dst = append(dst, '}')
	}
	if r.Reason != "" {
		dst = append(dst, `,"reason":`...)
		dst = AppendJSONString(dst, r.Reason)
	}
	if r.Arrivals != 0 {
		dst = append(dst, `,"arrivals":`...)
		dst = appendInt(dst, int64(r.Arrivals))
	}
	if r.Retrying {
		dst = append(dst, `,"retrying":true`...)
	}
	if r.Recovered {
		dst = append(dst, `,"recovered":true`...)
	}
	if r.Goto != "" {
		dst = append(dst, `,"goto":`...)
		dst = AppendJSONString(dst, r.Goto)
	}
	if r.Resumed {
		dst = append(dst, `,"resumed":true`...)
	}
	if len(r.Attrs) > 0 {
		dst = append(dst, `,"attrs":`...)
		dst = appendAttrs(dst, r.Attrs)
	}
	return append(dst, '}')
}

// appendAttrs appends attrs as encoding/json encodes them, with HTML characters left
// alone as AppendJSONString leaves them in the other fields (json.Marshal would
// escape them here only).
func appendAttrs(dst []byte, attrs map[string]any) []byte {
	n := len(dst)
	b := bytes.NewBuffer(dst)
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(attrs); err != nil {
		// An attribute that cannot be encoded must lose neither the record nor the
		// other attributes: each is encoded on its own, in encoding/json's key order,
		// and the ones that fail are replaced by their error.
		b.Truncate(n)
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(attrs)) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(AppendJSONString(nil, k))
			b.WriteByte(':')
			m := b.Len()
			if err := enc.Encode(attrs[k]); err != nil {
				b.Truncate(m)
				b.WriteString(`{"!error":`)
				b.Write(AppendJSONString(nil, err.Error()))
				b.WriteByte('}')
			} else {
				b.Truncate(b.Len() - 1) // Encode's newline
			}
		}
		b.WriteByte('}')
		return b.Bytes()
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'})
}

// MarshalJSON encodes the record as AppendJSON does.
func (r Record) MarshalJSON() ([]byte, error) {
	return r.AppendJSON(make([]byte, 0, 256)), nil
}

// UnmarshalJSON decodes a record as encoding/json decodes the fields of Record (JSON
// null changes nothing); a record without a "path" gets its graph id as path
// (AppendJSON leaves out a path equal to the graph id). Audit files written before
// paths were left out decode the same.
func (r *Record) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		return nil // a no-op, as for a struct: the path below must not move either
	}
	type fields Record // without the methods, so encoding/json decodes it field by field
	w := struct {
		*fields
		Path *string `json:"path"` // shadows fields.Path, to tell an absent path from ""
	}{fields: (*fields)(r)}
	if err := json.Unmarshal(b, &w); err != nil {
		// Name Record and its fields, not the wrapper above.
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Type == reflect.TypeOf(w) {
				te.Type = reflect.TypeFor[Record]()
			}
			if te.Field != "" {
				te.Struct, te.Field = "Record", strings.TrimPrefix(te.Field, "fields.")
			}
		}
		return err
	}
	if w.Path != nil {
		r.Path = *w.Path
	} else {
		r.Path = r.GraphID
	}
	return nil
}

const hexDigits = "0123456789abcdef"

// safe marks the ASCII bytes that need no escaping in a JSON string.
var safe = func() (t [utf8.RuneSelf]bool) {
	for i := 0x20; i < utf8.RuneSelf; i++ {
		t[i] = i != '"' && i != '\\'
	}
	return t
}()

// AppendJSONString appends s to dst as a JSON string, escaped as encoding/json does
// (invalid UTF-8 becomes U+FFFD, U+2028 and U+2029 are escaped) but leaving HTML
// characters alone. Other packages' hand-written encoders share it.
func AppendJSONString(dst []byte, s string) []byte {
	n := len(dst)
	if len(s) <= 16 {
		// Ids and names are short: check and copy them a byte at a time, which costs
		// less than a memmove call.
		if cap(dst)-n < len(s)+2 {
			dst = slices.Grow(dst, len(s)+2)
		}
		out := dst[n : n+len(s)+2]
		out[0] = '"'
		i := 0
		for ; i < len(s) && s[i] < utf8.RuneSelf && safe[s[i]]; i++ {
			out[i+1] = s[i]
		}
		if i == len(s) {
			out[len(out)-1] = '"'
			return dst[:n+len(out)]
		}
	} else if !needsEscape(s) {
		if cap(dst)-n < len(s)+2 {
			dst = slices.Grow(dst, len(s)+2)
		}
		dst = dst[:n+len(s)+2]
		dst[n] = '"'
		copy(dst[n+1:], s)
		dst[n+1+len(s)] = '"'
		return dst
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// needsEscape reports whether s has a byte that appendString must look at: a control
// character, '"', '\\' or a non-ASCII byte. It tests eight bytes at a time.
func needsEscape(s string) bool {
	const (
		lo = 0x0101010101010101
		hi = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(s); i += 8 {
		v := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		q := v ^ (lo * '"')
		bs := v ^ (lo * '\\')
		// A byte is zero in x iff (x - lo) & ^x & hi has its high bit; below 0x20 the
		// same with lo*0x20. Non-ASCII bytes have their high bit set in v itself.
		if (v|(v-lo*0x20)&^v|(q-lo)&^q|(bs-lo)&^bs)&hi != 0 {
			return true
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || !safe[c] {
			return true
		}
	}
	return false
}
