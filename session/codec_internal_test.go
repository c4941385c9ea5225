package session

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/trace"
)

// normalizeStd converts encoding/json's UseNumber output the way the codec reads
// numbers, so both parsers can be compared.
func normalizeStd(v any) any {
	switch t := v.(type) {
	case json.Number:
		if !strings.ContainsAny(string(t), ".eE") {
			if i, err := t.Int64(); err == nil {
				return i
			}
		}
		f, _ := t.Float64()
		return f
	case map[string]any:
		for k, e := range t {
			t[k] = normalizeStd(e)
		}
	case []any:
		for i, e := range t {
			t[i] = normalizeStd(e)
		}
	}
	return v
}

func stdDecode(data []byte) (any, error) {
	if !json.Valid(data) {
		return nil, assert.AnError
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return normalizeStd(v), nil
}

func codecDecode(data []byte) (any, error) {
	d := decoder{data: data}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if d.ws(); d.pos != len(data) {
		return nil, d.errorf("trailing data")
	}
	return v, nil
}

// FuzzValueParser checks the codec's JSON parser against encoding/json: both accept
// the same documents (the codec also rejects duplicate keys, out-of-range numbers and
// bytes that are not valid UTF-8) and read the same values.
func FuzzValueParser(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,"x",null,true,false,{"b":-0}]}`, `"\u00e9\ud83d\ude80\n"`, `1e400`, `-12345678901234567890`,
		`{"a":1,"a":2}`, `"\xff"`, `[1,]`, `0.5e-3`, `"\ud800"`, `{"":{}}`, ` [ ] `, `01`, `"a` + "\x01" + `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, werr := stdDecode(data)
		got, gerr := codecDecode(data)
		if gerr != nil {
			badUTF8 := strings.Contains(gerr.Error(), "invalid UTF-8") && !utf8.Valid(data)
			if werr == nil && !strings.Contains(gerr.Error(), "duplicate") && !strings.Contains(gerr.Error(), "out of range") &&
				!strings.Contains(gerr.Error(), "nested more than") && !badUTF8 {
				t.Fatalf("codec rejects what encoding/json accepts: %v\n%q", gerr, data)
			}
			return
		}
		if werr != nil {
			t.Fatalf("codec accepts what encoding/json rejects (%v): %q", werr, data)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("different values for %q:\nencoding/json %#v\ncodec         %#v", data, want, got)
		}
	})
}

// TestEncoderMatchesEncodingJSON encodes values with the codec and with json.Marshal
// and reads both back with encoding/json: the same values.
func TestEncoderMatchesEncodingJSON(t *testing.T) {
	values := []any{
		nil, true, false, "", "plain", "quote\" backslash\\ slash/", "\n\r\t\b\f\x00\x1f", "<html>&", "é日本🚀",
		"\u2028\u2029", "bad \xff utf8 \xc3", 0, -1, math.MaxInt64, math.MinInt64, uint64(math.MaxUint64), int8(-8), uint8(200),
		0.0, -0.0, 1.5, 1e20, 1e21, 1e-6, 1e-7, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64, float32(0.1), float32(1e30),
		[]any{1, "a", []any{}}, map[string]any{"b": 1, "a": map[string]any{"z": nil}}, []string{"x", "y"}, []string(nil),
		map[string]string{"k": "v"}, time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), struct {
			A int `json:"a"`
		}{7}, []int{1, 2}, json.Number("12.50"),
	}
	for _, v := range values {
		got, err := appendValue(nil, v, 0)
		require.NoError(t, err, "%#v", v)
		want, err := json.Marshal(v)
		require.NoError(t, err)
		var a, b any
		require.NoError(t, json.Unmarshal(got, &a), "codec wrote %s for %#v", got, v)
		require.NoError(t, json.Unmarshal(want, &b))
		assert.Equal(t, b, a, "%#v: codec %s, encoding/json %s", v, got, want)
	}
}

// fill sets every field of the struct v points to to a non-zero value.
func fill(t *testing.T, v reflect.Value, n *int) {
	for i := range v.NumField() {
		f := v.Field(i)
		*n++
		switch f.Kind() {
		case reflect.String:
			f.SetString("s" + strings.Repeat("x", *n))
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(*n))
		case reflect.Slice:
			switch f.Type().Elem().Kind() {
			case reflect.Interface:
				f.Set(reflect.ValueOf([]any{int64(*n), "item"}))
			case reflect.Struct:
				l := reflect.MakeSlice(f.Type(), 2, 2) // two elements: the codec's separators
				for j := range l.Len() {
					fill(t, l.Index(j), n)
				}
				f.Set(l)
			default:
				t.Fatalf("field %s: unhandled slice", v.Type().Field(i).Name)
			}
		case reflect.Pointer:
			if f.Type().Elem().Kind() != reflect.Struct {
				t.Fatalf("field %s: unhandled pointer", v.Type().Field(i).Name)
			}
			f.Set(reflect.New(f.Type().Elem()))
			fill(t, f.Elem(), n)
		case reflect.Struct:
			if f.Type() == reflect.TypeOf(time.Time{}) {
				f.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, *n, time.UTC)))
			} else {
				fill(t, f, n)
			}
		default:
			t.Fatalf("field %s: unhandled kind %s: teach the codec and this test", v.Type().Field(i).Name, f.Kind())
		}
	}
}

