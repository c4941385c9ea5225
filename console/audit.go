package console

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/flowteam/flowteam/trace"
)

// auditCache reads the audit file (or the *.jsonl files of a directory) again only
// when a file changed, and indexes the records by instance.
type auditCache struct {
	path  string
	mu    sync.Mutex
	files map[string]auditFile
}

type auditFile struct {
	size  int64
	mod   time.Time
	byIns map[string]trace.Records
}

func newAuditCache(path string) *auditCache {
	return &auditCache{path: path, files: map[string]auditFile{}}
}

// records returns the records of one instance, in file order; nil without an audit.
func (c *auditCache) records(instance string) (trace.Records, error) {
	if c.path == "" {
		return nil, nil
	}
	names, err := c.names()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out trace.Records
	for _, name := range names {
		f, err := c.file(name)
		if err != nil {
			return nil, err
		}
		out = append(out, f.byIns[instance]...)
	}
	return out, nil
}

func (c *auditCache) names() ([]string, error) {
	fi, err := os.Stat(c.path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{c.path}, nil
	}
	names, err := filepath.Glob(filepath.Join(c.path, "*.jsonl"))
	sort.Strings(names)
	return names, err
}

// file returns the parsed file, parsing it if it changed. Lines that are not
// records (a line cut by a crash) are skipped: the timeline shows what can be read.
func (c *auditCache) file(name string) (auditFile, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return auditFile{}, err
	}
	if f, ok := c.files[name]; ok && f.size == fi.Size() && f.mod.Equal(fi.ModTime()) {
		return f, nil
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return auditFile{}, err
	}
	f := auditFile{size: fi.Size(), mod: fi.ModTime(), byIns: map[string]trace.Records{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var rec trace.Record
		if json.Unmarshal(line, &rec) != nil || rec.RunID == "" || rec.Status == "" {
			continue
		}
		f.byIns[rec.InstanceID] = append(f.byIns[rec.InstanceID], rec)
	}
	c.files[name] = f
	return f, nil
}
