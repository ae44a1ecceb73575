package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The stdio transport: newline-delimited JSON-RPC, like the SDK's
// StdioTransport, except that no input ends the session. The SDK's closes
// the connection on the first line it cannot decode; here each line is
// checked first, a bad one is answered with a JSON-RPC error on stdout (or,
// for a malformed response, only logged) and the next line is read.

const (
	// maxLineBytes is the longest line read: longer ones are answered with
	// an Invalid Request error and the rest of the line is read and dropped,
	// never buffered. No MCP request a client sends this server comes near.
	maxLineBytes = 8 << 20
	// maxDepth is how deeply a message may nest objects and arrays, the
	// SDK's own decoding limit: deeper lines are a Parse error here rather
	// than a decoding failure there.
	maxDepth = 1000
)

// stdioTransport is an mcp.Transport over a byte stream in and out.
type stdioTransport struct {
	in  io.ReadCloser
	out io.Writer
	log *slog.Logger
	max int // longest line, in bytes
}

// stdio is the transport of RunStdio over in and out (main passes the
// process's stdin and stdout: the one place stdout is chosen).
func stdio(in io.ReadCloser, out io.Writer, log *slog.Logger) *stdioTransport {
	return &stdioTransport{in: in, out: out, log: log, max: maxLineBytes}
}

// Connect implements mcp.Transport. It starts the goroutine that reads and
// checks lines; like the SDK's, it outlives Close if a read of in cannot be
// interrupted.
func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &stdioConn{
		in:       t.in,
		out:      t.out,
		log:      t.log,
		incoming: make(chan msgOrErr),
		closed:   make(chan struct{}),
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	limit := t.max
	if limit <= 0 {
		limit = maxLineBytes
	}
	go c.readLoop(&lineReader{r: bufio.NewReaderSize(t.in, 64<<10), max: limit})
	return c, nil
}

type msgOrErr struct {
	msg jsonrpc.Message
	err error
}

// stdioConn is the mcp.Connection of a stdioTransport. Its own error answers
// and the SDK's messages go through one write of one line each, under
// writeMu, so lines never interleave.
type stdioConn struct {
	in  io.ReadCloser
	log *slog.Logger

	writeMu sync.Mutex
	out     io.Writer

	incoming  chan msgOrErr
	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// readLoop reads lines until in ends: good messages go to Read, bad ones
// are answered here, and only a read or write failure stops it.
func (c *stdioConn) readLoop(lr *lineReader) {
	for {
		line, tooLong, err := lr.next()
		var next msgOrErr
		switch {
		case err != nil:
			next.err = err
		case tooLong:
			bad := &badLine{code: jsonrpc.CodeInvalidRequest, id: sniffID(line),
				reason: fmt.Sprintf("message longer than the %d-byte limit of one line", lr.max)}
			next.err = c.refuse(bad, lr.max)
		default:
			msg, err := checkLine(line)
			var bad *badLine
			switch {
			case errors.As(err, &bad):
				next.err = c.refuse(bad, len(line))
			case msg == nil: // a blank line
			default:
				next.msg = msg
			}
		}
		if next.msg == nil && next.err == nil {
			continue
		}
		select {
		case c.incoming <- next:
		case <-c.closed:
			return
		}
		if next.err != nil {
			return
		}
	}
}

// refuse logs a bad line and answers it, unless it is a response (answering
// a response could start an endless exchange with a peer that does the
// same). Only a failed write ends the session.
func (c *stdioConn) refuse(bad *badLine, size int) error {
	c.log.Warn("stdio: bad input line", "code", bad.code, "reason", bad.reason, "bytes", size, "answered", !bad.silent)
	if bad.silent {
		return nil
	}
	data, err := json.Marshal(bad.response())
	if err != nil {
		return err
	}
	return c.writeLine(data)
}

func (c *stdioConn) writeLine(data []byte) error {
	data = append(data, '\n')
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.out.Write(data)
	return err
}

// Read implements mcp.Connection.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case v := <-c.incoming:
		return v.msg, v.err
	case <-c.closed:
		return nil, io.EOF
	}
}

// Write implements mcp.Connection.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding message: %w", err)
	}
	return c.writeLine(data)
}

// Close implements mcp.Connection. It closes in, not out: stdout stays the
// process's.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.closeErr = c.in.Close()
	})
	return c.closeErr
}

// SessionID implements mcp.Connection; stdio has one session and no ID.
func (c *stdioConn) SessionID() string { return "" }

// lineReader reads lines of at most max bytes while holding no more than
// that in memory, whatever the length of the line.
type lineReader struct {
	r   *bufio.Reader
	max int
}

// next returns the next line without its line ending. A line longer than
// max comes back as its first max bytes with tooLong set, the rest of it
// read and dropped. The last line may lack a newline; io.EOF comes after it.
func (lr *lineReader) next() (line []byte, tooLong bool, err error) {
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if !tooLong {
			line = append(line, bytes.TrimSuffix(chunk, []byte("\n"))...)
			if len(line) > lr.max {
				line, tooLong = line[:lr.max:lr.max], true
			}
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(line, []byte("\r")), tooLong, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && (len(line) > 0 || tooLong):
			return line, tooLong, nil
		default:
			return nil, false, err
		}
	}
}

// badLine is what is wrong with one input line, and the JSON-RPC error that
// answers it.
type badLine struct {
	code   int64
	reason string
	// id is the offending message's id when it is a string or a number,
	// else nil (answered as null).
	id json.RawMessage
	// silent marks a malformed response: logged, never answered.
	silent bool
}

