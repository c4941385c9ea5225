package interceptor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/interceptor"
)

// A key may be the value of a name member, with the secret in the value member beside
// it: XML properties and parameters, HAR and Kubernetes name/value pairs, AWS and
// Postman key/value pairs. The value is masked in either order, with a few other
// members or attributes between, and the element's text when there is no value.
func TestRedactorStringNamedPairs(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`<property name="password" value="hunter2"/>`, `<property name="password" value="***"/>`},
		{`<param name="token">abc</param>`, `<param name="token">***</param>`},
		{`<password>hunter2</password>`, `<password>***</password>`},
		{`<entry key="db.password">hunter2</entry><entry key="db.user">bob</entry>`, `<entry key="db.password">***</entry><entry key="db.user">bob</entry>`},
		{`<add key="ApiKey" value='k-1' />`, `<add key="ApiKey" value='***' />`},
		{`<input name="password" type="password" value="hunter2">`, `<input name="password" type="password" value="***">`},
		{`<Parameter value="hunter2" name="db.password" override="false"/>`, `<Parameter value="***" name="db.password" override="false"/>`},
		{`<param name="token" type="s"><![CDATA[abc]]></param>`, `<param name="token" type="s">***</param>`},
		{`<param name="token">abc`, `<param name="token">***`},
		{`{"name":"Authorization","value":"Bearer abc"}`, `{"name":"Authorization","value":"***"}`},
		{`{"name": "api_key", "value": "k"}`, `{"name": "api_key", "value": "***"}`},
		{`{"value": "k", "name": "X-Api-Key"}`, `{"value": "***", "name": "X-Api-Key"}`},
		{`{"Key":"password","Value":"hunter2"}`, `{"Key":"password","Value":"***"}`},
		{`[{"key":"token","type":"text","value":"abc"},{"key":"page","value":"2"}]`, `[{"key":"token","type":"text","value":"***"},{"key":"page","value":"2"}]`},
		{`{"name":"DB_PASSWORD","value":{"a":1}}`, `{"name":"DB_PASSWORD","value":***}`},
		{`{"name":"token","secret":"x","value":"y"}`, `{"name":"token","secret":"***","value":"***"}`},
		{`name=password value=hunter2`, `name=password value=***`},
		{`name=token value=abc`, `name=token value=***`},
		{`{\"name\":\"Authorization\",\"value\":\"Bearer abc\"}`, `{\"name\":\"Authorization\",\"value\":\"***\"}`},
		{"env:\n- name: API_TOKEN\n  value: abc\n- name: MODE\n  value: fast", "env:\n- name: API_TOKEN\n  value: ***\n- name: MODE\n  value: fast"},
		// Not a sensitive name, or no value beside it: nothing to mask.
		{`{"name":"Accept","value":"json"}`, `{"name":"Accept","value":"json"}`},
		{`{"name":"tokens","value":"5"}`, `{"name":"tokens","value":"5"}`},
		{`{"name":"token"},{"value":"5"}`, `{"name":"token"},{"value":"5"}`},
		{`<param name="token"/><value>5</value>`, `<param name="token"/><value>5</value>`},
		{`{"username":"token","value":"5"}`, `{"username":"token","value":"5"}`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// A key, its separator or the quotes of its value may be escaped: HTML entities
// (text from an HTML page or an XML attribute), percent-encoding (a URL, a form body)
// and JSON's \u escapes (Go's encoder writes <, > and & so). The value is masked where
// it stands, in its escaped form; several layers of escaping are undone.
func TestRedactorStringEncoded(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`password=&quot;hunter2&quot;`, `password=&quot;***&quot;`},
		{`{&quot;token&quot;:&quot;abc&quot;}`, `{&quot;token&quot;:&quot;***&quot;}`},
		{`{&#34;token&#34;: &#x22;abc&#x22;, &#34;n&#34;: 1}`, `{&#34;token&#34;: &#x22;***&#x22;, &#34;n&#34;: 1}`},
		{`&lt;password&gt;hunter2&lt;/password&gt;`, `&lt;password&gt;***&lt;/password&gt;`},
		{`password%3Dhunter2`, `password%3D***`},
		{`token%22%3A%22abc`, `token%22%3A%22***`},
		{`?a=1&api%5Fkey=xyz`, `?a=1&api%5Fkey=***`},
		{`GET /cb?state=1&password%3dhunter2%26user%3Dbob HTTP/1.1`, `GET /cb?state=1&password%3d***%26user%3Dbob HTTP/1.1`},
		{`redirect=%2Flogin%3Ftoken%3Dabc%26next%3D%252F`, `redirect=%2Flogin%3Ftoken%3D***%26next%3D%252F`},
		{`{"msg":"\u003cpassword\u003ehunter2\u003c/password\u003e"}`, `{"msg":"\u003cpassword\u003e***\u003c/password\u003e"}`},
		{`q=%26quot%3Btoken%26quot%3B%3A%26quot%3Babc%26quot%3B`, `q=%26quot%3Btoken%26quot%3B%3A%26quot%3B***%26quot%3B`},
		{`{&quot;name&quot;:&quot;token&quot;,&quot;value&quot;:&quot;abc&quot;}`, `{&quot;name&quot;:&quot;token&quot;,&quot;value&quot;:&quot;***&quot;}`},
		{`password=abc%26def`, `password=***`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// Text without a secret is returned as it is, escapes and sensitive words included:
// prose that mentions a key, a key with no value, percent signs and entities.
func TestRedactorStringNoSecretUnchanged(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, s := range []string{
		"password reset email sent",
		"token bucket full",
		"wrong password for bob; token expired",
		"50% of tokens used, 100%25 done",
		"tom &amp; jerry &lt;3 the secret garden",
		"see https://example.com/a%20b?q=token%20bucket&x=1",
		`{"name":"password reset","value":"sent"}`,
		`<label for="password">Password</label>`,
		`C:\users\bob\tokens \u0041`,
		"",
	} {
		assert.Equal(t, s, r.String(s))
	}
}

// Through the public API: a node's error message and a suspend reason holding the
// escaped and name/value forms reach no sink with their secret.
func TestRedactionEncodedFormsInRecords(t *testing.T) {
	texts := []string{
		`<property name="password" value="S3CR3T1"/>`,
		`<param name="token">S3CR3T2</param>`,
		`<password>S3CR3T3</password>`,
		`{"name":"Authorization","value":"Bearer S3CR3T4"}`,
		`{"name": "api_key", "value": "S3CR3T5"}`,
		`password=&quot;S3CR3T6&quot;`,
		`{&quot;token&quot;:&quot;S3CR3T7&quot;}`,
		`password%3DS3CR3T8`,
		`token%22%3A%22S3CR3T9`,
		`?a=1&api%5Fkey=S3CR3T10`,
	}
	secret := regexp.MustCompile(`S3CR3T\d*`)
	for _, text := range texts {
		var lines bytes.Buffer
		mem := interceptor.NewMemory()
		a := interceptor.NewAudit(interceptor.WithSink(mem), interceptor.WithSink(interceptor.NewJSONL(&lines)), quiet())
		s := flow.NewSpec("enc")
		s.Start("s").LinkTo("fail")
		s.Activity("fail").DoFunc(func(context.Context, *flow.Context, *flow.Node) error {
			return flow.MarkRecoverable(errors.New("call failed: " + text))
		}).LinkTo("wait")
		s.Activity("wait").DoFunc(func(_ context.Context, c *flow.Context, _ *flow.Node) error {
			c.Suspend("need approval: " + text)
			return nil
		}).LinkTo("e")
		s.End("e")
		res, err := flow.NewEngine(flow.WithInterceptor(a, 0)).EvalGraph(context.Background(), build(t, s), flow.NewContext("i"))
		require.NoError(t, err)
		require.Equal(t, flow.StatusSuspended, res.Status)
		recs := mem.Records()
		var sawErr, sawReason bool
		for _, rec := range recs {
			sawErr = sawErr || rec.Error != nil && rec.Error.Message != ""
			sawReason = sawReason || rec.Reason != ""
		}
		require.True(t, sawErr && sawReason, "the records carry the texts")
		mj, err := json.Marshal(recs)
		require.NoError(t, err)
		assert.Empty(t, secret.FindAllString(string(mj), -1), "memory leaks %q", text)
		assert.Empty(t, secret.FindAllString(lines.String(), -1), "jsonl leaks %q", text)
	}
}

// An element whose text is a sensitive key names the element after it: a property
// list's <key>Password</key><string>x</string>, an XML-RPC struct member's
// <name>token</name><value>...</value>. The next element's text is masked.
func TestRedactorStringNamedElements(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{"<dict><key>Password</key><string>hunter2</string><key>User</key><string>bob</string></dict>", "<dict><key>Password</key><string>***</string><key>User</key><string>bob</string></dict>"},
		{"<key>api_key</key>\n\t<data>aGVsbG8=</data>", "<key>api_key</key>\n\t<data>***</data>"},
		{"<member><name>token</name><value><string>abc</string></value></member>", "<member><name>token</name><value>***</value></member>"},
		{"<name>password</name><value>hunter2", "<name>password</name><value>***"},
		{"<key>Password</key><string/><key>User</key><string>bob</string>", "<key>Password</key><string/><key>User</key><string>bob</string>"},
		{"<key>tokens</key><integer>5</integer>", "<key>tokens</key><integer>5</integer>"},
		{"<name>reset password</name><value>sent</value>", "<name>reset password</name><value>sent</value>"},
		{"<name>token</name> and then <value>5</value>", "<name>token</name> and then <value>5</value>"},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// A command line quoted in an error passes a secret as the word after its flag
// (--password x, as a client or a Go program takes it): the word is masked, not a
// flag after it or a bullet's text.
func TestRedactorStringFlags(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`exec: "pg_dump --host db --password hunter2 orders": exit status 1`, `exec: "pg_dump --host db --password *** orders": exit status 1`},
		{"curl -H 'Accept: json' --api-key k-123 https://x", "curl -H 'Accept: json' --api-key *** https://x"},
		{"run -token abc -v", "run -token *** -v"},
		{`--password 'a b' next`, `--password '***' next`},
		{"--password=hunter2 --user bob", "--password=*** --user bob"},
		{"login --password --user bob", "login --password --user bob"},
		{"login --password-stdin < f", "login --password-stdin < f"},
		{"unknown flag: --password", "unknown flag: --password"},
		{"- password reset email sent", "- password reset email sent"},
		{"re-token bucket full", "re-token bucket full"},
		{"--password\nnext line", "--password\nnext line"},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// SQL and Go's %q put a quoted value after its key and a space (ALTER USER ... WITH
// PASSWORD 'x', `invalid token "x"`): a quoted value right after a sensitive key is
// masked, and a quoted word after another word is not.
func TestRedactorStringQuotedAfterSpace(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`pq: ALTER ROLE app WITH LOGIN PASSWORD 'hunter2' VALID UNTIL 'infinity'`, `pq: ALTER ROLE app WITH LOGIN PASSWORD '***' VALID UNTIL 'infinity'`},
		{`CREATE USER bob ENCRYPTED PASSWORD 'md5abc';`, `CREATE USER bob ENCRYPTED PASSWORD '***';`},
		{`invalid token "eyJhbGciOi.x.y" for user "bob"`, `invalid token "***" for user "bob"`},
		{`node "pay" in graph "order": token bucket "full"`, `node "pay" in graph "order": token bucket "full"`},
		{`password reset email sent to "bob"`, `password reset email sent to "bob"`},
		{"password\n'x'", "password\n'x'"},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

type envVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type kvHook struct {
	Key   string
	Value string
	Hook  func()
}

// The name/value pairs of free text are masked in attributes too: a map or struct
// whose "name" (or "key") is a sensitive key has its "value" masked, in every form a
// sink writes it, and one with another name keeps its value.
func TestRedactorValueNamedPairs(t *testing.T) {
	r := interceptor.NewRedactor()
	assert.Equal(t, map[string]any{"name": "Authorization", "value": interceptor.Mask},
		r.Value(map[string]any{"name": "Authorization", "value": "Bearer abc"}))
	assert.Equal(t, map[string]string{"Key": "password", "Value": interceptor.Mask},
		r.Value(map[string]string{"Key": "password", "Value": "hunter2"}))
	assert.Equal(t, map[string]any{"name": "Accept", "value": "json"}, r.Value(map[string]any{"name": "Accept", "value": "json"}))
	keep := envVar{Name: "MODE", Value: "fast"}
	assert.Equal(t, keep, r.Value(keep))

	out := sinkOutputs(t, map[string]any{
		"headers": []any{map[string]any{"name": "Authorization", "value": "Bearer S3CR3T1"}},
		"env":     []map[string]string{{"name": "DB_PASSWORD", "value": "S3CR3T2"}},
		"var":     envVar{Name: "API_TOKEN", Value: "S3CR3T3"},
		"mode":    envVar{Name: "MODE", Value: "fast"},
	})
	for name, s := range out {
		assert.NotContains(t, s, "S3CR3T", name)
		assert.Contains(t, s, "fast", name)
	}
	// A struct with no JSON encoding is masked as fmt prints it.
	for name, s := range sinkOutputs(t, map[string]any{"hook": kvHook{Key: "api_key", Value: "S3CR3T4"}}) {
		assert.NotContains(t, s, "S3CR3T", name)
	}
}

// A value in parentheses (a tuple: Python's auth=("user", "x")) is one value, as a
// braced or bracketed one is; and members of a query string or a parameter list are
// separated by '&' or ';', so a name/value pair there is masked too.
func TestRedactorStringTupleAndQueryPairs(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`requests.get(url, auth=("user", "hunter2"), timeout=3)`, `requests.get(url, auth=***, timeout=3)`},
		{`password=(a (b) c) next`, `password=*** next`},
		{`name=token&value=abc&page=2`, `name=token&value=***&page=2`},
		{`name%3Dtoken%26value%3Dabc`, `name%3Dtoken%26value%3D***`},
		{`key=api_key; value=k-1; path=/`, `key=api_key; value=***; path=/`},
		{`name=page&value=2`, `name=page&value=2`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}
