package interceptor_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flowteam/flowteam/interceptor"
	"github.com/flowteam/flowteam/trace"
)

func TestRedactorSensitive(t *testing.T) {
	r := interceptor.NewRedactor("ssn")
	for key, want := range map[string]bool{
		"password": true, "PASSWORD": true, "db_password": true, "Passwd": true,
		"token": true, "access_token": true, "Access-Token": true, "csrfToken": true,
		"api_key": true, "apiKey": true, "X-API-KEY": true, "apikey": true,
		"Authorization": true, "client_secret": true, "Cookie": true, "ssn": true, "customer.SSN": true,
		"tokens": false, "tokenizer": false, "user": false, "name": false, "secretary": false, "": false,
	} {
		assert.Equal(t, want, r.Sensitive(key), key)
	}
	only := interceptor.NewRedactorKeys("pin")
	assert.True(t, only.Sensitive("PIN"))
	assert.False(t, only.Sensitive("password"))
	var none *interceptor.Redactor
	assert.False(t, none.Sensitive("password"))
	assert.Equal(t, "password=x", none.String("password=x"))
}

func TestRedactorString(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{"no secrets here", "no secrets here"},
		{"password=hunter2", "password=***"},
		{"login failed for bob password=hunter2, retry", "login failed for bob password=***, retry"},
		{"PASSWORD = hunter2 next", "PASSWORD = *** next"},
		{"url?api_key=abc123&x=1", "url?api_key=***&x=1"},
		{`{"user":"bob","password":"p@ss \"w\"","n":1}`, `{"user":"bob","password":"***","n":1}`},
		{`{"token": 12345, "ok": true}`, `{"token": ***, "ok": true}`},
		{`body: {\"secret\":\"s3\"}`, `body: {\"secret\":\"***\"}`},
		{"Authorization: Bearer eyJhbGciOi.x.y", "Authorization: ***"},
		{"authorization=Basic dXNlcjpwYXNz end", "authorization=*** end"},
		{"map[password:hunter2 user:bob]", "map[password:*** user:bob]"},
		{"{Password:hunter2 User:bob}", "{Password:*** User:bob}"},
		{"token='abc def' rest", "token='***' rest"},
		{`credentials={"a":1,"b":{"c":2}} done`, `credentials=*** done`},
		{"secret=[1,2,3]", "secret=***"},
		{"x-api-key: k1; token=t2", "x-api-key: ***; token=***"},
		{"tokens=5 tokenizer=bpe", "tokens=5 tokenizer=bpe"},
		{"password=", "password="},
		{"http://host:8080/path", "http://host:8080/path"},
		{"password=ab:cd=ef", "password=***"},
		// A sensitive key used as a label before a pair of its own: the pair's value
		// is masked, quoted or not, rather than the label's value ending at its quote.
		{`login failed: auth: password="hunter2" rejected`, `login failed: auth: password="***" rejected`},
		{`token= api_key="k1", user=bob`, `token= api_key="***", user=bob`},
		{`credential:client.secret=Basic c2VjcmV0`, `credential:client.secret=***`},
		// Two-character separators: a Ruby or PHP hash, a Go declaration, and a
		// comparison (a condition quoted by an expression error).
		{`{"password"=>"hunter2", "user"=>"bob"}`, `{"password"=>"***", "user"=>"bob"}`},
		{`password => hunter2`, `password => ***`},
		{`password := "hunter2"`, `password := "***"`},
		{`condition failed: token == "abc123" && user == "bob"`, `condition failed: token == "***" && user == "bob"`},
		{`token === 'x' || ok`, `token === '***' || ok`},
		{`token==`, `token==`},
		{`auth: password=>"hunter2" rejected`, `auth: password=>"***" rejected`},
		{`token=abc==`, `token=***`},
	} {
		assert.Equal(t, c.want, r.String(c.in), c.in)
	}
}

func TestRedactorValueAndRecord(t *testing.T) {
	r := interceptor.NewRedactor("ssn")
	in := map[string]any{
		"user":     "bob",
		"Password": "pw",
		"profile": map[string]any{
			"ssn":   "123",
			"notes": "call with token=abc",
			"list":  []any{map[string]any{"api_key": "k"}, "password=x"},
		},
		"headers": map[string]string{"Authorization": "Bearer t", "Accept": "json"},
		"tags":    []string{"secret=s", "plain"},
		"n":       3,
	}
	got := r.Map(in)
	assert.Equal(t, map[string]any{
		"user":     "bob",
		"Password": "***",
		"profile": map[string]any{
			"ssn":   "***",
			"notes": "call with token=***",
			"list":  []any{map[string]any{"api_key": "***"}, "password=***"},
		},
		"headers": map[string]string{"Authorization": "***", "Accept": "json"},
		"tags":    []string{"secret=***", "plain"},
		"n":       3,
	}, got)
	assert.Equal(t, "pw", in["Password"], "the input is not modified")

	e := &trace.ErrorInfo{Type: "t", Code: "c", Message: "token=abc"}
	rec := trace.Record{Error: e, Reason: "need secret: xyz", Attrs: map[string]any{"token": "t"}}
	r.Record(&rec)
	assert.Equal(t, "token=***", rec.Error.Message)
	assert.Equal(t, "token=abc", e.Message, "the error info is copied, not modified")
	assert.Equal(t, "need secret: ***", rec.Reason)
	assert.Equal(t, map[string]any{"token": "***"}, rec.Attrs)
}