// TestCodecCoversFlowTypes fails when flow adds a field to the frontier or trace types
// that the hand-written codec does not write and read.
func TestCodecCoversFlowTypes(t *testing.T) {
	n := 0
	var fs flow.FrameState
	fill(t, reflect.ValueOf(&fs).Elem(), &n)
	var ts flow.TokenState
	fill(t, reflect.ValueOf(&ts).Elem(), &n)
	var rec trace.NodeRecord
	fill(t, reflect.ValueOf(&rec).Elem(), &n)
	var er ErrorRecord
	fill(t, reflect.ValueOf(&er).Elem(), &n)
	assert.Equal(t, 3, reflect.TypeOf(flow.FrontierState{}).NumField(), "FrontierState changed: update the codec")
	assert.Equal(t, 1, reflect.TypeOf(trace.FlowTrace{}).NumField(), "FlowTrace changed: update the codec")

	s := &Snapshot{Format: FormatVersion, Instance: "i", Graph: "g", Hash: strings.Repeat("a", 64), Status: StatusSuspended,
		Version: 1, Created: time.Unix(1, 0).UTC(), Updated: time.Unix(2, 0).UTC(),
		Frontier: &flow.FrontierState{Graph: "g", Frames: []flow.FrameState{fs}, Tokens: []flow.TokenState{ts}},
		Trace:    trace.FlowTrace{Last: map[string]trace.NodeRecord{"p": rec}}, Errors: []ErrorRecord{er}}
	data, err := Encode(s)
	require.NoError(t, err)
	got, err := Decode(data)
	require.NoError(t, err)
	assert.Equal(t, s, got, "every field survives the codec")
	cloned, err := canonicalClone(s)
	require.NoError(t, err)
	assert.Equal(t, got, cloned, "and the memory store's clone")

	// And encoding/json reads the codec's frontier and trace as flow declares them.
	var std struct {
		Frontier flow.FrontierState `json:"frontier"`
		Trace    trace.FlowTrace    `json:"trace"`
		Errors   []ErrorRecord      `json:"errors"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&std))
	assert.Equal(t, json.Number(fmt.Sprint(fs.Items[0])), std.Frontier.Frames[0].Items[0])
	std.Frontier.Frames[0].Items[0] = fs.Items[0]
	assert.Equal(t, *s.Frontier, std.Frontier)
	assert.Equal(t, s.Trace, std.Trace)
	assert.Equal(t, s.Errors, std.Errors)
}

// genValue builds a value of many Go types from fuzz input.
func genValue(data []byte, pos *int, depth int) any {
	next := func() byte {
		if *pos >= len(data) {
			return 0
		}
		b := data[*pos]
		*pos++
		return b
	}
	str := func() string {
		n := int(next() % 8)
		b := make([]byte, 0, n)
		for range n {
			b = append(b, next())
		}
		return string(b)
	}
	num := func() uint64 {
		var u uint64
		for range 8 {
			u = u<<8 | uint64(next())
		}
		return u
	}
	switch k := next() % 22; {
	case k == 0:
		return nil
	case k == 1:
		return next()%2 == 0
	case k == 2:
		return str()
	case k == 3:
		return int(int64(num()))
	case k == 4:
		return num()
	case k == 5:
		return math.Float64frombits(num())
	case k == 6:
		return float64(int64(num()) >> (next() % 64))
	case k == 7:
		return float32(math.Float64frombits(num()))
	case k == 8:
		return int8(next())
	case k == 9:
		return uint16(num())
	case k == 10:
		return []string{str(), str()}
	case k == 11:
		return map[string]string{str(): str()}
	case k == 12:
		return time.Unix(int64(num()%(1<<34)), int64(num()%1e9)).In(time.FixedZone("z", int(next())*60))
	case k == 13:
		return struct {
			A int    `json:"a"`
			B string `json:"b,omitempty"`
		}{int(next()), str()}
	case k == 14:
		return json.Number("1.50")
	case k == 15:
		return []int{int(next()), -1}
	case k == 16:
		return []string(nil)
	case depth > 6:
		return str()
	case k <= 18:
		n := int(next() % 4)
		l := make([]any, n)
		for i := range l {
			l[i] = genValue(data, pos, depth+1)
		}
		return l
	default:
		n := int(next() % 4)
		m := make(map[string]any, n)
		for range n {
			m[str()] = genValue(data, pos, depth+1)
		}
		return m
	}
}

// FuzzCloneMatchesCodec holds the memory store's clone to the codec: for any
// variables, canonicalClone(s) equals Decode(Encode(s)), errors included.
func FuzzCloneMatchesCodec(f *testing.F) {
	f.Add([]byte("\x05\x40\x08\x00\x00\x00\x00\x00\x00\x13\x02\x02ab\x03\x01"))
	f.Add([]byte{20, 3, 2, 'k', 0xff, 5, 0x7f, 0xf8, 0, 0, 0, 0, 0, 1, 2, 1, 0x80})
	f.Add([]byte{6, 0x43, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 60})
	f.Fuzz(func(t *testing.T, data []byte) {
		pos := 0
		s := &Snapshot{Format: FormatVersion, Instance: "i", Graph: "g", Hash: strings.Repeat("a", 64), Status: StatusSuspended,
			Version: 1, Created: time.Unix(1, 0), Updated: time.Unix(2, 0).In(time.FixedZone("x", 3600)), Vars: map[string]any{}}
		for i := 0; pos < len(data) && i < 8; i++ {
			s.Vars[fmt.Sprint("v", i)] = genValue(data, &pos, 0)
		}
		enc, eerr := Encode(s)
		cl, cerr := canonicalClone(s)
		if (eerr == nil) != (cerr == nil) {
			t.Fatalf("encode error %v, clone error %v", eerr, cerr)
		}
		if eerr != nil {
			var ue, uc *UnserializableError
			if errors.As(eerr, &ue) != errors.As(cerr, &uc) || ue != nil && !reflect.DeepEqual(ue.Names, uc.Names) {
				t.Fatalf("encode error %v, clone error %v", eerr, cerr)
			}
			return
		}
		dec, err := Decode(enc)
		if err != nil {
			t.Fatalf("decode: %v\n%s", err, enc)
		}
		if !reflect.DeepEqual(dec, cl) {
			t.Fatalf("clone differs from the codec:\ncodec %#v\nclone %#v\njson %s", dec.Vars, cl.Vars, enc)
		}
		// canonicalOwned gives the same, whatever canonical values it may reuse: the
		// clone's own or those of other variables.
		other := &Snapshot{Vars: map[string]any{}}
		rev := slices.Clone(data)
		slices.Reverse(rev)
		pos = 0
		for i := 0; pos < len(rev) && i < 8; i++ {
			other.Vars[fmt.Sprint("v", i)] = genValue(rev, &pos, 0)
		}
		hints := []*Snapshot{cl, nil}
		if oc, err := canonicalClone(other); err == nil {
			hints[1] = &Snapshot{Vars: oc.Vars}
		}
		for _, prev := range hints {
			o := *s
			o.Vars = maps.Clone(s.Vars)
			got, err := canonicalOwned(&o, prev)
			if err != nil {
				t.Fatalf("owned: %v", err)
			}
			if !reflect.DeepEqual(dec, got) {
				t.Fatalf("owned clone differs from the codec:\ncodec %#v\nclone %#v\nprev %#v", dec.Vars, got.Vars, prev)
			}
		}
	})
}

// FuzzUTCTime holds the decoder's fast path for times to time.Time.UnmarshalText:
// whatever it accepts, UnmarshalText accepts as the same time.
func FuzzUTCTime(f *testing.F) {
	for _, s := range []string{"2026-11-30T09:30:00Z", "2026-11-30T09:30:00.123456789Z", "2024-02-29T23:59:59.5Z",
		"2023-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-04-31T00:00:00Z", "0000-01-01T00:00:00Z",
		"2026-11-30T24:00:00Z", "2026-11-30T09:60:00Z", "2026-11-30T09:30:60Z", "2026-11-30T09:30:00.Z",
		"2026-11-30T09:30:00,5Z", "2026-11-30T09:30:00+01:00", "2026-11-30t09:30:00z", "+026-11-30T09:30:00Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := utcTime([]byte(s))
		var want time.Time
		err := want.UnmarshalText([]byte(s))
		if ok && (err != nil || got != want) {
			t.Fatalf("%q: fast path %v, UnmarshalText %v (%v)", s, got, want, err)
		}
		if !ok && err == nil && want.Location() == time.UTC && s == want.Format(time.RFC3339Nano) {
			t.Fatalf("%q: the fast path misses a time the encoder writes", s)
		}
	})
}

// TestSpecialBytes checks the word-at-a-time scan of strings against a byte loop.
func TestSpecialBytes(t *testing.T) {
	special := func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 || c >= 0x80 }
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte{'"', '\\', 0, 0x1f, 0x20, 0x21, 'a', 0x7f, 0x80, 0x81, 0xff, 0x22 ^ 0x80, 0x5c ^ 0x80}
	for range 200000 {
		var b [8]byte
		for i := range b {
			if r.IntN(2) == 0 {
				b[i] = alphabet[r.IntN(len(alphabet))]
			} else {
				b[i] = byte(r.IntN(256))
			}
		}
		want := 8
		for i, c := range b {
			if special(c) {
				want = i
				break
			}
		}
		m := specialBytes(binary.LittleEndian.Uint64(b[:]))
		got := 8
		if m != 0 {
			got = bits.TrailingZeros64(m) >> 3
		}
		if got != want {
			t.Fatalf("% x: first special byte at %d, scan says %d", b, want, got)
		}
	}
}

// FuzzMarshalJSONOutput gives the encoder what a MarshalJSON may write (any valid
// JSON, with any bytes inside its strings): what Encode accepts, Decode loads, and the
// memory store's clone equals it; what Encode rejects, the clone rejects too.
func FuzzMarshalJSONOutput(f *testing.F) {
	for _, s := range []string{`"a\xffb"`, `{"k\xff":1,"k\xfe":2}`, `{"a":[1,2.5,"\xc3"]}`, `[1e400]`, `"\ud800"`, `{"a":{"a":1,"a":2}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &Snapshot{Format: FormatVersion, Instance: "i", Graph: "g", Hash: strings.Repeat("a", 64), Status: StatusSuspended,
			Version: 1, Created: time.Unix(1, 0), Updated: time.Unix(2, 0), Vars: map[string]any{"v": json.RawMessage(data)}}
		enc, eerr := Encode(s)
		cl, cerr := canonicalClone(s)
		if (eerr == nil) != (cerr == nil) {
			t.Fatalf("encode error %v, clone error %v", eerr, cerr)
		}
		if eerr != nil {
			return
		}
		dec, err := Decode(enc)
		if err != nil {
			t.Fatalf("what Encode wrote does not load: %v\n%q", err, enc)
		}
		if !reflect.DeepEqual(dec, cl) {
			t.Fatalf("clone differs from the codec:\ncodec %#v\nclone %#v", dec.Vars, cl.Vars)
		}
	})
}

