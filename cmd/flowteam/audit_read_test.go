package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An audit file saved by an editor that wrote a UTF-8 byte order mark keeps its first
// record (the run's STARTED): the mark is no part of the line.
func TestAuditByteOrderMark(t *testing.T) {
	path, _ := writeAuditFile(t)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	marked := filepath.Join(t.TempDir(), "marked.jsonl")
	require.NoError(t, os.WriteFile(marked, append([]byte("\xef\xbb\xbf"), data...), 0o600))
	code, want, _ := auditCmd(t, path)
	require.Equal(t, exitOK, code)
	code, got, stderr := auditCmd(t, marked)
	require.Equal(t, exitOK, code)
	assert.Empty(t, stderr)
	assert.Equal(t, want, got)
}

// A line that is JSON but not a record is reported in terms of its JSON, not of the Go
// types it failed to decode into.
func TestAuditSkippedLineMessages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "odd.jsonl")
	lines := []string{
		`[1,2]`,
		`"text"`,
		`{"seq":"x","run":"r","status":"STARTED"}`,
		`{"seq":1,"run":"r","status":"FAILED","error":{"code":5}}`,
	}
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	code, out, errOut := auditCmd(t, path)
	assert.Equal(t, exitOK, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "odd.jsonl:1: skipped: want a JSON object, got a JSON array\n")
	assert.Contains(t, errOut, "odd.jsonl:2: skipped: want a JSON object, got a JSON string\n")
	assert.Contains(t, errOut, `odd.jsonl:3: skipped: field "seq": want a JSON number, got a JSON string`+"\n")
	assert.Contains(t, errOut, `odd.jsonl:4: skipped: field "error.code": want a JSON string, got a JSON number`+"\n")
	assert.NotContains(t, errOut, "Go ")
	assert.NotContains(t, errOut, "struct")
}

// A line too long to decode is skipped like any other damaged line: the records after
// it are still read.
func TestAuditOverlongLine(t *testing.T) {
	path, _ := writeAuditFile(t)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	long := filepath.Join(t.TempDir(), "long.jsonl")
	huge := `{"seq":1,"run":"x","status":"FAILED","error":{"code":"c","message":"` + strings.Repeat("a", maxAuditLine) + "\"}}\n"
	require.NoError(t, os.WriteFile(long, append([]byte(huge), data...), 0o600))

	code, want, _ := auditCmd(t, path, "--summary")
	require.Equal(t, exitOK, code)
	code, got, errOut := auditCmd(t, long, "--summary")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, want, got)
	assert.Equal(t, "flowteam audit: "+long+":1: skipped: longer than 16 MiB\n", errOut)
}

func TestReadAuditLine(t *testing.T) {
	type line struct {
		text    string
		tooLong bool
	}
	for _, tc := range []struct {
		in   string
		want []line
	}{
		{"", nil},
		{"ab\ncd\n", []line{{"ab\n", false}, {"cd\n", false}}},
		{"ab\ncd", []line{{"ab\n", false}, {"cd", false}}},
		{"1234567\n12345678\nok\n", []line{{"1234567\n", false}, {"", true}, {"ok\n", false}}},
		{"123456789012345678901234567890\nok", []line{{"", true}, {"ok", false}}},
		{"ok\n123456789012345678901234567890", []line{{"ok\n", false}, {"", true}}},
	} {
		// The reader's buffer (16 bytes) is smaller than some lines, as 64 KiB is
		// smaller than the longest line allowed.
		br := bufio.NewReaderSize(strings.NewReader(tc.in), 16)
		var got []line
		for {
			l, tooLong, err := readAuditLine(br, 8)
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			got = append(got, line{string(l), tooLong})
		}
		assert.Equal(t, tc.want, got, "%q", tc.in)
	}
}

// A file whose last line a killed writer cut short is read: the records before it are
// shown, and a warning names the line as cut, not as bad JSON; the exit code is 0.
func TestAuditLastLineCut(t *testing.T) {
	path, _ := writeAuditFile(t)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	code, want, _ := auditCmd(t, path, "--summary")
	require.Equal(t, exitOK, code)
	lines := strings.Count(string(data), "\n")
	cut := filepath.Join(t.TempDir(), "cut.jsonl")
	require.NoError(t, os.WriteFile(cut, append(data, `{"seq":99,"run":"r","sta`...), 0o600))

	code, got, errOut := auditCmd(t, cut, "--summary")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, want, got)
	assert.Equal(t, fmt.Sprintf("flowteam audit: %s:%d: skipped: the last line is cut short (the writer stopped while writing it: a crash?)\n",
		cut, lines+1), errOut)
}
