package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	deployDoc   = "docs/deploy.md"
	deployHost  = "mcp.example.com" // the page's server_name and --allowed-hosts
	deployToken = "deploy-test-token-0123456789abcdef"
)

// findNginx returns the nginx executable, or "" when it is not installed.
func findNginx() string {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	if st, err := os.Stat("/usr/sbin/nginx"); err == nil && st.Mode()&0o111 != 0 {
		return "/usr/sbin/nginx"
	}
	return ""
}

// TestDeployBehindNginx runs the deployment of docs/deploy.md for real: two
// retrace processes behind nginx, with the nginx configuration read from
// that page, and MCP sessions through it that must each stay on the
// process holding them.
func TestDeployBehindNginx(t *testing.T) {
	nginx := findNginx()
	if nginx == "" {
		t.Skip("nginx is not installed (make setup installs it; Debian: apt-get install nginx): the reverse-proxy deployment of docs/deploy.md is not tested")
	}
	site := deploySite(t)

	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, round := r.URL.Query().Get("s"), r.URL.Query().Get("r")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>Session %s round %s</title><h1>marker s%s r%s</h1><button>Next</button>", s, round, s, round)
	}))
	t.Cleanup(pages.Close)
	pageURL := func(s, round int) string { return fmt.Sprintf("%s/page?s=%d&r=%d", pages.URL, s, round) }
	marker := func(s, round int) string { return fmt.Sprintf("marker s%d r%d", s, round) }

	// The instances take two and three sessions: five sessions fill both
	// whatever order nginx picks them in, and a sixth meets two full ones.
	addrA := startDeployed(t, "a", "--max-sessions", "2")
	addrB := startDeployed(t, "b", "--max-sessions", "3")
	proxy, logs := startNginx(t, nginx, site, addrA, addrB)

	// Clients reach nginx by the public name: every connection goes to
	// nginx's address, and the Host header says mcp.example.com.
	endpoint := fmt.Sprintf("http://%s:%s/mcp", deployHost, portOf(proxy))
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, proxy)
	}
	plain := &http.Client{Transport: &http.Transport{DialContext: dial}, Timeout: 30 * time.Second}
	withToken := &http.Client{Transport: bearer{token: deployToken, next: plain.Transport}}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var ids []string // every session opened, in order
	connect := func() *mcp.ClientSession {
		t.Helper()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "deploy", Version: "0"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: withToken}, nil)
		if err != nil {
			t.Fatalf("connect through nginx: %v", err)
		}
		t.Cleanup(func() { cs.Close() })
		if name, _, _ := strings.Cut(cs.ID(), "-"); name != "a" && name != "b" {
			t.Fatalf("session ID %q does not start with an instance name", cs.ID())
		}
		ids = append(ids, cs.ID())
		return cs
	}
	sessions := make([]*mcp.ClientSession, 5)
	perInstance := map[string]int{}
	for i := range sessions {
		sessions[i] = connect()
		name, _, _ := strings.Cut(sessions[i].ID(), "-")
		perInstance[name]++
	}
	if perInstance["a"] != 2 || perInstance["b"] != 3 {
		t.Fatalf("sessions per instance: %v; want a:2 b:3 (their --max-sessions)", perInstance)
	}

	// Every session works at once, over many requests, on state that only
	// the process holding it has: its page, then its tab's history.
	var wg sync.WaitGroup
	for i, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			call := func(name string, args map[string]any) (string, bool) {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
				if err != nil {
					t.Errorf("session %d (%s): %s: %v", i, cs.ID(), name, err)
					return "", false
				}
				if res.IsError {
					t.Errorf("session %d (%s): %s failed:\n%s", i, cs.ID(), name, textOf(res))
					return "", false
				}
				return textOf(res), true
			}
			for round := 1; round <= 2; round++ {
				if _, ok := call("browser_navigate", map[string]any{"url": pageURL(i, round)}); !ok {
					return
				}
				if text, ok := call("browser_snapshot", nil); ok && !strings.Contains(text, marker(i, round)) {
					t.Errorf("session %d (%s): snapshot lacks %q:\n%s", i, cs.ID(), marker(i, round), text)
				}
			}
			if _, ok := call("browser_navigate_back", nil); !ok {
				return
			}
			if text, ok := call("browser_snapshot", nil); ok && !strings.Contains(text, marker(i, 1)) {
				t.Errorf("session %d (%s): after going back, the snapshot lacks %q:\n%s", i, cs.ID(), marker(i, 1), text)
			}
		}()
	}
	wg.Wait()

	// Both instances are full: nginx tries each, and passes retrace's 503
	// on. Once a session of b ends, the next one lands there, whichever
	// instance nginx tries first.
	if got := initializeVia(t, plain, endpoint, "", deployToken); got != http.StatusServiceUnavailable {
		t.Errorf("initialize with every instance full: %d, want 503", got)
	}
	for _, cs := range sessions {
		if strings.HasPrefix(cs.ID(), "b-") {
			cs.Close()
			break
		}
	}
	if cs := connect(); !strings.HasPrefix(cs.ID(), "b-") {
		t.Errorf("with only b having room, a new session got %s", cs.ID())
	} else {
		sessions = append(sessions, cs)
	}

	// retrace's own checks still hold through the proxy.
	if got := initializeVia(t, plain, endpoint, "evil.example", deployToken); got != http.StatusForbidden {
		t.Errorf("initialize with Host evil.example through nginx: %d, want 403", got)
	}
	if got := initializeVia(t, plain, endpoint, "", ""); got != http.StatusUnauthorized {
		t.Errorf("initialize without the token through nginx: %d, want 401", got)
	}

	// Closing sends DELETE through nginx; the process holding the session
	// forgets it.
	for _, cs := range sessions {
		if err := cs.Close(); err != nil {
			t.Errorf("session %s: close: %v", cs.ID(), err)
		}
	}
	for _, id := range ids {
		if got := pingVia(t, withToken, endpoint, id); got != http.StatusNotFound {
			t.Errorf("session %s after DELETE: ping answered %d, want 404 (session not found)", id, got)
		}
	}

	checkAccessLog(t, logs, ids, map[string]string{"a": addrA, "b": addrB})
}

