package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/team/mcp"
	"github.com/flowteam/flowteam/testkit"
)

// inMemory connects a toolset to srv over the in-memory transport.
func inMemory(t testing.TB, srv *sdk.Server, opts ...mcp.Option) *mcp.Toolset {
	t.Helper()
	ts, _ := inMemoryConn(t, srv, opts...)
	return ts
}

// inMemoryConn is inMemory that also returns the server's end of the connection.
func inMemoryConn(t testing.TB, srv *sdk.Server, opts ...mcp.Option) (*mcp.Toolset, *serverEnd) {
	t.Helper()
	ctx := context.Background()
	ct, st := sdk.NewInMemoryTransports()
	end := &serverEnd{Transport: st}
	ss, err := srv.Connect(ctx, end, nil)
	require.NoError(t, err)
	ts, err := mcp.Connect(ctx, ct, opts...)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = ts.Close()
		_ = ss.Wait()
	})
	return ts, end
}

// serverEnd is a server transport whose connection the test can cut, as a crashed
// server's would be (ServerSession.Close would wait for the call in progress).
type serverEnd struct {
	sdk.Transport
	conn sdk.Connection
}

func (e *serverEnd) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := e.Transport.Connect(ctx)
	e.conn = c
	return c, err
}

// observe runs a ReAct agent with tools on a model that makes calls in one batch and
// returns what each call's observation was, by call id.
func observe(t *testing.T, ctx context.Context, tools []team.Tool, calls ...team.ToolCall) map[string]team.Observation {
	t.Helper()
	model := testkit.NewScriptedModel(testkit.CallTools(calls...), testkit.Reply("done"))
	agent, err := team.NewReActAgent("clerk", model, team.WithTools(tools...))
	require.NoError(t, err)
	ans, err := agent.Call(ctx, "go", team.NewSession("s-1"))
	require.NoError(t, err)
	require.Equal(t, "done", ans.Content)
	obs := map[string]team.Observation{}
	for _, m := range model.Requests()[1].Messages {
		if m.Role == team.RoleTool {
			var o team.Observation
			require.NoError(t, json.Unmarshal([]byte(m.Content), &o), m.Content)
			obs[m.ToolCallID] = o
		}
	}
	require.Len(t, obs, len(calls))
	return obs
}

func errType(t *testing.T, o team.Observation) team.ErrorType {
	t.Helper()
	require.False(t, o.OK(), "want an error, got %s", o.Result)
	return o.Error.Type
}

func TestToolsConvertSchemas(t *testing.T) {
	ts := inMemory(t, newFixture(nil), mcp.WithPrefix("shop_"))
	byName := map[string]team.Tool{}
	for _, tool := range ts.Tools() {
		byName[tool.Name] = tool
	}
	require.Len(t, byName, 4)
	stock := byName["shop_stock"]
	assert.Equal(t, "Units in stock for a SKU", stock.Description)
	require.NotNil(t, stock.Schema)
	assert.Equal(t, "object", stock.Schema.Type)
	assert.Equal(t, []string{"sku"}, stock.Schema.Required)
	assert.Equal(t, "string", stock.Schema.Properties["sku"].Type)
	assert.Equal(t, "stock keeping unit", stock.Schema.Properties["sku"].Description)
	require.NotNil(t, stock.Schema.AdditionalProperties)
	assert.Equal(t, &jsonschema.Schema{Not: &jsonschema.Schema{}}, stock.Schema.AdditionalProperties, "false: no other property")
	assert.Equal(t, "string", byName["shop_code"].Schema.Properties["code"].Type)
}

