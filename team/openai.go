package team

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/flowteam/flowteam/trace"
)

// OpenAIConfig configures an OpenAI-compatible chat-completions client. Any provider
// that speaks POST {BaseURL}/chat/completions works (OpenAI, DeepSeek, vLLM, Ollama,
// LM Studio, ...).
type OpenAIConfig struct {
	// BaseURL is the API root, for example "https://api.openai.com/v1".
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none. It is never logged or put in
	// an error.
	APIKey string
	// Model is the default model of every request (ChatOptions.Model overrides it).
	Model string
	// HTTPClient defaults to a client without a timeout (use Timeout and contexts).
	HTTPClient *http.Client
	// Timeout bounds each attempt, reading the answer (the whole stream) included; an
	// attempt that runs out is a retryable timeout. Zero: only ctx bounds a call.
	Timeout time.Duration
	// Retry bounds the retries of retryable failures.
	Retry RetryPolicy
	// Headers are added to every request.
	Headers map[string]string
	// Sleep waits between retries (default SleepContext); Now reads the clock for
	// Retry-After dates (default time.Now). Tests replace both.
	Sleep Sleeper
	Now   func() time.Time
}

// OpenAI is a ChatModel and StreamingModel over an OpenAI-compatible HTTP API. It is
// safe for concurrent use.
type OpenAI struct {
	cfg OpenAIConfig
	url string
}

var _ StreamingModel = (*OpenAI)(nil)