// FuzzReadableMatchesValue holds the encoder's check of what encoding/json wrote
// (readable) to the decoder: for valid JSON with valid UTF-8, which is all that
// reaches the check, it rejects exactly what value rejects.
func FuzzReadableMatchesValue(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,"x",null,true,false,{"b":-0}]}`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`,
		`{"\ud800":1,"\udc00":2}`, `{"\ud800":1,"\ud83d\ude80":2}`, `{"b":1,"a":{"x":1,"y":[{"x":2,"x":3}]}}`,
		`[1e400]`, `[1e308,-1e-400,0.5E+3]`, "1" + strings.Repeat("0", 308), "1" + strings.Repeat("0", 309),
		"-0." + strings.Repeat("0", 400) + "1", `"a\"b\\"`, `["\\\\",{"k\\\"":"\\\""}]`, `{"":1,"":2}`,
		strings.Repeat("[", 1001) + strings.Repeat("]", 1001), strings.Repeat("[", 999) + strings.Repeat("]", 999),
		`{"z":1,"y":2,"x":3,"y ":4}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) || !utf8.Valid(data) {
			return
		}
		data = bytes.TrimSpace(data) // encoding/json compacts what it writes
		want := (&decoder{data: data}).valueErr(1)
		d := decoder{data: data}
		got := d.readable(1)
		if (got == nil) != (want == nil) {
			t.Fatalf("readable says %v, value says %v, for %q", got, want, data)
		}
		if got == nil && d.pos != len(data) {
			t.Fatalf("readable stopped at %d of %q", d.pos, data)
		}
	})
}

// valueErr is d.value's error.
func (d *decoder) valueErr(depth int) error {
	_, err := d.value(depth)
	return err
}

// FuzzEscapedSize holds the size estimate of a string to what appendString writes
// for it, escapes included; a string under eight bytes is counted as it is (quotes
// added), unscanned.
func FuzzEscapedSize(f *testing.F) {
	for _, s := range []string{"", "plain", "quote\" backslash\\", "\n\r\t\b\f\x00\x1f\x7f", "é日本🚀", "\u2028\u2029",
		"bad \xff utf8 \xc3", "eight by", "seven b\"", strings.Repeat("\"\\\x01", 9) + "tail", "\xe2\x80", "\xe2\x80\xa8x",
		"12345678\u2028", "1234567\"", "123456789\x01", "12345678\xe2\x80\xa8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := len(appendString(nil, s))
		if len(s) < 8 {
			want = len(s) + 2
		}
		if got := escapedSize(s); got != want {
			t.Fatalf("escapedSize(%q) = %d, appendString writes %d bytes", s, got, want)
		}
	})
}
