package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// inspectorVersion is the MCP Inspector release the client test pins.
const inspectorVersion = "2.12.0"

// TestInspectorCLI drives the built binary with a client nobody on this
// project wrote: the MCP Inspector's CLI mode, installed from npm. It runs
// under `make test-clients` (RETRACE_TEST_CLIENTS=1), since it needs the npm
// registry the first time.
func TestInspectorCLI(t *testing.T) {
	if os.Getenv("RETRACE_TEST_CLIENTS") == "" {
		t.Skip("set RETRACE_TEST_CLIENTS=1 (make test-clients) to run the MCP Inspector CLI")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "retrace", "inspector-"+inspectorVersion)
	cli := filepath.Join(dir, "node_modules", ".bin", "mcp-inspector")
	if _, err := os.Stat(cli); err != nil {
		npm := exec.Command("npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", dir,
			"@modelcontextprotocol/inspector@"+inspectorVersion)
		npm.Stderr = os.Stderr
		if err := npm.Run(); err != nil {
			t.Fatalf("npm install inspector: %v", err)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(cli, append([]string{"--cli"}, args...)...)
		out, err := cmd.Output()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				t.Fatalf("inspector %v: %v\n%s\n%s", args, err, out, ee.Stderr)
			}
			t.Fatalf("inspector %v: %v", args, err)
		}
		t.Logf("inspector %v:\n%s", args, truncate(string(out), 1500))
		return string(out)
	}
	check := func(target ...string) {
		t.Helper()
		list := run(append(target, "--method", "tools/list")...)
		for _, name := range []string{"browser_navigate", "browser_snapshot", "browser_click", "browser_type", "browser_close"} {
			if !strings.Contains(list, `"`+name+`"`) {
				t.Errorf("tools/list lacks %s", name)
			}
		}
		nav := run(append(target, "--method", "tools/call", "--tool-name", "browser_navigate", "--tool-arg", "url="+fx.Page("form.html"))...)
		if !strings.Contains(nav, "Title: <page-content>Sign in</page-content>") {
			t.Errorf("navigate result does not name the page title:\n%s", nav)
		}
	}
	t.Run("stdio", func(t *testing.T) { check(binary) })
	t.Run("http", func(t *testing.T) {
		port := freePort(t)
		srv := exec.Command(binary, "--port", fmt.Sprint(port))
		srv.Stderr = &testLog{t: t}
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { srv.Process.Signal(os.Interrupt); srv.Wait() }()
		endpoint := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
		waitListening(t, port)
		check(endpoint, "--transport", "http")
	})
}

