package flow

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// yamlCorpusDir is corpusDir of the external tests: Solon's definition documents.
const yamlCorpusDir = "../../shared/corpus/solon-flow"

// yamlFastSnippets are tricky inputs for the differential test. fast says whether the fast
// path must take the input (true) or must decline it (false); either way, whatever it
// returns must be what yaml.v3 returns.
var yamlFastSnippets = []struct {
	name, src string
	fast      bool
}{
	{"mapping", "a: 1\nb: two\n", true},
	{"no final newline", "a: 1\nb: two", true},
	{"nested", "a:\n  b:\n    c: d\n  e: f\n", true},
	{"sequence", "- a\n- b\n", true},
	{"compact mapping", "- a: 1\n  b: 2\n- c: 3\n", true},
	{"compact sequence", "- - a\n  - b\n- - c\n", true},
	{"indentless sequence", "a:\n- x\n- y\nb: z\n", true},
	{"indentless in compact", "- a:\n  - x\n  b: y\n", true},
	{"empty values", "a:\nb:\n  c:\nd: 1\n", true},
	{"empty value at end", "a:\n  b:", true},
	{"empty value at end newline", "a:\n  b:\n", true},
	{"empty value at end spaces", "a:\n    b:\n  ", true},
	{"empty value at end comment", "a:\n  b:\n# end", true},
	{"empty value dedent", "a:\n    b:\nc: 1\n", true},
	{"empty entries", "-\n- \n-  # c\n- a\n-", true},
	{"empty entry at end", "a:\n  -\n", true},
	{"comments", "# head\na: 1 # line\n# between\nb: 2\n  # deeper\n", true},
	{"quoted", "a: \"x y\"\nb: 'it''s'\n'c': \"\"\n\"d\": ''\n", true},
	{"escapes", `a: "\t\n\\\"\x41\u00e9\U0001F600\N\_\L\P\0\a\b\e\f\r\v\ \/"` + "\n", false},
	{"escapes yaml knows", `a: "\t\n\\\"\x41\u00e9\U0001F600\N\_\L\P\0\a\b\e\f\r\v\ "` + "\n", true},
	{"surrogate escape", `a: "\ud83d\ude00"`, false},
	{"unicode", "id: 审批\ntitle: \"加法\" # 注释\nx: {a: 审, b: 批}\n", true},
	{"plain with specials", "a: a > b && c<d\nb: x#y\nc: 'a: b'\nd: @x\n", false},
	{"plain specials ok", "a: a > b && c<d\nb: x#y\nc: 'a: b'\nd: x@y\n", true},
	{"plain spaces", "a: x   y  \nb:    z\n", true},
	{"colon in plain", "a: b:c\nurl: http://x/y\n", true},
	{"mapping in value", "a: b: c\n", false},
	{"key spaces", "a  : 1\n", true},
	{"tags", "a: 1\nb: -1\nc: 0x1F\nd: 0o17\ne: 017\nf: 1_000\ng: 1.5\nh: .5\ni: 1e3\nj: .inf\nk: -.Inf\nl: .NaN\n" +
		"m: true\nn: False\no: yes\np: no\nq: on\nr: ~\ns: null\nt: NULL\nu: +1\nv: 0b101\nw: -0b1\nx: 08\ny: 1e400\nz: 9223372036854775808\n" +
		"aa: 18446744073709551616\nab: 0b_1\nac: +.5\nad: 1.\nac2: 0x\naf: -0o7\nag: 0o\nah: 1_\nai: ._1\naj: 0b2\n", true},
	{"merge", "<<: {a: 1}\nb: '<<'\n", true},
	{"timestamp", "a: 2024-01-02\n", false},
	{"not timestamp", "a: 20240-01-02\nb: 202-01\n", true},
	{"flow", "a: [x, y, 'z', \"w\"]\nb: {c: 1, d: [e, f], \"g\": h}\nc: []\nd: {}\n", true},
	{"flow multiline", "a: [x,\n  y,\n  z]\nb: {c: 1,\n  d: 2}\n", true},
	{"flow empty values", "a: {b: , c: }\nd: {\"e\":,\"f\":}\n", true},
	{"flow trailing comma", "a: [x, ]\n", false},
	{"flow pair in sequence", "a: [x: y]\n", false},
	{"flow colon", "a: {id: g1, link:[a, b]}\n", false},
	{"flow lone keys", "a: {b, c:d, \"e\", f: }\n", true},
	{"flow colon next line", "a: {b\n  : c}\n", false},
	{"flow plain colon", "a: [x:y, z]\n", true},
	{"flow comment", "a: [x, # c\n  y]\n", true},
	{"json", "{\n  \"id\": \"c62\",\n  \"layout\": [\n    { \"id\": \"n1\", \"n\": 1.5, \"t\": true, \"z\": null, \"m\": -3},\n" +
		"    {\"id\":\"n2\",\"task\":\"context.put(\\\"result\\\", 112);\"}\n  ]\n}", true},
	{"json top array", "[1, 2, {\"a\": [ ]}]\n", true},
	{"literal", "a: |\n  line 1\n    line 2\n\n  line 3\nb: x\n", true},
	{"literal strip keep", "a: |-\n  x\n\n\nb: |+\n  y\n\n\nc: |2\n    z\n", true},
	{"literal at end", "a: |\n  x", true},
	{"literal empty", "a: |\nb: 1\n", true},
	{"literal in sequence", "- |\n  x\n- >\n  y\n  z\n\n  w\n   v\n", true},
	{"literal leading blank lines", "a: |\n\n  \n  x\n", true},
	{"literal deeper leading blank line", "a: |\n\n     \n  x\n", false},
	{"literal comment header", "a: | # c\n  x\n", true},
	{"literal deeper blank", "- |\n    \n  x\n", false},
	{"folded", "a: >\n  one\n  two\n\n  three\n    more\n  four\n", true},
	{"literal top", "|\n  x\n", false},
	{"scalar document", "hello\n", false},
	{"empty document", "# nothing\n", false},
	{"anchor", "a: &x 1\nb: *x\n", false},
	{"tag", "a: !!str 1\n", false},
	{"directive", "%YAML 1.2\n---\na: 1\n", false},
	{"documents", "a: 1\n---\nb: 2\n", false},
	{"complex key", "? a\n: b\n", false},
	{"tab", "a:\t1\n", false},
	{"crlf", "a: 1\r\nb: 2\r\n", false},
	{"multiline plain", "a: b\n  c\n", false},
	{"multiline plain entry", "- a\n  b\n", false},
	{"multiline quoted", "a: \"b\n  c\"\n", false},
	{"bad indent", "a:\n  b: 1\n c: 2\n", false},
	{"bad indent deeper", "a: 1\n  b: 2\n", false},
	{"sequence after value", "a: 1\n- b\n", false},
	{"sequence in value", "a: - b\n", false},
	{"duplicate keys", "a: 1\na: 2\n", true},
	{"indented document", "  a: 1\n  b: 2\n", true},
	{"top after root", "  a: 1\nb: 2\n", false},
	{"glued comment", "a: [x]#c\n", false},
	{"bom", "\ufeffa: 1\n", false},
	{"control", "a: \x01\n", false},
	{"long key", strings.Repeat("k", 1100) + ": v\n", false},
	{"nel", "a: x\u0085y\n", false},
	{"flow at column 0", "a: [b,\nc]\nd: {e: f,\ng: h}\n", true},
	{"flow value next line", "a:\n  [b, c]\nd:\n  {e: f}\n", true},
	{"flow complex key", "[a]: b\n", false},
	{"flow lone key next line", "a: {b\n}\n", true},
	{"flow nested", "a: [[b, [c]], {d: [e, {f: g}]}, [], {}]\n", true},
	{"flow quoted keys glued", "{\"a\":1,'b':2,\"c\":\"d\"}", true},
	{"flow plain glued colon", "{a:1}", true},
	{"flow dash", "[-1, -a, -.5, - a]", false},
	{"flow dash ok", "[-1, -a, -.5]", true},
	{"flow comment after comma", "[a, # c\n b, #d\n]", false},
	{"flow comment lines", "[a, # c\n b # d\n ]", true},
	{"flow multiline plain", "[a\n b]", false},
	{"flow plain then comma next line", "[a\n , b]", true},
	{"block scalar comment glued", "a: |#c\n  x\n", true},
	{"block scalar indent indicator", "a: |1\n  x\n- b: >2-\n     y\n", false},
	{"block scalar indicators", "- |1\n  x\n- >2-\n     y\n-  |+1\n   z\n\n", true},
	{"block scalar dedent comment", "a: |\n  x\n# c\nb: 1\n", true},
	{"block scalar keeps hash", "a: |\n  # not a comment\n  x: y\n", true},
	{"folded more indented", "a: >\n  x\n   y\n  z\n\n\n  w\n", true},
	{"folded keep", "a: >+\n  x\n\n", true},
	{"unicode keys", "名字: 值\n描述: '说明' # 注释\n列表: [甲, 乙]\n", true},
	{"unicode columns", "- {标题: 开始, type: start}\n- {title: 数据, id: s1, task: '@a'}\n", true},
	{"key after sequence", "a:\n  - b\n  c: d\n", false},
	{"dash glued", "a:\n  - b\n  -c\n", false},
	{"nested sequences", "- - - a\n    - b\n  - c\n- d\n", true},
	{"extra spaces after dash", "-   a: 1\n    b: 2\n-  c\n", true},
	{"spaces before colon", "a   : 1\n'b' : 2\n", true},
	{"quoted glued colon", "\"a\":b\n", false},
	{"colon at end", "a: b:\n", false},
	{"url values", "a: http://x.y/z?q=1#f\nb: c:d:e\n", true},
	{"hash inside plain", "a: b#c d\n", true},
	{"empty flow spaced", "a: [ ]\nb: { }\n", true},
	{"comment only lines", "\n\n# a\n\n  # b\na: 1\n\n# c\n\n", true},
	{"value on next line deeper comment", "a: # c\n  b\n", true},
	{"sequence comment", "- # c\n  - a\n", true},
	{"numbers as keys", "1: a\ntrue: b\n~: c\n.5: d\n", true},
	{"null forms", "a: ~\nb: null\nc: Null\nd: nULL\n", true},
	{"comments everywhere", "# h\na: # c1\n  # c2\n  - x # c3\n  # c4\n  - # c5\n    y\n# c6\nb: |  # c7\n  t\n# c8\nc: {d: e} # c9\n  # c10\n", true},
	{"comment between entries", "- a\n# c\n- b\n  # d\n- c: 1\n  # e\n  d: 2\n", true},
	{"case1", "id: \"case1\"\nlayout:\n  - type: exclusive\n    link:\n      - when: a > b\n        nextId: sum\n      - nextId: sub\n  - id: end\n    type: end", true},
}

