package server

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/fixture"
	"github.com/retrace-dev/retrace/llmerr"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// Shared by every test of the package: one fixture server, one Chromium.
// Each test gets its own MCP session and so its own browser context.
var (
	fx       *fixture.Server
	browsers *browser.Manager
)

func TestMain(m *testing.M) {
	flag.Parse()
	var err error
	fx, err = fixture.Start("../testdata/pages")
	if err != nil {
		fmt.Fprintln(os.Stderr, "fixture:", err)
		os.Exit(1)
	}
	browsers = browser.NewManager(browser.Options{
		Headless:          true,
		ActionTimeout:     3 * time.Second,
		NavigationTimeout: 10 * time.Second,
	})
	code := m.Run()
	browsers.Close()
	fx.Close()
	os.Exit(code)
}

// client is one MCP client session against a fresh server.
type client struct {
	t   *testing.T
	srv *Server
	cs  *mcp.ClientSession
	// record keeps every result, text and structured, for assertNoSecret.
	record bool
	mu     sync.Mutex
	seen   []string
	// args are the tools' argument names from tools/list.
	args map[string]map[string]bool
}

// callAsync calls a tool from another goroutine: protocol errors are
// reported, not fatal.
func (c *client) callAsync(name string, args map[string]any) reply {
	res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Errorf("%s: protocol error: %v", name, err)
		return reply{}
	}
	return c.toReply(res)
}

// assertNoSecret fails if any recorded output contains one of secrets.
func (c *client) assertNoSecret(secrets ...string) {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.seen) == 0 {
		c.t.Fatal("nothing was recorded: set record before the calls")
	}
	for _, out := range c.seen {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				c.t.Errorf("an output carried a secret:\n%s", out)
			}
		}
	}
}

// syncBuffer collects log output written from several goroutines.
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

// connect starts a server on the shared browser and connects a client to it
// through the go-sdk in-memory transports.
func connect(t *testing.T, cfg Config) *client {
	t.Helper()
	return connectServer(t, New(cfg, browsers))
}

// connectServer connects a client to srv through in-memory transports.
func connectServer(t *testing.T, srv *Server) *client {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "retrace-test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
		srv.Close()
	})
	return &client{t: t, srv: srv, cs: cs}
}

// reply is a tool result as a client sees it.
type reply struct {
	Text       string
	IsError    bool
	Structured map[string]any
}

func (r reply) code() string {
	c, _ := r.Structured["code"].(string)
	return c
}

// call calls a tool and returns its result; protocol errors fail the test.
// Every error result is checked to be a valid recovery plan.
func (c *client) call(name string, args map[string]any) reply {
	c.t.Helper()
	res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("%s(%v): protocol error: %v", name, args, err)
	}
	r := c.toReply(res)
	if r.IsError {
		c.checkPlan(name, r)
	}
	return r
}

// toReply turns a tool result into a reply, recording it when asked.
func (c *client) toReply(res *mcp.CallToolResult) reply {
	var r reply
	r.IsError = res.IsError
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			r.Text += tc.Text
		}
	}
	var data []byte
	if res.StructuredContent != nil {
		data, _ = json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(data, &r.Structured)
	}
	if c.record {
		c.mu.Lock()
		c.seen = append(c.seen, r.Text+"\n"+string(data))
		c.mu.Unlock()
	}
	return r
}

// ok calls a tool that must succeed.
func (c *client) ok(name string, args map[string]any) string {
	c.t.Helper()
	r := c.call(name, args)
	if r.IsError {
		c.t.Fatalf("%s(%v) failed:\n%s", name, args, r.Text)
	}
	return r.Text
}

// fail calls a tool that must fail with code.
func (c *client) fail(name string, args map[string]any, code llmerr.Code) reply {
	c.t.Helper()
	r := c.call(name, args)
	if !r.IsError {
		c.t.Fatalf("%s(%v) succeeded, want %s:\n%s", name, args, code, r.Text)
	}
	if r.code() != string(code) {
		c.t.Fatalf("%s(%v) code = %s, want %s:\n%s", name, args, r.code(), code, r.Text)
	}
	return r
}

// listedArgs returns the argument names of each tool as tools/list gives
// them to a client, fetched once per client.
func (c *client) listedArgs() map[string]map[string]bool {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.args != nil {
		return c.args
	}
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		c.t.Fatalf("tools/list: %v", err)
	}
	c.args = map[string]map[string]bool{}
	for _, tool := range res.Tools {
		names := map[string]bool{}
		schema, _ := json.Marshal(tool.InputSchema)
		var s struct {
			Properties map[string]any `json:"properties"`
		}
		_ = json.Unmarshal(schema, &s)
		for n := range s.Properties {
			names[n] = true
		}
		c.args[tool.Name] = names
	}
	return c.args
}