func waitListening(t *testing.T, port int) {
	t.Helper()
	for i := 0; i < 100; i++ {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("nothing listens on port %d", port)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// playwrightTestVersion is the @playwright/test release that runs the
// generated tests: the driver's own version, which runs this Chromium.
const playwrightTestVersion = "1.52.0"

// TestGeneratedTestRuns plays a session through the built binary, has it
// written as a Playwright test twice (browser_generate_test, and retrace
// record for the whole session), and runs both with Playwright's own test
// runner against the fixture app: they must pass. Under make test-clients
// (RETRACE_TEST_CLIENTS=1), since it installs @playwright/test from npm the
// first time.
func TestGeneratedTestRuns(t *testing.T) {
	if os.Getenv("RETRACE_TEST_CLIENTS") == "" {
		t.Skip("set RETRACE_TEST_CLIENTS=1 (make test-clients) to run generated tests with npx playwright test")
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("no chromium on PATH (make setup installs it)")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	runner := filepath.Join(cache, "retrace", "playwright-test-"+playwrightTestVersion)
	cli := filepath.Join(runner, "node_modules", "@playwright", "test", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		npm := exec.Command("npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", runner,
			"@playwright/test@"+playwrightTestVersion)
		npm.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1")
		npm.Stderr = os.Stderr
		if err := npm.Run(); err != nil {
			t.Fatalf("npm install @playwright/test: %v", err)
		}
	}
	out := t.TempDir()
	session := func(cs *mcp.ClientSession) {
		call := func(name string, args map[string]any) string { t.Helper(); return callOK(t, cs, name, args) }
		call("browser_navigate", map[string]any{"url": fx.Page("_formcheck.html")})
		snap := call("browser_snapshot", nil)
		ref := func(line string) string {
			m := regexp.MustCompile(regexp.QuoteMeta(line) + `[^\n]*\[ref=(e\d+)\]`).FindStringSubmatch(snap)
			if m == nil {
				t.Fatalf("no %s in:\n%s", line, snap)
			}
			return m[1]
		}
		// A first try the page refuses, then the fix: the test replays
		// both, and checks what the agent waited for.
		call("browser_click", map[string]any{"ref": ref(`button "Place order"`)})
		call("browser_wait_for", map[string]any{"text": "Enter your email address."})
		call("browser_fill_form", map[string]any{"fields": []map[string]any{
			{"ref": ref(`textbox "Email"`), "value": "ada@example.com"},
			{"ref": ref(`combobox "Delivery"`), "value": "std"},
			{"ref": ref(`radio "Invoice"`), "value": "true"},
			{"ref": ref(`checkbox "I accept the terms"`), "value": "true"},
		}})
		call("browser_click", map[string]any{"ref": ref(`button "Place order"`)})
		call("browser_wait_for", map[string]any{"text": "Order placed"})
		call("browser_navigate", map[string]any{"url": fx.Page("_api.html")})
		snap = call("browser_snapshot", nil)
		call("browser_click", map[string]any{"ref": ref(`button "Send address"`)})
		call("browser_wait_for", map[string]any{"text": "shipping 422"})
	}

	// browser_generate_test: the actions since the last navigation.
	cs := connectBinary(t, "--caps", "testing", "--output-dir", out)
	session(cs)
	callOK(t, cs, "browser_generate_test", map[string]any{"name": "send the address"})
	cs.Close()

	// retrace record: the whole session, written when the server stops.
	whole := filepath.Join(out, "whole-session.spec.ts")
	rec := connectBinary(t, "record", "--out", whole)
	session(rec)
	// Close waits for the server to exit, which writes the file.
	rec.Close()
	code, err := os.ReadFile(whole)
	if err != nil {
		t.Fatalf("retrace record wrote no test: %v", err)
	}
	for _, want := range []string{"test('session of role default'", "Place order", "_api.html", "toHaveValue('ada@example.com')"} {
		if !strings.Contains(string(code), want) {
			t.Errorf("the recorded session lacks %q:\n%s", want, code)
		}
	}

	// Playwright's runner, on this machine's Chromium, while the fixture
	// still serves the pages the tests load.
	specs := filepath.Join(runner, "generated")
	os.RemoveAll(specs)
	if err := os.MkdirAll(specs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"send-the-address.spec.ts", "whole-session.spec.ts"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s:\n%s", name, b)
		if err := os.WriteFile(filepath.Join(specs, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	config := fmt.Sprintf(`module.exports = { testDir: %q, workers: 1, reporter: 'line', timeout: 30000,
  use: { launchOptions: { executablePath: %q, args: ['--no-sandbox', '--disable-gpu'] } } };
`, specs, chromium)
	cfgPath := filepath.Join(runner, "retrace-generated.config.js")
	if err := os.WriteFile(cfgPath, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", cli, "test", "--config", cfgPath)
	cmd.Dir = runner
	report, err := cmd.CombinedOutput()
	t.Logf("npx playwright test:\n%s", report)
	if err != nil {
		t.Fatalf("the generated tests failed under Playwright's runner: %v", err)
	}
	if !regexp.MustCompile(`\b2 passed\b`).Match(report) {
		t.Errorf("want 2 tests passed")
	}
}
