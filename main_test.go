package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/retrace-dev/retrace/fixture"
)

// These tests drive the built binary the way clients do: over stdio and over
// Streamable HTTP.

var (
	binary string
	fx     *fixture.Server
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "retrace-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "retrace")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		os.Exit(1)
	}
	fx, err = fixture.Start("testdata/pages")
	if err != nil {
		fmt.Fprintln(os.Stderr, "fixture:", err)
		os.Exit(1)
	}
	code := m.Run()
	fx.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

func textOf(res *mcp.CallToolResult) string {
	var s string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			s += tc.Text
		}
	}
	return s
}

// callOK calls a tool the test needs to succeed and returns its text.
func callOK(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %s", name, err, textOf(res))
	}
	return textOf(res)
}

func connectBinary(t *testing.T, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Stderr = &testLog{t: t}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "0"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// syncBuffer collects a child's stderr; the child writes from another
// goroutine while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testLog forwards the server's stderr to the test log, so a failing test
// shows what the server said.
type testLog struct{ t *testing.T }

func (l *testLog) Write(p []byte) (int, error) {
	l.t.Logf("server: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func TestStdioBinary(t *testing.T) {
	cs := connectBinary(t)
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) < 5 {
		t.Fatalf("tools/list returned %d tools", len(tools.Tools))
	}
	if cs.InitializeResult().Instructions == "" {
		t.Error("the server sends no instructions")
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "browser_navigate", Arguments: map[string]any{"url": fx.Page("form.html")}})
	if err != nil || res.IsError {
		t.Fatalf("navigate: %v %s", err, textOf(res))
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "browser_snapshot"})
	if err != nil || res.IsError {
		t.Fatalf("snapshot: %v %s", err, textOf(res))
	}
	if !strings.Contains(textOf(res), `button "Sign in" [ref=e`) {
		t.Errorf("snapshot lacks the button:\n%s", textOf(res))
	}
}