// NewOpenAI returns a client. BaseURL and Model are required.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	if cfg.BaseURL == "" {
		return nil, errors.New("openai: no base URL")
	}
	if cfg.Model == "" {
		return nil, errors.New("openai: no model")
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.Sleep == nil {
		cfg.Sleep = SleepContext
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Retry = cfg.Retry.withDefaults()
	return &OpenAI{cfg: cfg, url: strings.TrimRight(cfg.BaseURL, "/") + "/chat/completions"}, nil
}

// Chat sends one chat-completion request, retrying retryable failures as the retry
// policy allows.
func (c *OpenAI) Chat(ctx context.Context, req *ChatRequest) (*ChatResponse, error) {
	body, err := c.body(req, false)
	if err != nil {
		return nil, err
	}
	var out *ChatResponse
	err = c.retry(ctx, func() *Error {
		actx, cancel := c.attemptContext(ctx)
		defer cancel()
		resp, e := c.send(ctx, actx, body)
		if e != nil {
			return e
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			return c.transportError(ctx, actx, err)
		}
		out, e = parseResponse(data)
		return e
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// attemptContext bounds one attempt by the configured timeout.
func (c *OpenAI) attemptContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.cfg.Timeout > 0 {
		return context.WithTimeout(ctx, c.cfg.Timeout)
	}
	return context.WithCancel(ctx)
}

// retry runs attempt until it succeeds, fails for good, or the policy gives up.
func (c *OpenAI) retry(ctx context.Context, attempt func() *Error) error {
	p := c.cfg.Retry
	for n := 1; ; n++ {
		e := attempt()
		if e == nil {
			return nil
		}
		e.Attempts = n
		if !e.Retry || n >= p.MaxAttempts || ctx.Err() != nil {
			return e
		}
		wait := p.delay(n)
		if e.RetryAfter > 0 {
			if e.RetryAfter > p.MaxRetryAfter {
				return e
			}
			wait = e.RetryAfter
		}
		if err := c.cfg.Sleep(ctx, wait); err != nil {
			return AsError(err, TypeCancelled)
		}
		trace.Count(ctx, trace.CountRetry, 1) // for the run's metrics interceptor, if any
	}
}

// send posts body and returns the response when its status is 200; any other outcome
// is a classified error. The caller closes the body.
func (c *OpenAI) send(parent, actx context.Context, body []byte) (*http.Response, *Error) {
	hreq, err := http.NewRequestWithContext(actx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, &Error{Type: TypeInvalidQuery, Message: err.Error(), Err: err}
	}
	hreq.Header.Set("Content-Type", "application/json")
	if c.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	for k, v := range c.cfg.Headers {
		hreq.Header.Set(k, v)
	}
	resp, err := c.cfg.HTTPClient.Do(hreq)
	if err != nil {
		return nil, c.transportError(parent, actx, err)
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return nil, c.statusError(resp, data)
}

// transportError classifies a failure to get or read a response. parent is the
// caller's context, actx the attempt's.
func (c *OpenAI) transportError(parent, actx context.Context, err error) *Error {
	var ne net.Error
	switch {
	case parent.Err() != nil && errors.Is(parent.Err(), context.Canceled):
		return &Error{Type: TypeCancelled, Message: "request cancelled", Err: parent.Err()}
	case errors.Is(actx.Err(), context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return &Error{Type: TypeTimeout, Retry: true, Message: "no answer in time", Err: err}
	case actx.Err() != nil:
		return &Error{Type: TypeCancelled, Message: "request cancelled", Err: actx.Err()}
	}
	return &Error{Type: TypeSourceUnavailable, Retry: true, Message: redactURL(err), Err: err}
}

// redactURL keeps error messages free of query strings and user info (some gateways
// take keys there).
func redactURL(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil {
			u.RawQuery, u.User = "", nil
			return (&url.Error{Op: ue.Op, URL: u.String(), Err: ue.Err}).Error()
		}
	}
	return err.Error()
}

type apiError struct {
	Error *oaError `json:"error"`
}

// oaError is the error object of a response body or a stream event.
type oaError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// code returns the provider's error code, else its error type.
func (o *oaError) code() string {
	var code string
	if json.Unmarshal(o.Code, &code) != nil {
		code = strings.Trim(string(o.Code), `"`)
	}
	if code == "null" {
		code = ""
	}
	if code == "" {
		code = o.Type
	}
	return code
}

// error classifies an error object that came without an HTTP status saying what
// went wrong: in a 200 response or in a stream event. The provider failed the
// request, as with a 5xx (source_unavailable, retryable), unless its code or type
// says the request itself, the credentials or a rate limit is the cause.
func (o *oaError) error() *Error {
	e := &Error{Type: TypeSourceUnavailable, Retry: true, Message: o.Message, Code: o.code()}
	if e.Message == "" {
		e.Message = "the provider reported an error"
	}
	switch kind := strings.ToLower(e.Code + " " + o.Type); {
	case strings.Contains(kind, "insufficient_quota"):
		e.Type, e.Retry = TypeRateLimited, false
	case strings.Contains(kind, "rate_limit"):
		e.Type = TypeRateLimited
	case strings.Contains(kind, "auth"), strings.Contains(kind, "permission"):
		e.Type, e.Retry = TypeAuthDenied, false
	case strings.Contains(kind, "invalid_request"), strings.Contains(kind, "context_length"):
		e.Type, e.Retry = TypeInvalidQuery, false
	}
	return e
}

// statusError classifies a non-200 response.
func (c *OpenAI) statusError(resp *http.Response, body []byte) *Error {
	e := &Error{Status: resp.StatusCode}
	var ae apiError
	if json.Unmarshal(body, &ae) == nil && ae.Error != nil {
		e.Message = ae.Error.Message
		e.Code = ae.Error.code()
	} else {
		e.Message = strings.TrimSpace(string(body))
		if len(e.Message) > 200 {
			e.Message = e.Message[:200] + "..."
		}
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	switch s := resp.StatusCode; {
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		e.Type = TypeAuthDenied
	case s == http.StatusNotFound:
		e.Type = TypeNotFound
	case s == http.StatusRequestTimeout || s == http.StatusGatewayTimeout:
		e.Type, e.Retry = TypeTimeout, true
	case s == http.StatusTooManyRequests:
		// A quota that is used up does not come back by waiting.
		e.Type, e.Retry = TypeRateLimited, e.Code != "insufficient_quota"
	case s >= 500:
		e.Type, e.Retry = TypeSourceUnavailable, true
	default:
		e.Type = TypeInvalidQuery
	}
	if e.Retry {
		e.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), c.cfg.Now())
	}
	return e
}

// parseRetryAfter reads a Retry-After header: seconds, or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		if secs >= float64(math.MaxInt64/time.Second) {
			// The conversion would overflow to a negative wait, read as none: the
			// retry would be made at once instead of refused as too far away.
			return time.Duration(math.MaxInt64)
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

type oaFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type oaToolCall struct {
	ID       string     `json:"id"`
	Type     string     `json:"type"`
	Function oaFunction `json:"function"`
}

type oaMessage struct {
	Role       string       `json:"role"`
	Content    *string      `json:"content"`
	ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
}

type oaTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string  `json:"name"`
		Description string  `json:"description,omitempty"`
		Parameters  *Schema `json:"parameters"`
	} `json:"function"`
}

// body builds the request body.
func (c *OpenAI) body(req *ChatRequest, stream bool) ([]byte, error) {
	o := req.Options
	b := map[string]any{}
	maps.Copy(b, o.Extra)
	model := o.Model
	if model == "" {
		model = c.cfg.Model
	}
	b["model"] = model
	msgs := make([]oaMessage, 0, len(req.Messages))
	for _, m := range req.Messages {
		om := oaMessage{Role: string(m.Role), ToolCallID: m.ToolCallID}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			content := m.Content
			om.Content = &content
		}
		for _, tc := range m.ToolCalls {
			args := string(tc.Args)
			if args == "" {
				args = "{}"
			}
			om.ToolCalls = append(om.ToolCalls, oaToolCall{ID: tc.ID, Type: "function", Function: oaFunction{Name: tc.Name, Arguments: args}})
		}
		msgs = append(msgs, om)
	}
	b["messages"] = msgs
	if len(req.Tools) > 0 {
		tools := make([]oaTool, len(req.Tools))
		for i, t := range req.Tools {
			tools[i].Type = "function"
			tools[i].Function.Name, tools[i].Function.Description, tools[i].Function.Parameters = t.Name, t.Description, t.Parameters
			if t.Parameters == nil {
				tools[i].Function.Parameters = &Schema{Type: "object", Properties: map[string]*Schema{}}
			}
		}
		b["tools"] = tools
	}
	switch o.ToolChoice {
	case "":
	case "auto", "none", "required":
		b["tool_choice"] = o.ToolChoice
	default:
		b["tool_choice"] = map[string]any{"type": "function", "function": map[string]string{"name": o.ToolChoice}}
	}
	if o.Temperature != nil {
		b["temperature"] = *o.Temperature
	}
	if o.TopP != nil {
		b["top_p"] = *o.TopP
	}
	if o.MaxTokens > 0 {
		b["max_tokens"] = o.MaxTokens
	}
	if len(o.Stop) > 0 {
		b["stop"] = o.Stop
	}
	if stream {
		b["stream"] = true
		b["stream_options"] = map[string]bool{"include_usage": true}
	}
	data, err := json.Marshal(b)
	if err != nil {
		return nil, &Error{Type: TypeInvalidQuery, Message: "request: " + err.Error(), Err: err}
	}
	return data, nil
}

type oaUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	// Some providers (DeepSeek) report cache hits at the top level.
	PromptCacheHitTokens int64 `json:"prompt_cache_hit_tokens"`
}

func (u *oaUsage) usage() Usage {
	out := Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens,
		CachedTokens: u.PromptCacheHitTokens}
	if d := u.PromptTokensDetails; d != nil && d.CachedTokens > 0 {
		out.CachedTokens = d.CachedTokens
	}
	if d := u.CompletionTokensDetails; d != nil {
		out.ReasoningTokens = d.ReasoningTokens
	}
	if out.TotalTokens == 0 {
		out.TotalTokens = out.PromptTokens + out.CompletionTokens
	}
	return out
}

type oaRespToolCall struct {
	Index    *int       `json:"index"`
	ID       string     `json:"id"`
	Function oaFunction `json:"function"`
}

type oaRespMessage struct {
	Content          string           `json:"content"`
	ReasoningContent string           `json:"reasoning_content"`
	Reasoning        string           `json:"reasoning"`
	ToolCalls        []oaRespToolCall `json:"tool_calls"`
}

func (m *oaRespMessage) reasoning() string {
	if m.ReasoningContent != "" {
		return m.ReasoningContent
	}
	return m.Reasoning
}

type oaResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Index        int           `json:"index"`
		Message      oaRespMessage `json:"message"`
		Delta        oaRespMessage `json:"delta"`
		FinishReason *string       `json:"finish_reason"`
	} `json:"choices"`
	Usage *oaUsage `json:"usage"`
	apiError
}

func parseResponse(data []byte) (*ChatResponse, *Error) {
	var r oaResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, &Error{Type: TypeBadResponse, Message: "response is not JSON: " + err.Error(), Err: err}
	}
	if r.Error != nil {
		return nil, r.Error.error()
	}
	if len(r.Choices) == 0 {
		return nil, &Error{Type: TypeBadResponse, Message: "response has no choices"}
	}
	ch := r.Choices[0]
	out := &ChatResponse{Model: r.Model, Message: Message{Role: RoleAssistant, Content: ch.Message.Content, Reasoning: ch.Message.reasoning()}}
	if ch.FinishReason != nil {
		out.FinishReason = *ch.FinishReason
	}
	for _, tc := range ch.Message.ToolCalls {
		call := ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: rawArgs([]byte(tc.Function.Arguments))}
		out.Message.ToolCalls = append(out.Message.ToolCalls, call)
	}
	if r.Usage != nil {
		out.Usage = r.Usage.usage()
	}
	return out, nil
}
