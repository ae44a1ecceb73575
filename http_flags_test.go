package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A non-loopback address without a token does not start; the message says
// how to set one, and nothing of the browser set-up ran.
func TestNonLoopbackHostNeedsToken(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--host", "0.0.0.0"},
		{"--host", "::"},
		{"--host", "0.0.0.0", "--auth-token", "short"},
	} {
		cmd := exec.Command(binary, append(args, "--port", fmt.Sprint(freePort(t)), "--driver-dir", "/nonexistent/retrace-driver")...)
		cmd.Env = withoutRetraceEnv()
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "--auth-token") {
			t.Errorf("%v: want an exit naming --auth-token, got %v:\n%s", args, err, out)
		}
		if len(args) == 2 && (!strings.Contains(string(out), "RETRACE_AUTH_TOKEN") || !strings.Contains(string(out), "--insecure-no-auth")) {
			t.Errorf("%v: the message does not name RETRACE_AUTH_TOKEN and --insecure-no-auth:\n%s", args, out)
		}
		if strings.Contains(string(out), "browser setup incomplete") {
			t.Errorf("%v: the browser set-up ran before the refusal:\n%s", args, out)
		}
	}
}

// With --insecure-no-auth, or with a token from the environment, it starts;
// the token is then required and never printed.
func TestNonLoopbackHostStarts(t *testing.T) {
	t.Parallel()
	const token = "e2e-token-0123456789abcdef"
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		want int // status of an initialize without a token
	}{
		{"insecure-no-auth", []string{"--insecure-no-auth"}, nil, http.StatusOK},
		{"token from env", nil, []string{"RETRACE_AUTH_TOKEN=" + token}, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			port := freePort(t)
			cmd := exec.Command(binary, append(tc.args, "--host", "0.0.0.0", "--port", fmt.Sprint(port), "--driver-dir", "/nonexistent/retrace-driver")...)
			cmd.Env = append(withoutRetraceEnv(), tc.env...)
			var stderr syncBuffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				<-exited
			})
			addr := net.JoinHostPort("127.0.0.1", fmt.Sprint(port))
			for deadline := time.Now().Add(10 * time.Second); ; {
				select {
				case err := <-exited:
					exited <- err
					t.Fatalf("exited: %v\n%s", err, stderr.String())
				default:
				}
				if c, err := net.Dial("tcp", addr); err == nil {
					c.Close()
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("not listening on %s after 10 s:\n%s", addr, stderr.String())
				}
				time.Sleep(50 * time.Millisecond)
			}
			if got := initializeStatus(t, "http://"+addr+"/mcp", ""); got != tc.want {
				t.Errorf("initialize without a token: %d, want %d", got, tc.want)
			}
			if got := initializeStatus(t, "http://"+addr+"/mcp", token); got != http.StatusOK {
				t.Errorf("initialize with the token: %d", got)
			}
			if strings.Contains(stderr.String(), token) {
				t.Errorf("the token was printed:\n%s", stderr.String())
			}
		})
	}
}

// withoutRetraceEnv is the environment without RETRACE_ variables, so the
// test's own environment cannot set a token or a host.
func withoutRetraceEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RETRACE_") {
			env = append(env, kv)
		}
	}
	return env
}

func initializeStatus(t *testing.T, endpoint, token string) int {
	t.Helper()
	req, err := http.NewRequest("POST", endpoint, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Bad browser endpoints stop the start with a message that says what is
// wrong, and never shows a header's value or a token in a URL.
func TestBrowserEndpointFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		env  []string
		want string
	}{
		{[]string{"--browser-endpoint", "ftp://pool.internal/?token=sekrit-url"}, nil, "want ws:// or wss://"},
		{[]string{"--browser-endpoint", "ws:///nohost"}, nil, "has no host"},
		{[]string{"--browser-endpoint", "ws://pool.internal:3000/", "--browser-endpoint-header", "Authorization: Bearer ${RETRACE_TEST_UNSET_TOKEN}"}, nil, "RETRACE_TEST_UNSET_TOKEN is not set"},
		{[]string{"--browser-endpoint-header", "no colon sekrit-header"}, nil, "want 'Name: value'"},
		{nil, []string{"RETRACE_BROWSER_ENDPOINT=ws://a.internal:3000/ gopher://b.internal/?token=sekrit-env"}, "want ws:// or wss://"},
	} {
		cmd := exec.Command(binary, tc.args...)
		cmd.Env = append(withoutRetraceEnv(), tc.env...)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("%v %v: want an exit saying %q, got %v:\n%s", tc.args, tc.env, tc.want, err, out)
		}
		if strings.Contains(string(out), "sekrit") {
			t.Errorf("%v %v: the message shows a secret:\n%s", tc.args, tc.env, out)
		}
	}
}
