package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestCheckLine(t *testing.T) {
	t.Parallel()
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	const (
		pass   = 0 // passed on to the SDK
		skip   = 1 // nothing to do
		silent = 2 // dropped with a log line
	)
	for _, tc := range []struct {
		name string
		line string
		want int64 // an error code, or pass, skip, silent
		id   string
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, pass, ""},
		{"string id", `{"jsonrpc":"2.0","id":"a","method":"ping","params":{}}`, pass, ""},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, pass, ""},
		{"surrounding space", " \t{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r", pass, ""},
		{"response", `{"jsonrpc":"2.0","id":1,"result":{}}`, pass, ""},
		{"error response", `{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"no"}}`, pass, ""},
		{"deep but allowed", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":` + deep(998) + `}}`, pass, ""},
		{"brackets in strings", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"` + strings.Repeat("[", 2000) + `\"{"}}`, pass, ""},
		{"blank", "  \r", skip, ""},

		{"plain text", "hello", jsonrpc.CodeParseError, "null"},
		{"truncated", `{"jsonrpc":"2.0","id":1,`, jsonrpc.CodeParseError, "null"},
		{"two values", `{"jsonrpc":"2.0","id":1,"method":"ping"} {}`, jsonrpc.CodeParseError, "null"},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xc3\x28\"}", jsonrpc.CodeParseError, "null"},
		{"1,001 levels", deep(1001), jsonrpc.CodeParseError, "null"},
		{"20,000 levels unclosed", strings.Repeat("[", 20000), jsonrpc.CodeParseError, "null"},
		{"deep params", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":` + deep(1500) + `}}`, jsonrpc.CodeParseError, "null"},

		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, jsonrpc.CodeInvalidRequest, "null"},
		{"empty batch", `[]`, jsonrpc.CodeInvalidRequest, "null"},
		{"number", `42`, jsonrpc.CodeInvalidRequest, "null"},
		{"string", `"ping"`, jsonrpc.CodeInvalidRequest, "null"},
		{"no jsonrpc", `{"id":1,"method":"x"}`, jsonrpc.CodeInvalidRequest, "1"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":"q","method":"x"}`, jsonrpc.CodeInvalidRequest, `"q"`},
		{"jsonrpc number", `{"jsonrpc":2.0,"id":1,"method":"x"}`, jsonrpc.CodeInvalidRequest, "1"},
		{"JSONRPC key", `{"JSONRPC":"2.0","id":1,"method":"x"}`, jsonrpc.CodeInvalidRequest, "1"},
		{"method number", `{"jsonrpc":"2.0","id":1,"method":1}`, jsonrpc.CodeInvalidRequest, "1"},
		{"method null", `{"jsonrpc":"2.0","id":1,"method":null}`, jsonrpc.CodeInvalidRequest, "1"},
		{"no method", `{"jsonrpc":"2.0","id":"r"}`, jsonrpc.CodeInvalidRequest, `"r"`},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null"},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null"},
		{"bool id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null"},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null"},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "1.5"},
		{"id beyond int64", `{"jsonrpc":"2.0","id":1e30,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "1e30"},

		{"response without id", `{"jsonrpc":"2.0","result":{}}`, silent, ""},
		{"error response with null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, silent, ""},
		{"response without jsonrpc", `{"id":1,"result":{}}`, silent, ""},
		{"response with a bad error", `{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}`, silent, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			msg, err := checkLine([]byte(tc.line))
			var bad *badLine
			if err != nil && !errors.As(err, &bad) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			switch {
			case tc.want == pass:
				if err != nil || msg == nil {
					t.Fatalf("want a message, got %v, %v", msg, err)
				}
			case tc.want == skip:
				if err != nil || msg != nil {
					t.Fatalf("want nothing, got %v, %v", msg, err)
				}
			case tc.want == silent:
				if bad == nil || !bad.silent {
					t.Fatalf("want a silent drop, got %v, %v", msg, err)
				}
			default:
				if bad == nil || bad.silent || bad.code != tc.want {
					t.Fatalf("want error %d, got %v, %v", tc.want, msg, err)
				}
				data, _ := json.Marshal(bad.response())
				var resp struct {
					JSONRPC string          `json:"jsonrpc"`
					ID      json.RawMessage `json:"id"`
					Error   jsonrpc.Error   `json:"error"`
				}
				if err := json.Unmarshal(data, &resp); err != nil || resp.JSONRPC != "2.0" || string(resp.ID) != tc.id || resp.Error.Code != tc.want || resp.Error.Message == "" {
					t.Errorf("response %s: want code %d and id %s", data, tc.want, tc.id)
				}
			}
		})
	}
}

// endless yields 'a' forever, so a long line costs no memory in the test.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

func TestLineReader(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	in := io.MultiReader(
		strings.NewReader("one\r\n\n"+`{"id":"big","x":"`),
		io.LimitReader(endless{}, 20<<20), // 20 MiB in one line
		strings.NewReader("\"}\nexactly "),
		io.LimitReader(endless{}, int64(limit-len("exactly "))),
		strings.NewReader("\nlast"),
	)
	lr := &lineReader{r: bufio.NewReaderSize(in, 64<<10), max: limit}
	type line struct {
		start   string
		n       int
		tooLong bool
	}
	var got []line
	for {
		l, tooLong, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if cap(l) > limit+64<<10 {
			t.Errorf("a line kept %d bytes of buffer", cap(l))
		}
		got = append(got, line{string(l[:min(len(l), 8)]), len(l), tooLong})
	}
	want := []line{
		{"one", 3, false},
		{"", 0, false},
		{`{"id":"b`, limit, true},
		{"exactly ", limit, false},
		{"last", 4, false},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("lines:\n got %v\nwant %v", got, want)
	}
	if id := sniffID(bytes.Repeat([]byte("x"), 10)); id != nil {
		t.Errorf("id of a non-object: %s", id)
	}
}