// yamlFastFiles lists the definition documents the differential test reads: the Solon
// corpus and the repository's own YAML and JSON files.
func yamlFastFiles(t *testing.T) []string {
	var files []string
	if corpus, err := filepath.Glob(filepath.Join(yamlCorpusDir, "*")); err == nil {
		files = append(files, corpus...)
	}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != ".." {
			return filepath.SkipDir
		}
		switch filepath.Ext(path) {
		case ".yml", ".yaml", ".json":
			if !strings.Contains(path, "testdata"+string(filepath.Separator)+"fuzz") {
				files = append(files, path)
			}
		}
		return nil
	})
	require.NoError(t, err)
	return files
}

// checkYAMLFast fails when the fast path accepts data and its tree differs from yaml.v3's.
// It reports whether the fast path accepted it.
func checkYAMLFast(t testing.TB, data []byte) bool {
	t.Helper()
	got, ok := parseYAMLFast(data)
	if !ok {
		return false
	}
	want, err := decodeYAMLSlow(data)
	if err != nil {
		t.Fatalf("fast path accepted what yaml.v3 rejects (%v):\n%q", err, data)
	}
	if diff := diffYAMLNodes(want, got, "root"); diff != "" {
		t.Fatalf("fast path differs from yaml.v3 at %s:\n%q", diff, data)
	}
	return true
}