func TestAgentUsesMCPTools(t *testing.T) {
	ts := inMemory(t, newFixture(nil))
	obs := observe(t, context.Background(), ts.Tools(),
		testkit.ToolCall("ok", "stock", `{"sku":"A-1"}`),
		testkit.ToolCall("tool-error", "stock", `{"sku":"none"}`),
		testkit.ToolCall("wrong-type", "stock", `{"sku":5}`),
		testkit.ToolCall("unknown-field", "stock", `{"sku":"A-1","qty":1}`),
		testkit.ToolCall("pattern", "code", `{"code":"a1"}`),
		testkit.ToolCall("text", "code", `{"code":"A-1"}`),
	)
	require.True(t, obs["ok"].OK())
	assert.JSONEq(t, `{"units":12}`, string(obs["ok"].Result))
	assert.Equal(t, team.TypeToolFailed, errType(t, obs["tool-error"]))
	assert.Contains(t, obs["tool-error"].Error.Message, "no such SKU")
	assert.False(t, obs["tool-error"].Error.Retry)
	assert.Equal(t, team.TypeInvalidArguments, errType(t, obs["wrong-type"]))
	assert.Equal(t, team.TypeInvalidArguments, errType(t, obs["unknown-field"]))
	assert.Equal(t, team.TypeInvalidArguments, errType(t, obs["pattern"]))
	assert.Contains(t, obs["pattern"].Error.Message, "pattern")
	require.True(t, obs["text"].OK())
	assert.JSONEq(t, `"{\"code\":\"A-1\"}"`, string(obs["text"].Result))
}

func TestCallTimeout(t *testing.T) {
	ts := inMemory(t, newFixture(nil), mcp.WithCallTimeout(20*time.Millisecond))
	obs := observe(t, context.Background(), ts.Tools(),
		testkit.ToolCall("slow", "wait", `{}`), testkit.ToolCall("after", "stock", `{"sku":"A-1"}`))
	assert.Equal(t, team.TypeTimeout, errType(t, obs["slow"]))
	assert.True(t, obs["slow"].Error.Retry)
	assert.True(t, obs["after"].OK(), "the session outlives a call that timed out")
}

func TestCallHonoursContextDeadline(t *testing.T) {
	ts := inMemory(t, newFixture(nil))
	wait := findTool(t, ts.Tools(), "wait")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := wait.Func(ctx, json.RawMessage(`{}`))
	var e *team.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, team.TypeTimeout, e.Type)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestServerDropsConnectionInMemory(t *testing.T) {
	var end *serverEnd
	var ts *mcp.Toolset
	ts, end = inMemoryConn(t, newFixture(func(*sdk.CallToolRequest) <-chan struct{} {
		_ = end.conn.Close()
		return nil
	}))
	obs := observe(t, context.Background(), ts.Tools(),
		testkit.ToolCall("drop", "drop", `{}`), testkit.ToolCall("after", "stock", `{"sku":"A-1"}`))
	assert.Equal(t, team.TypeSourceUnavailable, errType(t, obs["drop"]))
	assert.True(t, obs["drop"].Error.Retry)
	assert.Equal(t, team.TypeSourceUnavailable, errType(t, obs["after"]), "a closed session fails at once")
}

func TestStreamableHTTP(t *testing.T) {
	var hs *httptest.Server
	released := make(chan struct{})
	srv := newFixture(func(*sdk.CallToolRequest) <-chan struct{} {
		hs.CloseClientConnections()
		return released
	})
	hs = httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer hs.Close()
	// The dropped connection kept the client from ending its session on the server:
	// end it there, or its reader outlives the test.
	t.Cleanup(func() {
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ts, err := mcp.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1, DisableStandaloneSSE: true})
	require.NoError(t, err)
	defer ts.Close()
	obs := observe(t, ctx, ts.Tools(),
		testkit.ToolCall("ok", "stock", `{"sku":"A-1"}`),
		testkit.ToolCall("tool-error", "stock", `{"sku":"none"}`),
		testkit.ToolCall("drop", "drop", `{}`))
	close(released) // the dropped call's handler ends, so that the session can close
	assert.JSONEq(t, `{"units":12}`, string(obs["ok"].Result))
	assert.Equal(t, team.TypeToolFailed, errType(t, obs["tool-error"]))
	assert.Equal(t, team.TypeSourceUnavailable, errType(t, obs["drop"]), obs["drop"].Error.Message)
}