// deploySite returns the nginx block of docs/deploy.md.
func deploySite(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(deployDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "```nginx\n")
	block, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatalf("%s has no ```nginx block: the test runs the configuration that page shows", deployDoc)
	}
	return block
}

// startDeployed starts retrace as instance name on a free loopback port,
// with the token and the public name of docs/deploy.md, and returns its
// address.
func startDeployed(t *testing.T, name string, args ...string) string {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command(binary, append([]string{"--port", fmt.Sprint(port), "--host", "127.0.0.1",
		"--instance", name, "--allowed-hosts", deployHost}, args...)...)
	cmd.Env = append(withoutRetraceEnv(), "RETRACE_AUTH_TOKEN="+deployToken)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopProcess(cmd, os.Interrupt)
		if t.Failed() {
			t.Logf("retrace instance %s said:\n%s", name, stderr.String())
		}
	})
	waitListening(t, port)
	return fmt.Sprintf("127.0.0.1:%d", port)
}

// startNginx runs nginx in the foreground, as one process, with the site
// block (its ports replaced by addrA, addrB and a free one) and every file
// it writes in a temporary directory. It returns the proxy's address and
// the path of its access log.
func startNginx(t *testing.T, nginx, site, addrA, addrB string) (addr, accessLog string) {
	t.Helper()
	port := freePort(t)
	addr = fmt.Sprintf("127.0.0.1:%d", port)
	for old, repl := range map[string]string{
		"127.0.0.1:9101": addrA,
		"127.0.0.1:9102": addrB,
		"listen 8080;":   "listen " + addr + ";",
	} {
		if !strings.Contains(site, old) {
			t.Fatalf("the nginx block of %s no longer holds %q, which the test replaces", deployDoc, old)
		}
		site = strings.ReplaceAll(site, old, repl)
	}
	dir := t.TempDir()
	for _, d := range []string{"logs", "temp/body", "temp/proxy", "temp/fastcgi", "temp/uwsgi", "temp/scgi"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	accessLog = filepath.Join(dir, "logs", "access.log")
	conf := fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/logs/error.log info;
events { worker_connections 256; }
http {
    log_format deploy '$request_method $status sid=$http_mcp_session_id new=$sent_http_mcp_session_id us=$upstream_status up=$upstream_addr';
    access_log %[1]s/logs/access.log deploy;
    client_body_temp_path %[1]s/temp/body;
    proxy_temp_path %[1]s/temp/proxy;
    fastcgi_temp_path %[1]s/temp/fastcgi;
    uwsgi_temp_path %[1]s/temp/uwsgi;
    scgi_temp_path %[1]s/temp/scgi;
%[2]s
}
`, dir, site)
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(nginx, "-p", dir, "-c", confPath, "-e", filepath.Join(dir, "logs", "error.log"))
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGQUIT) // graceful: ends the open streams
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("nginx configuration:\n%s\nnginx error log:\n%s\nnginx access log:\n%s", conf,
				readFile(filepath.Join(dir, "logs", "error.log")), readFile(accessLog))
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("nginx exited: %v\n%s\n%s", err, out.String(), readFile(filepath.Join(dir, "logs", "error.log")))
		default:
		}
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr, accessLog
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx does not listen on %s after 10 s:\n%s", addr, out.String())
		}
	}
}

// stopProcess signals cmd and waits for it, killing it after 10 s.
func stopProcess(cmd *exec.Cmd, sig os.Signal) {
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// checkAccessLog checks that every request of each session went to the
// process its ID names, that each had its event stream (GET) and its
// DELETE, and that the initialize refused with both instances full was
// tried on both. Lines are written when a request ends, so it waits for the
// event streams to be logged.
func checkAccessLog(t *testing.T, path string, ids []string, addrs map[string]string) {
	t.Helper()
	// METHOD STATUS sid=ID new=ID us=STATUS[, STATUS] up=ADDR[, ADDR]
	line := regexp.MustCompile(`^(\S+) (\d+) sid=(\S+) new=(\S+) us=(.*) up=(.*)$`)
	type entry struct{ method, status, sid, created, upStatus, up string }
	var entries []entry
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		entries = entries[:0]
		streams := 0
		for _, l := range strings.Split(readFile(path), "\n") {
			if m := line.FindStringSubmatch(l); m != nil {
				entries = append(entries, entry{m[1], m[2], m[3], m[4], m[5], m[6]})
				if m[1] == "GET" {
					streams++
				}
			}
		}
		if streams >= len(ids) || time.Now().After(deadline) {
			break
		}
	}
	seen := map[string]map[string]bool{}
	triedBoth := false
	for _, e := range entries {
		id := e.sid
		if id == "-" {
			id = e.created // an initialize: the ID it was given
		}
		if e.status == "503" && e.upStatus == "503, 503" {
			triedBoth = true
		}
		name, _, _ := strings.Cut(id, "-")
		want, ok := addrs[name]
		if !ok {
			continue // no session: refused, or a server/discover
		}
		if last := e.up[strings.LastIndex(e.up, " ")+1:]; last != want {
			t.Errorf("%s %s of session %s went to %s, not to instance %s at %s", e.method, e.status, id, e.up, name, want)
		}
		if seen[id] == nil {
			seen[id] = map[string]bool{}
		}
		seen[id][e.method+" "+e.status] = true
	}
	for _, id := range ids {
		for _, want := range []string{"POST 200", "GET 200"} {
			if !seen[id][want] {
				t.Errorf("session %s: no %q in nginx's access log; it saw %v", id, want, seen[id])
			}
		}
		if !seen[id]["DELETE 200"] && !seen[id]["DELETE 204"] {
			t.Errorf("session %s: no successful DELETE in nginx's access log; it saw %v", id, seen[id])
		}
	}
	if !triedBoth {
		t.Errorf("the initialize refused with both instances full was not tried on both (proxy_next_upstream http_503):\n%s", readFile(path))
	}
}

// initializeVia POSTs an initialize through client with the given Host
// (empty: the endpoint's) and token, and returns the status.
func initializeVia(t *testing.T, client *http.Client, endpoint, host, token string) int {
	t.Helper()
	return postVia(t, client, endpoint, host, token, "",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"deploy","version":"0"}}}`)
}

// pingVia sends a ping in session id and returns the status.
func pingVia(t *testing.T, client *http.Client, endpoint, id string) int {
	t.Helper()
	return postVia(t, client, endpoint, "", "", id, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
}

func postVia(t *testing.T, client *http.Client, endpoint, host, token, session, body string) int {
	t.Helper()
	req, err := http.NewRequest("POST", endpoint, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// bearer adds the token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func portOf(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return port
}

func readFile(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return string(data)
}