// diffYAMLNodes describes the first difference between two trees, or returns "".
func diffYAMLNodes(want, got *yaml.Node, path string) string {
	if want == nil || got == nil {
		if want != got {
			return fmt.Sprintf("%s: want %v, got %v", path, want, got)
		}
		return ""
	}
	type view struct {
		Kind                 yaml.Kind
		Style                yaml.Style
		Tag, ShortTag, Value string
		Anchor               string
		Alias                bool
		Line, Column, Len    int
		NilContent           bool
	}
	look := func(n *yaml.Node) view {
		return view{n.Kind, n.Style, n.Tag, n.ShortTag(), n.Value, n.Anchor, n.Alias != nil, n.Line, n.Column, len(n.Content), n.Content == nil}
	}
	if w, g := look(want), look(got); w != g {
		return fmt.Sprintf("%s:\nwant %+v\n got %+v", path, w, g)
	}
	for i := range want.Content {
		if d := diffYAMLNodes(want.Content[i], got.Content[i], fmt.Sprintf("%s[%d]", path, i)); d != "" {
			return d
		}
	}
	return ""
}

func TestYAMLFastSnippets(t *testing.T) {
	for _, tc := range yamlFastSnippets {
		t.Run(tc.name, func(t *testing.T) {
			fast := checkYAMLFast(t, []byte(tc.src))
			assert.Equal(t, tc.fast, fast, "fast path taken")
		})
	}
}

