package team

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"strings"
)

// ChatStream sends a streaming chat-completion request (server-sent events) and
// yields the deltas as they arrive; usage comes with the last one (the request asks
// for it with stream_options.include_usage). Failures before the first byte of the
// answer are retried like Chat's; a failure in the middle of the stream is yielded
// as the last element and not retried (the caller has seen part of the answer).
// Breaking the loop closes the connection.
func (c *OpenAI) ChatStream(ctx context.Context, req *ChatRequest) iter.Seq2[Delta, error] {
	return func(yield func(Delta, error) bool) {
		body, err := c.body(req, true)
		if err != nil {
			yield(Delta{}, err)
			return
		}
		var (
			resp   *http.Response
			actx   context.Context
			cancel = context.CancelFunc(func() {})
		)
		// The attempt that succeeds keeps its context: its timeout bounds reading the
		// stream too.
		err = c.retry(ctx, func() *Error {
			cancel()
			actx, cancel = c.attemptContext(ctx)
			var e *Error
			resp, e = c.send(ctx, actx, body)
			return e
		})
		defer func() { cancel() }()
		if err != nil {
			yield(Delta{}, err)
			return
		}
		defer resp.Body.Close()
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			// A gateway that ignores "stream": the whole answer as one delta.
			data, err := io.ReadAll(resp.Body)
			if err != nil {
				yield(Delta{}, c.transportError(ctx, actx, err))
				return
			}
			full, e := parseResponse(data)
			if e != nil {
				yield(Delta{}, e)
				return
			}
			yield(responseDelta(full), nil)
			return
		}
		c.readStream(ctx, actx, resp.Body, yield)
	}
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

// readStream parses the server-sent events of a chat-completion stream.
func (c *OpenAI) readStream(ctx, actx context.Context, r io.Reader, yield func(Delta, error) bool) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	var (
		data     bytes.Buffer
		finished bool
		answered bool // a chunk carried the first choice
	)
	// flush handles one complete event; it reports whether to go on.
	flush := func() (goOn, done bool) {
		if data.Len() == 0 {
			return true, false
		}
		payload := bytes.TrimSpace(data.Bytes())
		defer data.Reset()
		if string(payload) == "[DONE]" {
			if !answered {
				// Chat fails a response without choices; a stream of none is no
				// empty answer either.
				yield(Delta{}, &Error{Type: TypeBadResponse, Message: "stream ended without an answer (no choices)"})
			}
			return false, true
		}
		var chunk oaResponse
		if err := json.Unmarshal(payload, &chunk); err != nil {
			yield(Delta{}, &Error{Type: TypeBadResponse, Message: "stream event is not JSON: " + err.Error(), Err: err})
			return false, false
		}
		if chunk.Error != nil {
			yield(Delta{}, &Error{Type: TypeSourceUnavailable, Message: chunk.Error.Message})
			return false, false
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
		return yield(d, nil), false
	}
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			if goOn, done := flush(); !goOn || done {
				return
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
	if goOn, done := flush(); !goOn || done {
		return
	}
	if err := sc.Err(); err != nil {
		yield(Delta{}, c.transportError(ctx, actx, err))
		return
	}
	if !finished {
		if actx.Err() != nil {
			yield(Delta{}, c.transportError(ctx, actx, actx.Err()))
			return
		}
		yield(Delta{}, &Error{Type: TypeSourceUnavailable, Message: "stream ended before the answer was complete"})
	}
}
