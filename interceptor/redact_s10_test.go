package interceptor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flowteam/flowteam/interceptor"
)

// A log line kept as a JSON string ({"log":"AUTH pw"}) or quoted in a message holds
// a Redis AUTH command as much as a line does: a quoted string that is itself the
// command masks its password, with the strictness of a line (an "auth" not in upper
// case takes an argument that is not letters only, and starts the string). Prose in
// a string, and a string that goes on after the command, stay.
func TestRedactorStringRedisAuthInString(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`{"log":"AUTH hunter2"}`, `{"log":"AUTH ***"}`},
		{`{"log":"AUTH default hunter2"}`, `{"log":"AUTH default ***"}`},
		{`{"log":"auth hunter2"}`, `{"log":"auth ***"}`},
		{`{"n":1, "log": "AUTH bob hunter2", "t":2}`, `{"n":1, "log": "AUTH bob ***", "t":2}`},
		{`{"a":"AUTH x1","b":"AUTH x2"}`, `{"a":"AUTH ***","b":"AUTH ***"}`},
		{`["PING", "AUTH hunter2"]`, `["PING", "AUTH ***"]`},
		{`redis said "AUTH hunter2": WRONGPASS`, `redis said "AUTH ***": WRONGPASS`},
		{`cmd='AUTH hunter2' failed`, `cmd='AUTH ***' failed`},
		{`msg="{\"log\":\"AUTH hunter2\"}"`, `msg="{\"log\":\"AUTH ***\"}"`},
		{`{"log":"AUTH hunter2\nGET k"}`, `{"log":"AUTH ***\nGET k"}`},
		{`{"log":"AUTH \"my pass\""}`, `{"log":"AUTH \"***\""}`},
		// Prose, or more than a command, in a string: nothing to mask.
		{`{"msg":"auth failed for user bob"}`, `{"msg":"auth failed for user bob"}`},
		{`{"msg":"auth failed"}`, `{"msg":"auth failed"}`},
		{`{"scope":"auth openid"}`, `{"scope":"auth openid"}`},
		{`{"msg":"OAuth token refresh"}`, `{"msg":"OAuth token refresh"}`},
		{`OAuth token refresh`, `OAuth token refresh`},
		{`{"msg":" auth x1"}`, `{"msg":" auth x1"}`},
		{`{"msg":"AUTH hunter2 failed for user bob"}`, `{"msg":"AUTH hunter2 failed for user bob"}`},
		{`{"msg":"the AUTH x1"}`, `{"msg":"the AUTH x1"}`},
		{`{"msg":"AUTH x1`, `{"msg":"AUTH x1`},
		{`it's "auth" x1`, `it's "auth" x1`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
	assert.Equal(t, `{"log":"AUTH hunter2"}`, interceptor.NewRedactorKeys("token").String(`{"log":"AUTH hunter2"}`))
}
