package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// rawLine is one line the server wrote on stdout, or why it is not
// JSON-RPC.
type rawLine struct {
	msg map[string]any
	err error
}

// rawServer is the binary spoken to in raw JSON-RPC lines.
type rawServer struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan rawLine
	stderr *syncBuffer
}

func startRaw(t *testing.T) *rawServer {
	t.Helper()
	s := &rawServer{t: t, cmd: exec.Command(binary), lines: make(chan rawLine, 64), stderr: &syncBuffer{}}
	s.cmd.Stderr = s.stderr
	s.stdin, _ = s.cmd.StdinPipe()
	stdout, _ := s.cmd.StdoutPipe()
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.cmd.Process.Kill(); s.cmd.Wait() })
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m map[string]any
			err := json.Unmarshal(sc.Bytes(), &m)
			if err == nil && m["jsonrpc"] != "2.0" {
				err = fmt.Errorf("no \"jsonrpc\":\"2.0\"")
			}
			if err == nil {
				_, isCall := m["method"]
				_, result := m["result"]
				_, failed := m["error"]
				if !isCall && result == failed {
					err = fmt.Errorf("neither a request nor a response with one of result and error")
				}
			}
			if err != nil {
				err = fmt.Errorf("stdout carried a line that is not JSON-RPC (%v): %.200q", err, sc.Text())
			}
			s.lines <- rawLine{m, err}
		}
	}()
	return s
}

func (s *rawServer) send(line []byte) {
	s.t.Helper()
	if _, err := s.stdin.Write(append(line, '\n')); err != nil {
		s.t.Fatalf("writing to the server: %v\nstderr:\n%s", err, s.stderr.String())
	}
}

// next returns the next message on stdout; the server must still be there
// to write it.
func (s *rawServer) next() map[string]any {
	s.t.Helper()
	select {
	case l, ok := <-s.lines:
		if !ok {
			s.t.Fatalf("the server closed stdout (exited?)\nstderr:\n%s", s.stderr.String())
		}
		if l.err != nil {
			s.t.Fatal(l.err)
		}
		return l.msg
	case <-time.After(15 * time.Second):
		s.t.Fatalf("no answer within 15s\nstderr:\n%s", s.stderr.String())
	}
	return nil
}

// TestStdioSurvivesBadInput sends the server every kind of malformed line:
// each is answered with a JSON-RPC error, the server answers a ping right
// after it, and a good request at the end still works.
func TestStdioSurvivesBadInput(t *testing.T) {
	t.Parallel()
	s := startRaw(t)
	s.send([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`))
	if m := s.next(); m["id"] != 0.0 || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	s.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))

	deep := strings.Repeat("[", 1500) + strings.Repeat("]", 1500)
	huge := []byte(`{"jsonrpc":"2.0","id":"huge","method":"tools/call","params":{"name":"browser_type","arguments":{"text":"`)
	huge = append(huge, bytes.Repeat([]byte("a"), 20<<20)...)
	huge = append(huge, `"}}}`...)
	for _, tc := range []struct {
		name string
		line []byte
		code float64
		id   any
	}{
		{"plain text", []byte("hello, are you there?"), -32700, nil},
		{"truncated JSON", []byte(`{"jsonrpc":"2.0","id":1,"method":`), -32700, nil},
		{"no jsonrpc", []byte(`{"id":1,"method":"x"}`), -32600, 1.0},
		{"wrong jsonrpc", []byte(`{"jsonrpc":"1.0","id":"a","method":"ping"}`), -32600, "a"},
		{"batch", []byte(`[{"jsonrpc":"2.0","id":2,"method":"ping"}]`), -32600, nil},
		{"empty batch", []byte(`[]`), -32600, nil},
		{"not an object", []byte(`42`), -32600, nil},
		{"object id", []byte(`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`), -32600, nil},
		{"array id", []byte(`{"jsonrpc":"2.0","id":[3],"method":"ping"}`), -32600, nil},
		{"null id", []byte(`{"jsonrpc":"2.0","id":null,"method":"ping"}`), -32600, nil},
		{"fractional id", []byte(`{"jsonrpc":"2.0","id":4.5,"method":"ping"}`), -32600, 4.5},
		{"method not a string", []byte(`{"jsonrpc":"2.0","id":5,"method":7}`), -32600, 5.0},
		{"no method", []byte(`{"jsonrpc":"2.0","id":6}`), -32600, 6.0},
		{"invalid UTF-8", []byte("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"\xff\xfe\"}"), -32700, nil},
		{"1,500 levels", []byte(deep), -32700, nil},
		{"1,500 levels in params", []byte(`{"jsonrpc":"2.0","id":8,"method":"ping","params":{"a":` + deep + `}}`), -32700, nil},
		{"20 MB line", huge, -32600, "huge"},
	} {
		s.send(tc.line)
		pingID := "after " + tc.name
		s.send([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"ping"}`, pingID)))
		gotError, gotPing := false, false
		for !gotError || !gotPing {
			m := s.next()
			if m["id"] == pingID {
				if m["result"] == nil {
					t.Errorf("%s: the ping after it failed: %v", tc.name, m)
				}
				gotPing = true
				continue
			}
			if gotError {
				t.Fatalf("%s: a second answer: %v", tc.name, m)
			}
			gotError = true
			e, _ := m["error"].(map[string]any)
			if _, hasID := m["id"]; !hasID || e == nil || e["code"] != tc.code || m["id"] != tc.id {
				t.Errorf("%s: want error %v with id %v, got %v", tc.name, tc.code, tc.id, m)
				continue
			}
			if msg, _ := e["message"].(string); msg == "" {
				t.Errorf("%s: the error has no message: %v", tc.name, m)
			}
		}
	}

	// A malformed response is dropped, never answered: the ping is the
	// next line.
	s.send([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`))
	s.send([]byte(`{"jsonrpc":"2.0","id":"p","method":"ping"}`))
	if m := s.next(); m["id"] != "p" || m["result"] == nil {
		t.Errorf("after a malformed response: want the ping's answer, got %v", m)
	}

	s.send([]byte(`{"jsonrpc":"2.0","id":99,"method":"tools/list"}`))
	m := s.next()
	result, _ := m["result"].(map[string]any)
	if tools, _ := result["tools"].([]any); m["id"] != 99.0 || len(tools) < 5 {
		t.Fatalf("tools/list after the bad lines: %.500v", m)
	}

	// The end of input ends the server cleanly, having written nothing else.
	s.stdin.Close()
	for l := range s.lines {
		if l.err != nil {
			t.Error(l.err)
		} else {
			t.Errorf("unexpected message after the last answer: %v", l.msg)
		}
	}
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("server exit: %v\nstderr:\n%s", err, s.stderr.String())
	}
}