// The server is a real process (this test binary in server mode, see TestMain) that
// exits during a call.
func TestStdioServerDiesMidCall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serverEnv+"=1")
	ts, err := mcp.Connect(ctx, &sdk.CommandTransport{Command: cmd})
	require.NoError(t, err)
	defer ts.Close()
	obs := observe(t, ctx, ts.Tools(),
		testkit.ToolCall("ok", "stock", `{"sku":"A-1"}`),
		testkit.ToolCall("tool-error", "stock", `{"sku":"none"}`),
		testkit.ToolCall("die", "drop", `{}`),
		testkit.ToolCall("after", "stock", `{"sku":"A-1"}`))
	assert.JSONEq(t, `{"units":12}`, string(obs["ok"].Result))
	assert.Equal(t, team.TypeToolFailed, errType(t, obs["tool-error"]))
	assert.Equal(t, team.TypeSourceUnavailable, errType(t, obs["die"]))
	assert.Equal(t, team.TypeSourceUnavailable, errType(t, obs["after"]))
	require.NoError(t, ctx.Err(), "the failure came from the dead process, not the test's deadline")
}

func findTool(t testing.TB, tools []team.Tool, name string) team.Tool {
	t.Helper()
	for _, tool := range tools {
		if tool.Name == name {
			return tool
		}
	}
	t.Fatalf("no tool %q", name)
	return team.Tool{}
}

// A tool's schema is the server's full JSON Schema ($ref, type lists, lengths, schemas
// for extra properties; a $schema of another draft read as 2020-12), and the agent
// checks all of it before a call leaves.
func TestToolSchemaFull(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "schemas"}, nil)
	echo := func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
	}
	srv.AddTool(&sdk.Tool{Name: "order", InputSchema: json.RawMessage(`{
		"$schema": "http://json-schema.org/draft-04/schema#",
		"type": "object",
		"$defs": {"qty": {"type": "integer", "minimum": 1}},
		"properties": {
			"qty": {"$ref": "#/$defs/qty"},
			"note": {"type": ["string", "null"], "maxLength": 5},
			"tags": {"type": "array", "items": {"type": "string"}}
		},
		"required": ["qty"],
		"additionalProperties": {"type": "boolean"}
	}`)}, echo)
	ts := inMemory(t, srv)
	order := findTool(t, ts.Tools(), "order")
	assert.Equal(t, "array", order.Schema.Properties["tags"].Type)
	assert.Equal(t, "string", order.Schema.Properties["tags"].Items.Type)
	assert.Equal(t, []string{"string", "null"}, order.Schema.Properties["note"].Types)
	assert.Equal(t, "boolean", order.Schema.AdditionalProperties.Type)
	assert.Empty(t, order.Schema.Schema, "draft-04 is read as 2020-12")

	obs := observe(t, context.Background(), ts.Tools(),
		testkit.ToolCall("ok", "order", `{"qty":2,"note":null,"tags":["a"],"gift":true}`),
		testkit.ToolCall("no-qty", "order", `{"note":"x"}`),
		testkit.ToolCall("ref", "order", `{"qty":0}`),
		testkit.ToolCall("long", "order", `{"qty":1,"note":"too long"}`),
		testkit.ToolCall("extra", "order", `{"qty":1,"gift":"yes"}`),
		testkit.ToolCall("items", "order", `{"qty":1,"tags":[1]}`))
	assert.True(t, obs["ok"].OK(), "%+v", obs["ok"].Error)
	for _, id := range []string{"no-qty", "ref", "long", "extra", "items"} {
		assert.Equal(t, team.TypeInvalidArguments, errType(t, obs[id]), id)
	}
}

func TestToolAfterClose(t *testing.T) {
	ts := inMemory(t, newFixture(nil))
	stock := findTool(t, ts.Tools(), "stock")
	require.NoError(t, ts.Close())
	_, err := stock.Func(context.Background(), json.RawMessage(`{"sku":"A-1"}`))
	assert.ErrorIs(t, err, &team.Error{Type: team.TypeSourceUnavailable})
}