func TestSniffID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ prefix, want string }{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"a":"aaaa`, "7"},
		{`{"jsonrpc":"2.0","method":"tools/call","id":"s","params":{"a":"aaaa`, `"s"`},
		{`{"jsonrpc":"2.0","params":{"id":1,"x":[1,{"id":2}]},"id":"late","x":"aaa`, `"late"`},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"id":5,"a":"aaaa`, ""},
		{`{"id":{"a":1},"method":"x","params":"aaa`, ""},
		{`{"id":1.5,"method":"x","params":"aaa`, ""},
		{`{"id":"aa`, ""},
		{`[{"id":1,`, ""},
		{`aaaa`, ""},
		{`{"p":` + strings.Repeat("[", 5000), ""},
	} {
		if got := string(sniffID([]byte(tc.prefix))); got != tc.want {
			t.Errorf("sniffID(%.60s) = %q, want %q", tc.prefix, got, tc.want)
		}
	}
}

// TestStdioConn drives the connection directly: good lines come out of
// Read, bad ones are answered on out, and the answers and the connection's
// own writes, made concurrently, never share a line.
func TestStdioConn(t *testing.T) {
	t.Parallel()
	inR, inW := io.Pipe()
	var out lockedBuffer
	conn, err := (&stdioTransport{in: inR, out: &out, max: 1 << 10}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const n = 200
	go func() {
		for i := range n {
			fmt.Fprintf(inW, "not json %d\n", i)
			fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
		}
		fmt.Fprintf(inW, "%s\n", strings.Repeat("x", 5000))
		inW.Close()
	}()
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range n {
		msg, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || req.Method != "ping" {
			t.Fatalf("read %d: %#v", i, msg)
		}
		wg.Go(func() {
			if err := conn.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{}`)}); err != nil {
				t.Error(err)
			}
		})
	}
	if _, err := conn.Read(ctx); err != io.EOF {
		t.Errorf("after the last line: want io.EOF, got %v", err)
	}
	wg.Wait()
	counts := map[int64]int{}
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		msg, err := jsonrpc.DecodeMessage([]byte(line))
		if err != nil { // an error answer, id null
			var m struct {
				ID    any           `json:"id"`
				Error jsonrpc.Error `json:"error"`
			}
			if err := json.Unmarshal([]byte(line), &m); err != nil || m.ID != nil {
				t.Fatalf("stdout line %.100q: %v", line, err)
			}
			counts[m.Error.Code]++
			continue
		}
		if resp, ok := msg.(*jsonrpc.Response); !ok || resp.Error != nil {
			t.Fatalf("stdout line %.100q", line)
		}
		counts[0]++
	}
	want := map[int64]int{0: n, jsonrpc.CodeParseError: n, jsonrpc.CodeInvalidRequest: 1}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("answers by code: got %v, want %v", counts, want)
	}
}

// TestStdioConnClose checks Close unblocks a Read waiting for input.
func TestStdioConnClose(t *testing.T) {
	t.Parallel()
	inR, _ := io.Pipe()
	conn, _ := (&stdioTransport{in: inR, out: io.Discard}).Connect(context.Background())
	done := make(chan error)
	go func() {
		_, err := conn.Read(context.Background())
		done <- err
	}()
	conn.Close()
	if err := <-done; err == nil {
		t.Error("Read returned no error after Close")
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
