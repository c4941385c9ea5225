package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/flowteam/flowteam/team"
)

// requestError classifies a failed request: an error status when the SDK got a
// response (hres), else a failure to get or read one. parent is the caller's
// context, actx the attempt's.
func (m *Model) requestError(parent, actx context.Context, hres *http.Response, err error) *team.Error {
	if hres != nil && hres.StatusCode >= 400 && parent.Err() == nil && actx.Err() == nil {
		return statusError(hres)
	}
	return transportError(parent, actx, err)
}

// transportError classifies a failure to get or read a response.
func transportError(parent, actx context.Context, err error) *team.Error {
	var ne net.Error
	switch {
	case parent.Err() != nil && errors.Is(parent.Err(), context.Canceled):
		return team.ContextError(parent) // the cause's message, context.Canceled in the chain
	case errors.Is(actx.Err(), context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return &team.Error{Type: team.TypeTimeout, Retry: true, Message: "no answer in time", Err: err}
	case actx.Err() != nil:
		return &team.Error{Type: team.TypeCancelled, Message: "request cancelled", Err: actx.Err()}
	}
	return &team.Error{Type: team.TypeSourceUnavailable, Retry: true, Message: redactURL(err), Err: err}
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

// apiError is the error object of a response body or a stream event. The SDK's
// openai.Error reads code as a string only; providers also send numbers.
type apiError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// parseAPIError reads {"error": {...}} from body; nil when body holds none.
func parseAPIError(body []byte) *apiError {
	var wrap struct {
		Error *apiError `json:"error"`
	}
	if json.Unmarshal(body, &wrap) != nil {
		return nil
	}
	return wrap.Error
}

// code returns the provider's error code, else its error type.
func (o *apiError) code() string {
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
func (o *apiError) error() *team.Error {
	e := &team.Error{Type: team.TypeSourceUnavailable, Retry: true, Message: o.Message, Code: o.code()}
	if e.Message == "" {
		e.Message = "the provider reported an error"
	}
	switch kind := strings.ToLower(e.Code + " " + o.Type); {
	case strings.Contains(kind, "insufficient_quota"):
		e.Type, e.Retry = team.TypeRateLimited, false
	case strings.Contains(kind, "rate_limit"):
		e.Type = team.TypeRateLimited
	case strings.Contains(kind, "auth"), strings.Contains(kind, "permission"):
		e.Type, e.Retry = team.TypeAuthDenied, false
	case strings.Contains(kind, "invalid_request"), strings.Contains(kind, "context_length"):
		e.Type, e.Retry = team.TypeInvalidQuery, false
	}
	return e
}

// statusError classifies a response with an error status. The SDK leaves the body
// readable for this.
func statusError(resp *http.Response) *team.Error {
	var body []byte
	if resp.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	e := &team.Error{Status: resp.StatusCode}
	if ae := parseAPIError(body); ae != nil {
		e.Message, e.Code = ae.Message, ae.code()
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
		e.Type = team.TypeAuthDenied
	case s == http.StatusNotFound:
		e.Type = team.TypeNotFound
	case s == http.StatusRequestTimeout || s == http.StatusGatewayTimeout:
		e.Type, e.Retry = team.TypeTimeout, true
	case s == http.StatusTooManyRequests:
		// A quota that is used up does not come back by waiting.
		e.Type, e.Retry = team.TypeRateLimited, e.Code != "insufficient_quota"
	case s >= 500:
		e.Type, e.Retry = team.TypeSourceUnavailable, true
	default:
		e.Type = team.TypeInvalidQuery
	}
	if e.Retry {
		e.RetryAfter = retryAfter(resp.Header)
	}
	return e
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date, which is taken
// relative to the response's Date header (the server's clock, so that a skewed
// local clock does not stretch or cut the wait), else to the local clock.
func retryAfter(h http.Header) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
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
	t, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	now, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		now = time.Now()
	}
	return max(t.Sub(now), 0)
}