func TestYAMLFastFiles(t *testing.T) {
	files := yamlFastFiles(t)
	var slow []string
	fast, corpus, corpusFast := 0, 0, 0
	for _, path := range files {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		inCorpus := strings.HasPrefix(path, yamlCorpusDir)
		if inCorpus {
			corpus++
		}
		if relaxed, changed := relaxFlowColons(data); changed {
			// The reader retries these after yaml.v3 rejects them.
			checkYAMLFast(t, data)
			data = relaxed
		}
		if checkYAMLFast(t, data) {
			fast++
			if inCorpus {
				corpusFast++
			}
		} else {
			slow = append(slow, path)
		}
	}
	t.Logf("fast path: %d of %d files, %d of %d corpus files; declined: %s", fast, len(files), corpusFast, corpus, strings.Join(slow, ", "))
	if corpus > 0 {
		assert.NotContains(t, slow, filepath.Join(yamlCorpusDir, "solon-flow__benchmark__case1.yml"))
		// Most definitions must take the fast path, or it is not worth its code.
		assert.Greater(t, corpusFast, corpus*3/4)
	}
}

// FuzzYAMLFast checks that whatever the fast path accepts, yaml.v3 reads the same way.
func FuzzYAMLFast(f *testing.F) {
	if corpus, err := filepath.Glob(filepath.Join(yamlCorpusDir, "*")); err == nil {
		for _, path := range corpus {
			if data, err := os.ReadFile(path); err == nil {
				f.Add(data)
			}
		}
	}
	for _, tc := range yamlFastSnippets {
		f.Add([]byte(tc.src))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkYAMLFast(t, data)
	})
}

func BenchmarkYAMLFast(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(yamlCorpusDir, "solon-flow__benchmark__case1.yml"))
	if err != nil {
		b.Skipf("corpus not available: %v", err)
	}
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, ok := parseYAMLFast(data); !ok {
				b.Fatal("fast path declined case1")
			}
		}
	})
	b.Run("yaml.v3", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := decodeYAMLSlow(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
