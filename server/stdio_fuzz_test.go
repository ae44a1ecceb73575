package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzCheckLine checks arbitrary lines as the stdio transport does.
// checkLine never panics. A line it passes on is valid UTF-8 and JSON, not
// too deep, decodes with the SDK's jsonrpc.DecodeMessage and encodes again,
// and a request with an "id" is not taken for a notification. A line it
// refuses gets a one-line JSON-RPC error (parse error or invalid request)
// whose id is null, a string or a number. sniffID, which reads the id of a
// line too long to read whole, returns nothing or an id checkID accepts.
func FuzzCheckLine(f *testing.F) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"browser_click","arguments":{"ref":"e1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		" \t{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r",
		`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"no"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"both"}}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`, `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, `{"jsonrpc":"2.0","id":-0,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":99999999999999999999,"method":"ping"}`, `{"jsonrpc":"2.0","id":{},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":true,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"method":1}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}`, `{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","id":"dup"}`, `{"JSONRPC":"2.0","id":1,"method":"x"}`,
		`{"jsonrpc":"1.0","id":"q","method":"x"}`, `{"jsonrpc":"2.0","id":"r"}`, `{"jsonrpc":"2.0","result":{}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `[]`, `42`, `"ping"`, `null`, "", "  \r", "hello",
		`{"jsonrpc":"2.0","id":1,`, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xc3\x28\"}",
		`{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`, deep(1001), deep(999),
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"` + strings.Repeat("[", 1200) + `"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"} {}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		fuzzSniff(t, line)
		msg, err := checkLine(line)
		trimmed := bytes.TrimSpace(line)
		switch {
		case err != nil:
			var bad *badLine
			if !errors.As(err, &bad) || msg != nil {
				t.Fatalf("checkLine(%q) = %v, %v; want a *badLine and no message", line, msg, err)
			}
			fuzzRefusal(t, line, bad)
		case msg == nil:
			if len(trimmed) != 0 {
				t.Fatalf("checkLine(%q) passed nothing on and refused nothing", line)
			}
		default:
			if !utf8.Valid(trimmed) || !json.Valid(trimmed) || tooDeep(trimmed, maxDepth) {
				t.Fatalf("checkLine(%q) passed on a line that is not valid, shallow JSON", line)
			}
			again, derr := jsonrpc.DecodeMessage(trimmed)
			if derr != nil {
				t.Fatalf("checkLine(%q) passed on a line the SDK does not decode: %v", line, derr)
			}
			if _, err := jsonrpc.EncodeMessage(again); err != nil {
				t.Fatalf("checkLine(%q): the message does not encode again: %v", line, err)
			}
			var fields map[string]json.RawMessage
			_ = json.Unmarshal(trimmed, &fields)
			if req, ok := msg.(*jsonrpc.Request); ok && fields["id"] != nil && !req.ID.IsValid() {
				t.Fatalf("checkLine(%q): a request with an id became a notification", line)
			}
		}
	})
}

// fuzzRefusal checks the answer to a refused line.
func fuzzRefusal(t *testing.T, line []byte, bad *badLine) {
	t.Helper()
	if (bad.code != jsonrpc.CodeParseError && bad.code != jsonrpc.CodeInvalidRequest) || bad.reason == "" {
		t.Fatalf("checkLine(%q): refusal %+v", line, bad)
	}
	data, err := json.Marshal(bad.response())
	if err != nil || bytes.ContainsAny(data, "\r\n") {
		t.Fatalf("checkLine(%q): answer %q is not one line of JSON: %v", line, data, err)
	}
	var resp struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &resp); err != nil || resp.JSONRPC != "2.0" || resp.Error.Code != bad.code || resp.Error.Message == "" {
		t.Fatalf("checkLine(%q): answer %s is not a JSON-RPC error: %v", line, data, err)
	}
	switch id := resp.ID; {
	case string(id) == "null", id[0] == '"':
	default:
		var n json.Number
		if json.Unmarshal(id, &n) != nil {
			t.Fatalf("checkLine(%q): answer %s echoes an id that is neither null, a string nor a number", line, data)
		}
	}
}

// fuzzSniff checks sniffID on line taken as the prefix of a long line.
func fuzzSniff(t *testing.T, line []byte) {
	t.Helper()
	id := sniffID(line)
	if id == nil {
		return
	}
	if !json.Valid(id) {
		t.Fatalf("sniffID(%q) = %q, which is not JSON", line, id)
	}
	if id[0] != '"' {
		if _, err := strconv.ParseInt(string(id), 10, 64); err != nil {
			t.Fatalf("sniffID(%q) = %s, neither a string nor an integer", line, id)
		}
	}
}

// FuzzLineReader splits arbitrary input into lines with a small limit and a
// small buffer, so lines cross buffer boundaries. A line is the bytes
// before "\n" (a "\r" counts towards the limit, and is dropped from a line
// within it). Every line comes back, in order, once: whole when it fits,
// else as its first limit bytes (less a final "\r") with tooLong set; a
// last line without "\n" comes back too, then io.EOF.
func FuzzLineReader(f *testing.F) {
	for _, s := range []struct {
		data  string
		limit uint8
	}{
		{"one\r\n\ntwo", 8}, {"exactly8\nexactly8\r\n", 8}, {"toolongline\nok\n", 4}, {"\r\r\r\n\r", 1},
		{strings.Repeat("a", 40) + "\n" + strings.Repeat("b", 17), 16}, {"", 3}, {"\n", 1}, {"no newline", 64},
	} {
		f.Add([]byte(s.data), s.limit)
	}
	f.Fuzz(func(t *testing.T, data []byte, limit uint8) {
		limit = limit%64 + 1
		lr := &lineReader{r: bufio.NewReaderSize(bytes.NewReader(data), 16), max: int(limit)}
		want := bytes.Split(data, []byte("\n"))
		if len(want[len(want)-1]) == 0 {
			want = want[:len(want)-1] // data ended with "\n", or is empty
		}
		for i, raw := range want {
			line, tooLong, err := lr.next()
			if err != nil {
				t.Fatalf("line %d of %q (limit %d): %v", i, data, limit, err)
			}
			last := i == len(want)-1 && !bytes.HasSuffix(data, []byte("\n"))
			switch {
			case len(raw) > int(limit):
				prefix := raw[:limit]
				if !last {
					prefix = bytes.TrimSuffix(prefix, []byte("\r"))
				}
				if !tooLong || !bytes.Equal(line, prefix) {
					t.Fatalf("line %d of %q (limit %d) = %q, %v; want %q, too long", i, data, limit, line, tooLong, prefix)
				}
			case !last:
				raw = bytes.TrimSuffix(raw, []byte("\r"))
				fallthrough
			default:
				if tooLong || !bytes.Equal(line, raw) {
					t.Fatalf("line %d of %q (limit %d) = %q, %v; want %q", i, data, limit, line, tooLong, raw)
				}
			}
		}
		if line, _, err := lr.next(); err != io.EOF {
			t.Fatalf("after the lines of %q (limit %d): %q, %v; want io.EOF", data, limit, line, err)
		}
	})
}