func BenchmarkRedactString(b *testing.B) {
	r := interceptor.NewRedactor()
	msg := `node "pay" in graph "order": task_failed: gateway said {"status":"denied","api_key":"k-123"} after 3 tries`
	b.ReportAllocs()
	for b.Loop() {
		_ = r.String(msg)
	}
}

// BenchmarkRedactStringNoKey redacts text with separators, a percent sign and an
// ampersand but no sensitive key: the common case, which must stay cheap.
func BenchmarkRedactStringNoKey(b *testing.B) {
	r := interceptor.NewRedactor()
	msg := `node "pay" in graph "order": task_failed: gateway timeout after 3 tries, 50% of budget used; see https://status.example.com/a?b=1&c=2`
	b.ReportAllocs()
	for b.Loop() {
		_ = r.String(msg)
	}
}

// BenchmarkRedactStringLongQuery redacts a long query string with no escape and no
// key: its many '&' must not each start a search of the rest of the text.
func BenchmarkRedactStringLongQuery(b *testing.B) {
	r := interceptor.NewRedactor()
	msg := strings.Repeat("a=1&", 20000)
	b.ReportAllocs()
	for b.Loop() {
		_ = r.String(msg)
	}
}

// A Cookie header holds one or more name=value pairs, all of them secrets (session
// ids): its value runs over every pair, where a Set-Cookie header holds one cookie
// and then its attributes.
func TestRedactorStringCookies(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{"Cookie: theme=dark; sid=abc123", "Cookie: ***"},
		{"Cookie: sid=abc123;lang=en\nUser-Agent: x", "Cookie: ***\nUser-Agent: x"},
		{"request cookie=a=1; b=2; then retried", "request cookie=***; then retried"},
		{`headers: {"Cookie": "a=1; b=2"}`, `headers: {"Cookie": "***"}`},
		{"Set-Cookie: sid=abc123; Path=/; HttpOnly", "Set-Cookie: ***; Path=/; HttpOnly"},
	} {
		assert.Equal(t, c.want, r.String(c.in), c.in)
	}
}

// A tab separates a key from its value as '=' and ':' do (tab-separated output), a tab
// may stand where a space may, and a value may start on the next line (YAML): the
// value is masked all the same.
func TestRedactorStringWhitespace(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{"password\thunter2", "password\t***"},
		{"user\tbob\tpassword\thunter2\tnext", "user\tbob\tpassword\t***\tnext"},
		{"password:\thunter2", "password:\t***"},
		{"password\t=\thunter2 x", "password\t=\t*** x"},
		{"password \t: hunter2", "password \t: ***"},
		{"password:\n  hunter2", "password:\n  ***"},
		{"password=\r\nhunter2 rest", "password=\r\n*** rest"},
		{"db:\n  password:\n    hunter2\n  user: bob", "db:\n  password:\n    ***\n  user: bob"},
		{`{"token":` + "\n\t\"abc\"}", `{"token":` + "\n\t\"***\"}"},
		{"tokens\t5\tuser\tbob", "tokens\t5\tuser\tbob"},
		{"password:\n\nnext paragraph", "password:\n\nnext paragraph"},
		{"Authorization:\tBearer\tabc.def next", "Authorization:\t*** next"},
		// A YAML block scalar: the value is every line indented deeper than the key.
		{"secret: >\n  multi\n  line\nnext: x", "secret: ***\nnext: x"},
		{"db:\n  private_key: |-\n    -----BEGIN KEY-----\n    MIIE\n\n    abc\n  user: bob", "db:\n  private_key: ***\n  user: bob"},
		{"bad config: token: |\r\n  abc\r\nuser: bob", "bad config: token: ***\r\nuser: bob"},
		{"password: |x\n  next", "password: ***\n  next"},
		{"password: |", "password: ***"},
		{"password:\n  |\n  x", "password:\n  ***\n  x"},
		// A secret that ends in a key name is a value, not a key: what follows its tab
		// is not masked as that key's value.
		{"password\tmytoken\tnext", "password\t***\tnext"},
		{"password=abc_token\tnext", "password=***\tnext"},
		{"password='my-secret'\tnext\tmore", "password='***'\tnext\tmore"},
		{"password=abc_token\t\tnext", "password=***\t\tnext"},
		{"password=abc_token\t= next", "password=***\t= next"},
		{"password\tmytoken\ttoken\tt2", "password\t***\ttoken\t***"},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// The password of a URL (a DSN quoted by a database driver's error) is masked as the
// value of "password"; the rest of the URL stays, and so does a URL with no password.
func TestRedactorStringURLPassword(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{"dial postgres://app:hunter2@db:5432/orders?sslmode=disable: refused", "dial postgres://app:***@db:5432/orders?sslmode=disable: refused"},
		{`dsn="mysql://root:p@ss:w0rd@tcp(db)/x"`, `dsn="mysql://root:***@tcp(db)/x"`},
		{"redis://:hunter2@cache:6379/0", "redis://:***@cache:6379/0"},
		{"see https://example.com:8443/path?a=b and http://user@host/", "see https://example.com:8443/path?a=b and http://user@host/"},
		{"mailto://a/b@c", "mailto://a/b@c"},
	} {
		assert.Equal(t, c.want, r.String(c.in), c.in)
	}
	assert.Equal(t, "redis://:hunter2@cache", interceptor.NewRedactorKeys("pin").String("redis://:hunter2@cache"), "only as the value of a configured key")
}
