package openai

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/flowteam/flowteam/flow"
	"github.com/flowteam/flowteam/internal/retry"
	"github.com/flowteam/flowteam/team"
	"github.com/flowteam/flowteam/trace"
)

// DefaultBaseURL is the API root used when WithBaseURL is not given.
const DefaultBaseURL = "https://api.openai.com/v1"

// Model is a team.ChatModel and team.StreamingModel on the official OpenAI Go SDK,
// for any provider that speaks POST {base URL}/chat/completions (OpenAI, DeepSeek,
// vLLM, Ollama, LM Studio, ...). It is safe for concurrent use.
type Model struct {
	model         string
	apiKey        string // masked in the messages of errors
	svc           oai.ChatCompletionService
	timeout       time.Duration
	retry         flow.RetryPolicy
	maxRetryAfter time.Duration
	clock         flow.Clock
}

var _ team.StreamingModel = (*Model)(nil)

// Option configures a Model.
type Option func(*config)

type config struct {
	baseURL, apiKey string
	httpClient      *http.Client
	headers         [][2]string
	timeout         time.Duration
	retry           flow.RetryPolicy
	maxRetryAfter   time.Duration
	clock           flow.Clock
	sdk             []option.RequestOption
}

// WithBaseURL sets the API root, for example "http://localhost:11434/v1" for Ollama
// (default DefaultBaseURL).
func WithBaseURL(url string) Option { return func(c *config) { c.baseURL = url } }

// WithAPIKey sets the key sent as a bearer token; without it none is sent. The key is
// never put in an error.
func WithAPIKey(key string) Option { return func(c *config) { c.apiKey = key } }

// WithHTTPClient sets the HTTP client (default http.DefaultClient).
func WithHTTPClient(hc *http.Client) Option { return func(c *config) { c.httpClient = hc } }

// WithHeader adds a header to every request.
func WithHeader(key, value string) Option {
	return func(c *config) { c.headers = append(c.headers, [2]string{key, value}) }
}

// WithTimeout bounds each attempt, reading the answer (the whole stream) included; an
// attempt that runs out is a retryable timeout. Zero (the default): only the caller's
// context bounds a call.
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// WithRetry sets the retry policy of retryable failures (timeout, rate_limited,
// source_unavailable): at most p.Max attempts in all, with flow.Backoff between them.
// Zero fields take the defaults: 3 attempts, 500ms doubling up to 30s, with
// jitter unless p.NoJitter. flow.RetryPolicy{Max: 1} makes a single attempt.
func WithRetry(p flow.RetryPolicy) Option { return func(c *config) { c.retry = p } }

// WithMaxRetryAfter bounds the Retry-After the client waits for (default one
// minute): a longer one returns the rate_limited error at once, with its RetryAfter,
// for the caller to decide.
func WithMaxRetryAfter(d time.Duration) Option { return func(c *config) { c.maxRetryAfter = d } }

// WithClock replaces the clock the client waits on between retries (tests use one
// that does not sleep).
func WithClock(clk flow.Clock) Option { return func(c *config) { c.clock = clk } }

// WithRequestOptions passes options to the SDK (organization, project, middleware).
// Options that change retries are overridden: the client retries itself.
func WithRequestOptions(opts ...option.RequestOption) Option {
	return func(c *config) { c.sdk = append(c.sdk, opts...) }
}

// New returns a client for the given default model (team.ChatOptions.Model overrides
// it per request).
func New(model string, opts ...Option) (*Model, error) {
	if model == "" {
		return nil, errors.New("openai: no model")
	}
	c := config{baseURL: DefaultBaseURL, maxRetryAfter: retry.MaxAfter, clock: realClock{}}
	for _, o := range opts {
		o(&c)
	}
	if c.baseURL == "" {
		return nil, errors.New("openai: no base URL")
	}
	sdk := []option.RequestOption{option.WithBaseURL(c.baseURL)}
	if c.apiKey != "" {
		sdk = append(sdk, option.WithAPIKey(c.apiKey))
	}
	if c.httpClient != nil {
		sdk = append(sdk, option.WithHTTPClient(c.httpClient))
	}
	for _, h := range c.headers {
		sdk = append(sdk, option.WithHeader(h[0], h[1]))
	}
	// One retry loop, ours (flow's policy and backoff): the SDK's would multiply it.
	sdk = append(append(sdk, c.sdk...), option.WithMaxRetries(0))
	return &Model{
		model: model, apiKey: c.apiKey, svc: oai.NewChatCompletionService(sdk...), timeout: c.timeout,
		retry: retry.Defaults(c.retry), maxRetryAfter: c.maxRetryAfter, clock: c.clock,
	}, nil
}

// masked returns e with the API key masked in its message and code: a provider that
// echoes the key it refused (some gateways do) does not put it in the error.
func (m *Model) masked(e *team.Error) *team.Error {
	if m.apiKey != "" {
		e.Message = strings.ReplaceAll(e.Message, m.apiKey, "***")
		e.Code = strings.ReplaceAll(e.Code, m.apiKey, "***")
	}
	return e
}

type realClock struct{}

func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Chat sends one chat-completion request, retrying retryable failures as the retry
// policy allows. Failures are *team.Error: 401/403 auth_denied, 404 not_found, 400
// and other 4xx invalid_query, 429 rate_limited (retryable unless the quota is
// exhausted), 5xx source_unavailable (retryable), 408/504 and attempt timeouts
// timeout (retryable), an unreadable answer bad_response, the caller's context ending
// cancelled. An error object in a 200 response is classified by its code and type,
// and is otherwise source_unavailable, like a 5xx.
func (m *Model) Chat(ctx context.Context, req *team.ChatRequest) (*team.ChatResponse, error) {
	params, err := m.params(req, false)
	if err != nil {
		return nil, err
	}
	var out *team.ChatResponse
	err = m.retryLoop(ctx, func() *team.Error {
		actx, cancel := m.attemptContext(ctx)
		defer cancel()
		var (
			raw  []byte
			hres *http.Response
		)
		_, err := m.svc.New(actx, params, option.WithResponseBodyInto(&raw), option.WithResponseInto(&hres))
		if err != nil {
			return m.requestError(ctx, actx, hres, err)
		}
		d, e := parseResponse(raw)
		if e == nil {
			out, _ = team.Collect(func(yield func(team.Delta, error) bool) { yield(d, nil) })
		}
		return e
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// attemptContext bounds one attempt by the configured timeout.
func (m *Model) attemptContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if m.timeout > 0 {
		return context.WithTimeout(ctx, m.timeout)
	}
	return context.WithCancel(ctx)
}

// retryLoop runs attempt until it succeeds, fails for good, or the policy gives up. A
// Retry-After replaces the backoff; one longer than the allowed maximum ends the loop.
func (m *Model) retryLoop(ctx context.Context, attempt func() *team.Error) error {
	for n := 1; ; n++ {
		e := attempt()
		if e == nil {
			return nil
		}
		e.Attempts = n
		if !e.Retry || n >= m.retry.Max || ctx.Err() != nil {
			return m.masked(e)
		}
		wait, ok := retry.Wait(m.retry, m.maxRetryAfter, e, n)
		if !ok {
			return m.masked(e)
		}
		select {
		case <-m.clock.After(wait):
		case <-ctx.Done():
			return team.ContextError(ctx) // ctx.Err() in the chain, whatever the cause
		}
		trace.Count(ctx, trace.CountRetry, 1) // for the run's metrics interceptor, if any
	}
}
