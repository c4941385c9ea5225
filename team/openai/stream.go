package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"mime"
	"net/http"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/flowteam/flowteam/team"
)

// ChatStream sends a streaming chat-completion request (server-sent events) and
// yields the deltas as they arrive; usage comes with the last one (the request asks
// for it with stream_options.include_usage). Only the first choice is streamed, as
// Chat answers with it. A failure before the caller has seen any of the answer (an
// error status, an error event, a lost connection, a stream that ends early) is
// retried like Chat's. A failure after it is yielded as the last element, with the
// type of its cause but not retryable, and not retried: a retry would give the caller
// a second, different beginning of the answer. Breaking the loop closes the
// connection. A gateway that ignores "stream" and answers with one JSON response is
// read as a single delta.
func (m *Model) ChatStream(ctx context.Context, req *team.ChatRequest) iter.Seq2[team.Delta, error] {
	return func(yield func(team.Delta, error) bool) {
		params, err := m.params(req, true)
		if err != nil {
			yield(team.Delta{}, err)
			return
		}
		var seen, stopped bool // the caller has seen part of the answer; it broke the loop
		send := func(d team.Delta) bool {
			seen = seen || d.Content != "" || d.Reasoning != "" || len(d.ToolCalls) > 0
			stopped = !yield(d, nil)
			return !stopped
		}
		err = m.retryLoop(ctx, func() *team.Error {
			// Each attempt's context bounds reading its stream too.
			actx, cancel := m.attemptContext(ctx)
			defer cancel()
			e := m.streamAttempt(ctx, actx, params, send)
			if e != nil && seen {
				e.Retry, e.RetryAfter = false, 0
				e.Message = "stream failed after part of the answer: " + e.Message
			}
			return e
		})
		if err != nil && !stopped {
			yield(team.Delta{}, err)
		}
	}
}

// streamAttempt makes one streaming request and passes its deltas to send; it stops
// when send returns false.
func (m *Model) streamAttempt(ctx, actx context.Context, params oai.ChatCompletionNewParams, send func(team.Delta) bool) *team.Error {
	var (
		hres *http.Response
		full []byte // the body of a JSON answer to a streaming request
	)
	takeJSON := func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		res, err := next(r)
		if err == nil && res.StatusCode == http.StatusOK && isJSON(res.Header.Get("Content-Type")) {
			full, err = io.ReadAll(res.Body)
			_ = res.Body.Close()
			res.Body = http.NoBody
		}
		return res, err
	}
	stream := m.svc.NewStreaming(actx, params, option.WithResponseInto(&hres), option.WithMiddleware(takeJSON))
	defer stream.Close()
	var s streamState
	for stream.Next() {
		if !send(s.delta(stream.Current())) {
			return nil
		}
	}
	if err := stream.Err(); err != nil {
		return m.streamError(ctx, actx, hres, err)
	}
	if full != nil {
		d, e := parseResponse(full)
		if e == nil {
			send(d)
		}
		return e
	}
	switch {
	case s.finished:
		return nil
	case actx.Err() != nil:
		return transportError(ctx, actx, actx.Err())
	case !s.answered:
		// Chat fails a response without choices; a stream of none is no empty answer
		// either.
		return &team.Error{Type: team.TypeBadResponse, Message: "stream ended without an answer (no choices)"}
	}
	// The provider dropped the answer, as with a 5xx.
	return &team.Error{Type: team.TypeSourceUnavailable, Retry: true, Message: "stream ended before the answer was complete"}
}

// streamError classifies the error a stream ended with.
func (m *Model) streamError(ctx, actx context.Context, hres *http.Response, err error) *team.Error {
	var (
		se  *ssestream.StreamError
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &se):
		if ae := parseAPIError(se.Event.Data); ae != nil {
			return ae.error()
		}
		return (&apiError{Message: se.Message}).error()
	case errors.As(err, &syn), errors.As(err, &typ):
		return &team.Error{Type: team.TypeBadResponse, Message: "stream event is not JSON: " + err.Error(), Err: err}
	}
	return m.requestError(ctx, actx, hres, err)
}

func isJSON(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "application/json"
}

// streamState follows a stream's first choice.
type streamState struct {
	answered bool // a chunk carried the first choice
	finished bool // the first choice has its finish reason
}

// delta converts one chunk.
func (s *streamState) delta(chunk oai.ChatCompletionChunk) team.Delta {
	d := team.Delta{Model: chunk.Model}
	if chunk.JSON.Usage.Valid() {
		u := usage(chunk.Usage)
		d.Usage = &u
	}
	for _, ch := range chunk.Choices {
		if ch.Index != 0 {
			// Another candidate answer (a request with n > 1): Chat answers with the
			// first choice, and the stream must not splice the others into it.
			continue
		}
		s.answered = true
		d.Content += ch.Delta.Content
		d.Reasoning += reasoning(ch.Delta.JSON.ExtraFields)
		if ch.FinishReason != "" {
			d.FinishReason, s.finished = ch.FinishReason, true
		}
		for i, tc := range ch.Delta.ToolCalls {
			idx := int(tc.Index)
			if !tc.JSON.Index.Valid() {
				idx = i
			}
			d.ToolCalls = append(d.ToolCalls, team.ToolCallDelta{Index: idx, ID: tc.ID, Name: tc.Function.Name, Args: tc.Function.Arguments})
		}
	}
	return d
}