func (b *badLine) Error() string { return b.reason }

func (b *badLine) response() any {
	prefix := "Invalid Request"
	if b.code == jsonrpc.CodeParseError {
		prefix = "Parse error"
	}
	id := b.id
	if id == nil {
		id = json.RawMessage("null")
	}
	return struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: b.code, Message: prefix + ": " + b.reason}}
}

func parseError(reason string) *badLine {
	return &badLine{code: jsonrpc.CodeParseError, reason: reason}
}

func invalidRequest(id json.RawMessage, format string, args ...any) *badLine {
	return &badLine{code: jsonrpc.CodeInvalidRequest, id: id, reason: fmt.Sprintf(format, args...)}
}

// checkLine checks one line and decodes it with the SDK's decoder. It
// returns the message, nil for a blank line, or a *badLine.
func checkLine(line []byte) (jsonrpc.Message, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil
	}
	if !utf8.Valid(line) {
		return nil, parseError("the line is not valid UTF-8")
	}
	// The depth scan is only exact on valid JSON, and json.Valid gives up
	// (false) past its own limit of 10,000 levels, so the reason is chosen
	// after both.
	deep := tooDeep(line, maxDepth)
	if !json.Valid(line) {
		if deep {
			return nil, parseError(fmt.Sprintf("nested deeper than %d levels", maxDepth))
		}
		return nil, parseError("the line is not JSON")
	}
	if deep {
		return nil, parseError(fmt.Sprintf("nested deeper than %d levels", maxDepth))
	}
	switch line[0] {
	case '[':
		return nil, invalidRequest(nil, "batches (JSON arrays) are not supported; send one message per line")
	case '{':
	default:
		return nil, invalidRequest(nil, "a message must be a JSON object")
	}
	var fields map[string]json.RawMessage // exact keys, as the SDK's decoder matches them
	if err := json.Unmarshal(line, &fields); err != nil {
		return nil, parseError(err.Error())
	}
	id, idErr := checkID(fields)
	if _, ok := fields["method"]; !ok {
		_, result := fields["result"]
		_, failed := fields["error"]
		if !result && !failed {
			return nil, invalidRequest(id, `a request needs a "method"`)
		}
		return checkResponse(line, fields, idErr)
	}
	if v := fields["jsonrpc"]; !isVersion(v) {
		return nil, invalidRequest(id, `"jsonrpc" must be "2.0"`)
	}
	if m := fields["method"]; m[0] != '"' {
		return nil, invalidRequest(id, `"method" must be a string`)
	}
	if idErr != nil {
		return nil, invalidRequest(id, "%v", idErr)
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, invalidRequest(id, "%v", err)
	}
	return msg, nil
}

// checkResponse checks a message without a method: an answer to one of the
// server's requests. A bad one is dropped, not answered.
func checkResponse(line []byte, fields map[string]json.RawMessage, idErr error) (jsonrpc.Message, error) {
	silent := func(reason string) error {
		return &badLine{code: jsonrpc.CodeInvalidRequest, reason: reason, silent: true}
	}
	_, hasID := fields["id"]
	switch {
	case !isVersion(fields["jsonrpc"]):
		return nil, silent(`response: "jsonrpc" must be "2.0"`)
	case !hasID:
		return nil, silent(`response without an "id"`)
	case idErr != nil:
		return nil, silent("response: " + idErr.Error())
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, silent("response: " + err.Error())
	}
	return msg, nil
}

func isVersion(raw json.RawMessage) bool {
	var v string
	return raw != nil && json.Unmarshal(raw, &v) == nil && v == "2.0"
}

// checkID returns the id to echo in an error (a string or a number, else
// nil) and whether the id is one MCP accepts: absent, a string or an
// integer (null is not: MCP forbids it, and the SDK would take the
// request for a notification and never answer).
func checkID(fields map[string]json.RawMessage) (json.RawMessage, error) {
	raw, ok := fields["id"]
	if !ok {
		return nil, nil
	}
	switch raw[0] {
	case '"':
		return raw, nil
	case 'n':
		return nil, errors.New(`"id" must be a string or an integer, not null`)
	case '{', '[', 't', 'f':
		return nil, errors.New(`"id" must be a string or an integer`)
	}
	// A number: the SDK would truncate 1.5 to 1 and answer the wrong id.
	if _, err := strconv.ParseInt(string(raw), 10, 64); err != nil {
		return raw, errors.New(`"id" must be a string or an integer`)
	}
	return raw, nil
}

// tooDeep reports whether data nests objects and arrays deeper than limit.
// It counts brackets outside strings in one pass, as the SDK's own check
// does, with no allocation whatever the depth.
func tooDeep(data []byte, limit int) bool {
	depth, inString, escaped := 0, false, false
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > limit {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// sniffID looks for a top-level "id" in the first bytes of a line too long
// to read, so the refusal can name the request it answers. It returns nil
// when the prefix is not an object or has no usable id before it ends.
func sniffID(prefix []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		if key == "id" {
			var raw json.RawMessage
			if dec.Decode(&raw) != nil || !utf8.Valid(raw) {
				return nil
			}
			if id, err := checkID(map[string]json.RawMessage{"id": raw}); err == nil && id != nil {
				return id
			}
			return nil
		}
		if !skipValue(dec) {
			return nil
		}
	}
	return nil
}

// skipValue reads past one value with Token, which (unlike Decode) does not
// buffer the value whole; it gives up past maxDepth.
func skipValue(dec *json.Decoder) bool {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if depth++; depth > maxDepth {
				return false
			}
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return true
		}
	}
}