// checkPlan verifies that an error result carries the structured object and
// that every step names a real tool with arguments that tool takes.
func (c *client) checkPlan(tool string, r reply) {
	c.t.Helper()
	if r.Structured == nil {
		c.t.Fatalf("%s error has no structuredContent:\n%s", tool, r.Text)
	}
	for _, k := range []string{"code", "category", "message", "retryable", "refsInvalidated", "sessionValid", "actions"} {
		if _, ok := r.Structured[k]; !ok {
			c.t.Errorf("%s error: structuredContent lacks %q", tool, k)
		}
	}
	actions, _ := r.Structured["actions"].([]any)
	args := c.listedArgs()
	for _, a := range actions {
		m := a.(map[string]any)
		name, _ := m["tool"].(string)
		known, ok := args[name]
		if !ok {
			c.t.Errorf("%s error names tool %q, which does not exist:\n%s", tool, name, r.Text)
			continue
		}
		for arg := range m["args"].(map[string]any) {
			if !known[arg] {
				c.t.Errorf("%s error passes %s(%s=...), which %s does not take:\n%s", tool, name, arg, name, r.Text)
			}
		}
		if c.srv.cfg.ErrorStyle != llmerr.StylePlain && !strings.Contains(r.Text, name+"(") {
			c.t.Errorf("%s error: step %s is not written in the text:\n%s", tool, name, r.Text)
		}
	}
}

// refOf returns the first ref after parts[0] on the first snapshot line
// containing all parts (a table row holds several refs on one line).
func refOf(t *testing.T, snap string, parts ...string) string {
	t.Helper()
	for _, line := range strings.Split(snap, "\n") {
		all := true
		for _, p := range parts {
			if !strings.Contains(line, p) {
				all = false
				break
			}
		}
		if !all {
			continue
		}
		rest := line[strings.Index(line, parts[0]):]
		i := strings.Index(rest, "[ref=")
		if i < 0 {
			continue
		}
		j := strings.IndexByte(rest[i:], ']')
		return rest[i+5 : i+j]
	}
	t.Fatalf("no line with ref containing %q in snapshot:\n%s", parts, snap)
	return ""
}

func mustContain(t *testing.T, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("missing %q in:\n%s", w, text)
		}
	}
}

// sessionForTest returns the state of the only session of a test server.
func (s *Server) sessionForTest() *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.sessions {
		return st
	}
	return nil
}

// golden compares an error result, text and structured object, with
// testdata/errors/<name>.golden, rewritten with -update. The fixture's
// origins are written as {{MAIN}}, {{OTHER}} and {{DEAD}}; the raw driver
// message, which carries timing, is left out.
func (c *client) golden(name string, r reply) {
	c.t.Helper()
	st := map[string]any{}
	for k, v := range r.Structured {
		st[k] = v
	}
	if d, ok := st["details"].(map[string]any); ok {
		d2 := map[string]any{}
		for k, v := range d {
			if k != "raw" && k != "validation" {
				d2[k] = v
			}
		}
		st["details"] = d2
	}
	js, _ := json.MarshalIndent(st, "", "  ")
	got := r.Text + "\n\n" + string(js) + "\n"
	got = strings.NewReplacer(fx.URL, "{{MAIN}}", fx.OtherURL, "{{OTHER}}", fx.DeadURL, "{{DEAD}}").Replace(got)
	path := filepath.Join("..", "testdata", "errors", name+".golden")
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			c.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		c.t.Errorf("no golden file %s (run go test ./server -update): %v", path, err)
		return
	}
	if string(want) != got {
		c.t.Errorf("%s differs from %s (if intended, run go test ./server -update)\ngot:\n%s", name, path, got)
	}
}

var stepLine = regexp.MustCompile(`^\d+\. ([a-z_]+)\((.*?)\)(?: — .*)?$`)

// follow performs the steps under "Action Required:" of an error's text,
// in order, reading only the text, as a model would. It returns the result
// of the last step.
func (c *client) follow(r reply) string {
	c.t.Helper()
	_, plan, ok := strings.Cut(r.Text, "Action Required:\n")
	if !ok {
		c.t.Fatalf("no plan to follow in:\n%s", r.Text)
	}
	var last string
	for _, line := range strings.Split(plan, "\n") {
		m := stepLine.FindStringSubmatch(line)
		if m == nil {
			break // the steps end where the numbered lines end
		}
		last = c.ok(m[1], parseCallArgs(c.t, m[2]))
	}
	return last
}

// parseCallArgs reads name=value, name=value where each value is JSON (a
// quoted string, a number, a list), as the plans write them.
func parseCallArgs(t *testing.T, s string) map[string]any {
	t.Helper()
	args := map[string]any{}
	for s = strings.TrimSpace(s); s != ""; {
		name, rest, ok := strings.Cut(s, "=")
		if !ok {
			t.Fatalf("cannot read arguments %q", s)
		}
		dec := json.NewDecoder(strings.NewReader(rest))
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("argument %s: %v in %q", name, err, rest)
		}
		args[strings.TrimSpace(name)] = v
		s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest[dec.InputOffset():]), ","))
	}
	return args
}
