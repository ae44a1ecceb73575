package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