// TestStdoutIsOnlyJSONRPC speaks raw JSON-RPC to the binary, including calls
// that fail, and checks every byte on stdout belongs to a JSON-RPC message.
func TestStdoutIsOnlyJSONRPC(t *testing.T) {
	cmd := exec.Command(binary)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	msgs := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"browser_navigate","arguments":{"url":%q}}}`, fx.Page("dialogs.html")),
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"browser_snapshot","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"browser_click","arguments":{"ref":"e2"}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"browser_click","arguments":{"ref":"e424242"}}}`,
		fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"browser_navigate","arguments":{"url":%q}}}`, fx.DeadURL),
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`,
		// A large image, and the tools that read the page's history.
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"browser_take_screenshot","arguments":{"fullPage":true}}}`,
		`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"browser_console_messages","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"browser_network_requests","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"browser_tabs","arguments":{"action":"list"}}}`,
	}
	go func() {
		for _, m := range msgs {
			io.WriteString(stdin, m+"\n")
			time.Sleep(0) // messages are pipelined; the server answers in any order
		}
	}()
	want := map[float64]bool{}
	for id := 1; id <= 12; id++ {
		want[float64(id)] = true
	}
	image := false
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	deadline := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer deadline.Stop()
	isError := map[float64]bool{}
	for len(want) > 0 && sc.Scan() {
		line := sc.Text()
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("stdout carried a non-JSON line: %q", line)
		}
		if m["jsonrpc"] != "2.0" {
			t.Fatalf("stdout carried a non-JSON-RPC message: %q", line)
		}
		if id, ok := m["id"].(float64); ok {
			delete(want, id)
			if r, ok := m["result"].(map[string]any); ok && r["isError"] == true {
				isError[id] = true
			}
			if r, ok := m["result"].(map[string]any); ok && id == 9 {
				content, _ := r["content"].([]any)
				for _, c := range content {
					if c, ok := c.(map[string]any); ok && c["type"] == "image" && c["mimeType"] == "image/png" && len(c["data"].(string)) > 1000 {
						image = true
					}
				}
			}
		}
	}
	if len(want) > 0 {
		t.Fatalf("no answer for ids %v; stderr:\n%s", want, stderr.String())
	}
	if !image {
		t.Errorf("the screenshot came back without a PNG")
	}
	if !isError[6] || !isError[7] {
		t.Errorf("bad ref and dead URL should be isError results: %v", isError)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil && !strings.Contains(err.Error(), "killed") {
		t.Errorf("server exit: %v", err)
	}
	if !strings.Contains(stderr.String(), "chromium started") {
		t.Errorf("logs did not go to stderr:\n%s", stderr.String())
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func TestStreamableHTTP(t *testing.T) {
	port := freePort(t)
	cmd := exec.Command(binary, "--port", fmt.Sprint(port))
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	endpoint := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	var cs [2]*mcp.ClientSession
	for i := range cs {
		var err error
		for try := 0; try < 50; try++ {
			cs[i], err = mcp.NewClient(&mcp.Implementation{Name: "http", Version: "0"}, nil).
				Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
			if err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("connect: %v\n%s", err, stderr.String())
		}
		defer cs[i].Close()
	}
	ctx := context.Background()
	// Two HTTP sessions browse independently.
	for i, page := range []string{"form.html", "dialogs.html"} {
		res, err := cs[i].CallTool(ctx, &mcp.CallToolParams{Name: "browser_navigate", Arguments: map[string]any{"url": fx.Page(page)}})
		if err != nil || res.IsError {
			t.Fatalf("navigate: %v %s", err, textOf(res))
		}
	}
	for i, want := range []string{"Title: Sign in", "Title: Dialogs"} {
		res, err := cs[i].CallTool(ctx, &mcp.CallToolParams{Name: "browser_snapshot"})
		if err != nil || !strings.Contains(textOf(res), want) {
			t.Errorf("session %d: %v\n%s", i, err, textOf(res))
		}
	}
	if !strings.Contains(stderr.String(), endpoint) {
		t.Errorf("the server did not print how to connect:\n%s", stderr.String())
	}
}

func TestMissingSetupIsAnErrorNotACrash(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"no driver", []string{"RETRACE_DRIVER_DIR=" + t.TempDir()}, nil, "retrace install"},
		{"no chromium", nil, []string{"--executable-path", "/nonexistent/chromium"}, "apt-get install chromium"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(binary, tc.args...)
			cmd.Env = append(os.Environ(), tc.env...)
			cmd.Stderr = &testLog{t: t}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "0"}, nil).
				Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			for i := 0; i < 2; i++ { // the server is still there for a second call
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "browser_navigate", Arguments: map[string]any{"url": fx.Page("form.html")}})
				if err != nil {
					t.Fatal(err)
				}
				text := textOf(res)
				if !res.IsError || !strings.Contains(text, "SETUP_REQUIRED") || !strings.Contains(text, tc.want) {
					t.Errorf("want SETUP_REQUIRED naming %q, got:\n%s", tc.want, text)
				}
			}
		})
	}
}

func TestEnvironmentFlags(t *testing.T) {
	cmd := exec.Command(binary, "--help")
	out, _ := cmd.CombinedOutput()
	for _, f := range []string{"-port", "-host", "-headless", "-executable-path", "-timeout-action", "-timeout-navigation", "RETRACE_"} {
		if !strings.Contains(string(out), f) {
			t.Errorf("--help does not mention %s", f)
		}
	}
	if strings.Contains(string(out), "\nOther:") {
		t.Errorf("--help lists flags in no group (add them to flagGroups):\n%s", out)
	}
	cmd = exec.Command(binary)
	cmd.Env = append(os.Environ(), "RETRACE_ERROR_STYLE=bogus")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "error-style") {
		t.Errorf("a bad RETRACE_ERROR_STYLE should stop the server with a message naming it: %v %s", err, out)
	}
}

// A bad flag stops the server before anything starts: the message names
// the flag, and nothing of the browser set-up ran (with a driver that is
// not there, set-up would have logged so before any later check).
func TestBadFlagsStopBeforeTheBrowser(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--snapshot-budget", "-1"},
		{"--max-result-bytes", "100"},
		{"--timeout-action", "0"},
		{"--dialog", "maybe"},
		{"--port", "99999"},
		{"--viewport-size", "100000x5"},
		{"--allowed-dirs", "/nonexistent/retrace-uploads"},
		{"--init-script", "/nonexistent/retrace-init.js"},
		{"--proxy-server", "socks5://user:secret@127.0.0.1:1080"},
		{"--proxy-bypass", "example.com"},
		{"--storage-state", "/nonexistent/state.json"},
	} {
		cmd := exec.Command(binary, append(args, "--driver-dir", "/nonexistent/retrace-driver")...)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), strings.TrimPrefix(args[0], "--")) {
			t.Errorf("%v: want an exit naming the flag, got %v:\n%s", args, err, out)
		}
		if strings.Contains(string(out), "browser setup incomplete") {
			t.Errorf("%v: the browser set-up ran before the flag was refused:\n%s", args, out)
		}
	}
}

// The help, asked for, is the command's output (stdout, exit 0), for the
// server and for each subcommand; it names the subcommands and groups the
// flags.
func TestHelpGoesToStdout(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--help"}, {"-h"}, {"eval", "--help"}, {"roles", "check", "--help"}} {
		cmd := exec.Command(binary, args...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("%v: exit %v, stderr:\n%s", args, err, stderr.String())
			continue
		}
		if len(out) == 0 || !strings.Contains(string(out), "usage") && !strings.Contains(string(out), "Usage") {
			t.Errorf("%v: no usage on stdout (stderr: %q)", args, stderr.String())
		}
	}
	out, _ := exec.Command(binary, "--help").Output()
	for _, want := range []string{"retrace eval", "retrace roles check", "Examples:", "\nServer:", "\nBrowser:", "\nSafety:", "\nLimits:", "--ignore-https-errors"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("--help does not show %q", want)
		}
	}
}

// A --config file written for playwright-mcp gives its flag values under
// playwright-mcp's names (a bad one is refused like the flag's, before the
// browser); the command line wins over it; a key retrace does not have is
// an error naming it.
func TestPlaywrightMCPConfigKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		config string
		args   []string
		want   string
	}{
		{`{"browser": {"contextOptions": {"viewport": {"width": 99999, "height": 5}}}}`, nil, "--viewport-size"},
		{`{"server": {"port": 99999}}`, nil, "--port 99999"},
		{`{"browser": {"launchOptions": {"proxy": {"server": "socks5://p:1"}}}}`, nil, "--proxy-server"},
		{`{"browser": {"browserName": "firefox"}}`, nil, `unknown field "browserName"`},
		// The command line wins: its bad port is the one named.
		{`{"server": {"port": 8931}}`, []string{"--port", "70000"}, "--port 70000"},
	} {
		path := write(fmt.Sprintf("c%d.json", len(tc.config)), tc.config)
		cmd := exec.Command(binary, append([]string{"--config", path, "--driver-dir", "/nonexistent/retrace-driver"}, tc.args...)...)
		cmd.Env = withoutRetraceEnv()
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s %v: want an exit naming %q, got %v:\n%s", tc.config, tc.args, tc.want, err, out)
		}
	}
}

// The binary with --user-data-dir serves from the profile's Chromium, and
// leaves the profile on disk.
func TestUserDataDirBinary(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "profile")
	cs := connectBinary(t, "--user-data-dir", dir)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "browser_evaluate",
		Arguments: map[string]any{"function": "() => navigator.userAgent.length > 0"}})
	if err != nil || res.IsError {
		t.Fatalf("evaluate: %v %s", err, textOf(res))
	}
	if _, err := os.Stat(filepath.Join(dir, "Default")); err != nil {
		t.Errorf("the profile directory has no Default profile: %v", err)
	}
}

// TestRecordingBinary: --save-trace and --save-video write a Playwright
// trace and a video of the session to --output-dir at browser_close, and
// the tracing tools save a part of it.
func TestRecordingBinary(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg is not installed (make setup installs it)")
	}
	out := t.TempDir()
	cs := connectBinary(t, "--save-trace", "--save-video", "320x240", "--output-dir", out, "--caps", "tracing")
	call := func(name string, args map[string]any) string { t.Helper(); return callOK(t, cs, name, args) }
	call("browser_navigate", map[string]any{"url": fx.Page("_formcheck.html")})
	// A part of the session as a trace of its own: the session's trace so
	// far is saved first.
	res := call("browser_start_tracing", nil)
	if !strings.Contains(res, "The session's trace so far (--save-trace) is saved to "+out) {
		t.Errorf("start_tracing under --save-trace:\n%s", res)
	}
	call("browser_snapshot", nil)
	call("browser_type", map[string]any{"ref": "e1", "text": "ada@example.com"})
	part := call("browser_stop_tracing", map[string]any{"filename": "typing"})
	if !strings.Contains(part, filepath.Join(out, "typing.zip")) || !strings.Contains(part, "npx playwright show-trace") {
		t.Errorf("stop_tracing:\n%s", part)
	}
	call("browser_navigate", map[string]any{"url": fx.Page("_api.html")})
	closed := call("browser_close", nil)
	trace := regexp.MustCompile(`Trace saved to (\S+\.zip)`).FindStringSubmatch(closed)
	video := regexp.MustCompile(`Video saved to (\S+\.webm)`).FindStringSubmatch(closed)
	if trace == nil || video == nil {
		t.Fatalf("browser_close names no trace or no video:\n%s", closed)
	}
	// Each trace is a zip of Playwright's trace events; the last one saw
	// the second page load.
	for _, p := range []string{filepath.Join(out, "typing.zip"), trace[1]} {
		zr, err := zip.OpenReader(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var events string
		for _, f := range zr.File {
			if strings.HasSuffix(f.Name, ".trace") {
				rc, _ := f.Open()
				b, _ := io.ReadAll(rc)
				rc.Close()
				events += string(b)
			}
		}
		zr.Close()
		if events == "" {
			t.Errorf("%s holds no trace events", p)
		}
		if p == trace[1] && !strings.Contains(events, "_api.html") {
			t.Errorf("the session's trace does not show the page loaded last")
		}
	}
	// The video is a WebM file (EBML header) with frames in it.
	b, err := os.ReadFile(video[1])
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 1000 || !bytes.HasPrefix(b, []byte{0x1a, 0x45, 0xdf, 0xa3}) {
		t.Errorf("%s is not a WebM video (%d bytes)", video[1], len(b))
	}
}
