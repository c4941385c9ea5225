package interceptor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

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
