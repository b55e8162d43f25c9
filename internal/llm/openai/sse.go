package openai

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// maxEventSize bounds one event of a stream, its lines together. A chunk of
// a Chat Completions stream is a few hundred bytes; a server that sends a
// whole tool call at once (a file the agent writes) sends more, but a
// server that sends megabytes without an end of line is broken or
// hostile, and holding them all would cost every answer streaming at once.
const maxEventSize = 8 << 20

// readBufferSize is the reader's buffer, so that one read of the response
// body takes many events when they have arrived together (what it gets is
// bounded by the transport's own buffer, 32 KiB for core.NewHTTPClient's).
const readBufferSize = 16 << 10

// errEventTooLarge is in the error of a stream whose event outgrew
// maxEventSize.
var errEventTooLarge = fmt.Errorf("the server sent an event larger than %d MiB", maxEventSize>>20)

// sseEvent is one Server-Sent Event. Its slices are the reader's and valid
// until the next call of next.
type sseEvent struct {
	typ  []byte
	data []byte
}

// sseReader reads Server-Sent Events exactly as the SDK's decoder
// (ssestream) does, so that every server reads as it did through the SDK:
// a line ends at "\n", a "\r" before it dropped; "data" lines are joined,
// each followed by "\n"; "event" sets the type; a line starting with ":" is
// a comment, and other fields ("id", "retry") are ignored; an empty line
// ends an event that has data, and an event the body ends in before its
// empty line is dropped. Unlike the SDK's, it bounds an event's size and
// reads the lines in place, without copying them; the data of the usual
// event, one data line and its empty line, is left in place too.
type sseReader struct {
	br   *bufio.Reader
	long []byte // a line longer than br's buffer, put together
	typ  []byte
	data []byte
	err  error // what ended the body, returned once its lines are read
}

func newSSEReader(body io.Reader) *sseReader {
	return &sseReader{br: bufio.NewReaderSize(body, readBufferSize)}
}

// reset makes r read body from the start, as a new sseReader would, with
// r's read buffer. A buffer that an event larger than the read buffer grew
// is let go.
func (r *sseReader) reset(body io.Reader) {
	r.br.Reset(body)
	r.typ, r.data, r.long, r.err = r.typ[:0], r.data[:0], nil, nil
	if cap(r.data) > readBufferSize {
		r.data = nil
	}
}

// next returns the next event, or io.EOF at the end of the body, or the
// error that ended it.
func (r *sseReader) next() (sseEvent, error) {
	r.typ, r.data = r.typ[:0], r.data[:0]
	for {
		ended, err := r.line()
		if err != nil {
			return sseEvent{}, err
		}
		line := withoutEnd(ended)
		if len(line) == 0 {
			if len(r.data) == 0 {
				r.typ = r.typ[:0]
				continue
			}
			return sseEvent{typ: r.typ, data: r.data}, nil
		}
		if len(r.data) == 0 {
			if data, ok := r.onlyData(ended); ok {
				return sseEvent{typ: r.typ, data: data}, nil
			}
		}
		if err := r.field(line); err != nil {
			return sseEvent{}, err
		}
	}
}

// onlyData returns the data of the event whose first data line is ended
// (the line with its end) when that line is also the event's last, that is
// when the empty line that ends the event is already in the buffer: the
// line's value and its "\n", where they are in the buffer, without a copy.
// It passes over the empty line. A line that ends in "\r\n" is left to
// field, which drops the "\r". The line is within maxEventSize (line sees
// to it), and so is its data.
func (r *sseReader) onlyData(ended []byte) ([]byte, bool) {
	value, ok := bytes.CutPrefix(ended, []byte("data:"))
	if n := len(value); !ok || n == 0 || value[n-1] != '\n' || (n > 1 && value[n-2] == '\r') {
		return nil, false
	}
	// Peek and Discard of what is buffered do not read, and so leave
	// ended where it is.
	next, _ := r.br.Peek(min(2, r.br.Buffered()))
	var emptyLine int
	switch {
	case len(next) > 0 && next[0] == '\n':
		emptyLine = 1
	case len(next) == 2 && next[0] == '\r' && next[1] == '\n':
		emptyLine = 2
	default:
		return nil, false
	}
	_, _ = r.br.Discard(emptyLine)
	if len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	return value, true
}

// field takes in one line of an event.
func (r *sseReader) field(line []byte) error {
	name, value, _ := bytes.Cut(line, []byte(":"))
	if len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	switch string(name) {
	case "event":
		r.typ = append(r.typ[:0], value...)
	case "data":
		if len(r.data)+len(value)+1 > maxEventSize {
			return errEventTooLarge
		}
		r.data = append(r.data, value...)
		r.data = append(r.data, '\n')
	}
	return nil
}

// withoutEnd is line without its end, "\n" and a "\r" before it.
func withoutEnd(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line
}

// line returns the next line with its end, "\n". A last line without an
// end counts as a line, as it does for the SDK's bufio.Scanner.
func (r *sseReader) line() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	line, err := r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		line, err = r.longLine(line)
	}
	if err != nil {
		r.err = err
		if len(line) == 0 {
			return nil, err
		}
	}
	return line, nil
}

// flushingReader calls flush before every read of r. The sseReader reads
// the body only when the events it has are used up, so a read is where the
// adapter may wait on the network, and every piece of text decoded before
// it has gone to onText: the moment for the caller to flush them.
type flushingReader struct {
	r     io.Reader
	flush func()
}

func (f *flushingReader) Read(p []byte) (int, error) {
	f.flush()
	return f.r.Read(p)
}

// drainWait and maxDrain bound what drain waits for and reads.
const (
	drainWait = 100 * time.Millisecond
	maxDrain  = 64 << 10
)

// drain reads the rest of the body, which after [DONE] is only the end of
// the response, so that the connection goes back to the client's pool:
// closing a body before its end closes the connection too. A server that
// keeps the stream open (or sends more than maxDrain) after [DONE] is left
// after drainWait, by cancel, which cancels the request.
func (r *sseReader) drain(cancel context.CancelFunc) {
	if r.err != nil {
		return
	}
	stop := time.AfterFunc(drainWait, cancel)
	defer stop.Stop()
	_, _ = io.Copy(io.Discard, io.LimitReader(r.br, maxDrain))
}

// longLine puts together a line that does not fit the buffer, from its
// start, up to maxEventSize.
func (r *sseReader) longLine(start []byte) ([]byte, error) {
	r.long = append(r.long[:0], start...)
	for {
		more, err := r.br.ReadSlice('\n')
		if len(r.long)+len(more) > maxEventSize {
			return nil, errEventTooLarge
		}
		r.long = append(r.long, more...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return r.long, err
		}
	}
}
