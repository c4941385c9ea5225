package team

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"strings"
)

// ChatStream sends a streaming chat-completion request (server-sent events) and
// yields the deltas as they arrive; usage comes with the last one (the request asks
// for it with stream_options.include_usage). A failure before the caller has seen any
// of the answer (an error status, an error event, a lost connection, a stream that
// ends early) is retried like Chat's. A failure after it is yielded as the last
// element, with the type of its cause but not retryable, and not retried: a retry
// would give the caller a second, different beginning of the answer. Breaking the
// loop closes the connection.
func (c *OpenAI) ChatStream(ctx context.Context, req *ChatRequest) iter.Seq2[Delta, error] {
	return func(yield func(Delta, error) bool) {
		body, err := c.body(req, true)
		if err != nil {
			yield(Delta{}, err)
			return
		}
		var seen, stopped bool // the caller has seen part of the answer; it broke the loop
		send := func(d Delta) bool {
			seen = seen || d.Content != "" || d.Reasoning != "" || len(d.ToolCalls) > 0
			stopped = !yield(d, nil)
			return !stopped
		}
		err = c.retry(ctx, func() *Error {
			// Each attempt's context bounds reading its stream too.
			actx, cancel := c.attemptContext(ctx)
			defer cancel()
			e := c.streamAttempt(ctx, actx, body, send)
			if e != nil && seen {
				e.Retry, e.RetryAfter = false, 0
				e.Message = "stream failed after part of the answer: " + e.Message
			}
			return e
		})
		if err != nil && !stopped {
			yield(Delta{}, err)
		}
	}
}

// streamAttempt makes one streaming request and passes its deltas to send; it stops
// when send returns false.
func (c *OpenAI) streamAttempt(ctx, actx context.Context, body []byte, send func(Delta) bool) *Error {
	resp, e := c.send(ctx, actx, body)
	if e != nil {
		return e
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		// A gateway that ignores "stream": the whole answer as one delta.
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			return c.transportError(ctx, actx, err)
		}
		full, e := parseResponse(data)
		if e != nil {
			return e
		}
		send(responseDelta(full))
		return nil
	}
	return c.readStream(ctx, actx, resp.Body, send)
}

// responseDelta expresses a complete response as a single delta.
func responseDelta(r *ChatResponse) Delta {
	u := r.Usage
	d := Delta{Content: r.Message.Content, Reasoning: r.Message.Reasoning, Usage: &u, FinishReason: r.FinishReason, Model: r.Model}
	for i, tc := range r.Message.ToolCalls {
		d.ToolCalls = append(d.ToolCalls, ToolCallDelta{Index: i, ID: tc.ID, Name: tc.Name, Args: string(tc.Args)})
	}
	return d
}

// readStream parses the server-sent events of a chat-completion stream, passes the
// deltas to send and returns how the stream failed, if it did.
func (c *OpenAI) readStream(ctx, actx context.Context, r io.Reader, send func(Delta) bool) *Error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	var (
		data     bytes.Buffer
		finished bool
		answered bool // a chunk carried the first choice
	)
	// flush handles one complete event; it reports whether the stream ends there.
	flush := func() (stop bool, e *Error) {
		if data.Len() == 0 {
			return false, nil
		}
		payload := bytes.TrimSpace(data.Bytes())
		defer data.Reset()
		if string(payload) == "[DONE]" {
			if !answered {
				// Chat fails a response without choices; a stream of none is no
				// empty answer either.
				return true, &Error{Type: TypeBadResponse, Message: "stream ended without an answer (no choices)"}
			}
			return true, nil
		}
		var chunk oaResponse
		if err := json.Unmarshal(payload, &chunk); err != nil {
			return true, &Error{Type: TypeBadResponse, Message: "stream event is not JSON: " + err.Error(), Err: err}
		}
		if chunk.Error != nil {
			return true, chunk.Error.error()
		}
		d := Delta{Model: chunk.Model}
		if chunk.Usage != nil {
			u := chunk.Usage.usage()
			d.Usage = &u
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				// Another candidate answer (a request with n > 1): Chat answers with the
				// first choice, and the stream must not splice the others into it.
				continue
			}
			answered = true
			d.Content += ch.Delta.Content
			d.Reasoning += ch.Delta.reasoning()
			if ch.FinishReason != nil {
				d.FinishReason = *ch.FinishReason
				finished = true
			}
			for i, tc := range ch.Delta.ToolCalls {
				idx := i
				if tc.Index != nil {
					idx = *tc.Index
				}
				d.ToolCalls = append(d.ToolCalls, ToolCallDelta{Index: idx, ID: tc.ID, Name: tc.Function.Name, Args: tc.Function.Arguments})
			}
		}
		return !send(d), nil
	}
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			if stop, e := flush(); stop {
				return e
			}
		case line[0] == ':': // comment, keep-alive
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			if string(field) != "data" {
				continue // event:, id:, retry: carry nothing we need
			}
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.Write(bytes.TrimPrefix(value, []byte(" ")))
		}
	}
	if stop, e := flush(); stop {
		return e
	}
	if err := sc.Err(); err != nil {
		return c.transportError(ctx, actx, err)
	}
	if !finished {
		if actx.Err() != nil {
			return c.transportError(ctx, actx, actx.Err())
		}
		// The provider dropped the answer, as with a 5xx.
		return &Error{Type: TypeSourceUnavailable, Retry: true, Message: "stream ended before the answer was complete"}
	}
	return nil
}
