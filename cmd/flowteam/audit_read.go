package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"unicode"

	"github.com/flowteam/flowteam/trace"
)

// readAudit reads the records of one JSON Lines file ("-": standard input), reporting
// and skipping lines that are not records. A last line that is not JSON and has no
// line end is reported as cut short: what a process killed while writing leaves.
func readAudit(name string, stderr io.Writer) (trace.Records, error) {
	var r io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	var recs trace.Records
	br := bufio.NewReaderSize(r, 64<<10)
	for line := 1; ; line++ {
		data, tooLong, err := readAuditLine(br, maxAuditLine)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if tooLong {
			fmt.Fprintf(stderr, "flowteam audit: %s:%d: skipped: longer than %d MiB\n", name, line, maxAuditLine>>20)
			continue
		}
		if line == 1 { // a mark an editor wrote would hide the run's STARTED record
			data = bytes.TrimPrefix(data, []byte(utf8BOM))
		}
		text := strings.TrimSpace(string(data))
		if text == "" {
			continue
		}
		var rec trace.Record
		err = json.Unmarshal([]byte(text), &rec)
		why := ""
		switch {
		case err != nil:
			why = auditLineError(err)
		case rec.RunID == "" || rec.Status == "":
			why = "not an audit record"
		case !knownStatus(trace.Status(strings.ToUpper(string(rec.Status)))):
			// Counted nowhere and taken for an end (Terminal), it would skew every total.
			why = fmt.Sprintf("unknown status %q", rec.Status)
		}
		if why != "" && err != nil && !bytes.HasSuffix(data, []byte("\n")) {
			// Only the last line can lack its end: the writer stopped in the middle of it.
			why = "the last line is cut short (the writer stopped while writing it: a crash?)"
		}
		if why != "" {
			fmt.Fprintf(stderr, "flowteam audit: %s:%d: skipped: %s\n", name, line, why)
			continue
		}
		// Another writer's "completed" is the same status as ours, for the filters and
		// the summary's columns alike.
		rec.Status = trace.Status(strings.ToUpper(string(rec.Status)))
		recs = append(recs, rec)
	}
	return recs, nil
}

// knownStatus reports whether s is one of the five audit statuses.
func knownStatus(s trace.Status) bool {
	switch s {
	case trace.Started, trace.Completed, trace.Failed, trace.Interrupted, trace.Suspended:
		return true
	}
	return false
}

// auditID returns an id for printing: quoted when it holds a control character (a line
// break), so that every line printed stays one header or one record.
func auditID(s string) string {
	if strings.ContainsFunc(s, unicode.IsControl) {
		return strconv.Quote(s)
	}
	return s
}

// maxAuditLine is the longest line readAudit decodes; a longer one is skipped.
const maxAuditLine = 16 << 20

// readAuditLine reads one line, without its end. A line longer than max is read to its
// end and dropped: tooLong reports it, so that the lines after it are still read. err
// is io.EOF once the input is exhausted.
func readAuditLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if tooLong || len(line)+len(chunk) > max {
			tooLong, line = true, nil
		} else {
			line = append(line, chunk...)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && (len(line) > 0 || tooLong):
			return line, tooLong, nil // the last line has no end
		}
		return line, tooLong, err
	}
}

// auditLineError says why a line is not an audit record in terms of its JSON, where the
// decoder's own message names Go types ("struct { *trace.fields; ... }").
func auditLineError(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	if te.Field == "" {
		return fmt.Sprintf("want a JSON object, got a JSON %s", te.Value)
	}
	want := "string"
	switch te.Type.Kind() {
	case reflect.Bool:
		want = "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8,
		reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		want = "number"
	case reflect.Map, reflect.Struct, reflect.Pointer:
		want = "object"
	case reflect.Slice, reflect.Array:
		want = "array"
	}
	// The path starts with trace.Record's decoding wrapper, which is no key of the line.
	field := strings.TrimPrefix(te.Field, "fields.")
	return fmt.Sprintf("field %q: want a JSON %s, got a JSON %s", field, want, te.Value)
}
