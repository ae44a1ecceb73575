package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/internal/proctree"
	"github.com/retrace-dev/retrace/internal/pwserver"
	"github.com/retrace-dev/retrace/llmerr"
)

// startPlaywrightServer runs a real Playwright browser server on
// 127.0.0.1 (port 0: a free one), stopped at the test's end.
func startPlaywrightServer(t *testing.T, port int) *pwserver.Server {
	t.Helper()
	paths, err := browser.Locate("", "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := pwserver.Start(pwserver.Options{DriverDir: paths.DriverDir, Node: paths.Node, Chromium: paths.Chromium,
		Port: port, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// testLog sends a child's output to the test log while the test runs.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	defer func() { _ = recover() }() // a write after the test ended
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// endpointServer is a server whose browsers run on eps, with a manager of
// its own.
func endpointServer(t *testing.T, eps []browser.Endpoint, connect time.Duration) (*Server, *browser.Manager) {
	t.Helper()
	m := ownManager(t, browser.Options{Endpoints: eps, ConnectTimeout: connect, CloseWhenIdle: true})
	return New(Config{}, m), m
}

// ownManager is a manager of the test's own, headless, with the test
// timeouts and log unless o gives them, closed at the test's end.
func ownManager(t *testing.T, o browser.Options) *browser.Manager {
	t.Helper()
	o.Headless = true
	if o.ActionTimeout == 0 {
		o.ActionTimeout = 3 * time.Second
	}
	if o.NavigationTimeout == 0 {
		o.NavigationTimeout = 10 * time.Second
	}
	if o.DriverLog == nil {
		o.DriverLog = testLog{t}
	}
	m := browser.NewManager(o)
	t.Cleanup(func() { m.Close() })
	return m
}

var endpointLine = regexp.MustCompile(`Browser of this session: (\S+)`)

// where is the endpoint list_current_roles names for the session.
func (c *client) where() string {
	c.t.Helper()
	m := endpointLine.FindStringSubmatch(c.ok("list_current_roles", nil))
	if m == nil {
		c.t.Fatal("list_current_roles does not say where the session runs")
	}
	return m[1]
}

// The browser a Playwright server launches for retrace runs with
// retrace's flags (sent in the launch-options header): the features it
// turns off stay off there too, Playwright's own among them, since
// Chromium reads only the last --disable-features.
func TestEndpointBrowserFlags(t *testing.T) {
	t.Parallel()
	s := startPlaywrightServer(t, 0)
	srv, _ := endpointServer(t, []browser.Endpoint{{URL: s.URL}}, 5*time.Second)
	c := connectServer(t, srv)
	c.ok("browser_navigate", map[string]any{"url": fx.Page("interact.html")})
	var mains [][]string
	for _, p := range proctree.Sample(s.PID()).Live() {
		if args, err := cmdline(p.PID); err == nil && p.Browser() {
			mains = append(mains, args)
		}
	}
	if len(mains) != 1 {
		t.Fatalf("found %d Chromium browser processes under the Playwright server, want 1", len(mains))
	}
	features := ""
	for _, a := range mains[0] {
		if v, ok := strings.CutPrefix(a, "--disable-features="); ok {
			features = v // the last one is the one Chromium reads
		}
	}
	for _, f := range []string{"WebUIOmniboxPopup", "WebUIOmniboxAimPopup", "PaintHolding"} {
		if !slices.Contains(strings.Split(features, ","), f) {
			t.Errorf("the remote browser's last --disable-features lacks %s: %q", f, features)
		}
	}
}

// Sessions spread over two Playwright browser servers; one is killed
// mid-run. Its sessions get BROWSER_CLOSED, follow the plan and finish on
// the other; the sessions on the healthy server never notice. When the
// killed server comes back, new sessions go to it again.
func TestEndpointFailover(t *testing.T) {
	t.Parallel()
	a := startPlaywrightServer(t, 0)
	b := startPlaywrightServer(t, 0)
	srv, m := endpointServer(t, []browser.Endpoint{{URL: a.URL}, {URL: b.URL}}, 5*time.Second)

	const n = 4
	clients := make([]*client, n)
	refs := make([]string, n)
	for i := range clients {
		// One server, several MCP sessions, as over Streamable HTTP.
		clients[i] = connectServer(t, srv)
		clients[i].ok("browser_navigate", map[string]any{"url": fx.Page("interact.html")})
		refs[i] = refOf(t, clients[i].ok("browser_snapshot", nil), "button", "Buy")
	}
	on := map[string][]int{}
	for i, c := range clients {
		on[c.where()] = append(on[c.where()], i)
	}
	if len(on[a.URL]) != n/2 || len(on[b.URL]) != n/2 {
		t.Fatalf("sessions are not spread evenly over the two endpoints: %v", on)
	}

	a.Kill()
	<-a.Done()

	var wg sync.WaitGroup
	for _, i := range on[b.URL] {
		wg.Go(func() {
			// Untouched: same browser, same refs.
			c := clients[i]
			for range 3 {
				c.ok("browser_click", map[string]any{"ref": refs[i]})
			}
			mustContain(t, c.ok("browser_snapshot", nil), "bought")
		})
	}
	for _, i := range on[a.URL] {
		wg.Go(func() {
			c := clients[i]
			r := c.call("browser_click", map[string]any{"ref": refs[i]})
			if !r.IsError || r.code() != string(llmerr.BrowserClosed) {
				t.Errorf("session %d on the killed endpoint: click gave %q, want BROWSER_CLOSED:\n%s", i, r.code(), r.Text)
				return
			}
			// The plan's first step re-places the session.
			mustContain(t, c.follow(r), "Interactions")
			if w := c.where(); w != b.URL {
				t.Errorf("session %d runs on %s after following the plan, want %s", i, w, b.URL)
			}
			// The old ref is stale for good, never reused.
			c.fail("browser_click", map[string]any{"ref": refs[i]}, llmerr.StaleRef)
			ref := refOf(t, c.ok("browser_snapshot", nil), "button", "Buy")
			c.ok("browser_click", map[string]any{"ref": ref})
			mustContain(t, c.ok("browser_snapshot", nil), "bought")
		})
	}
	wg.Wait()

	// The killed endpoint comes back on its port: once its pause is over,
	// it takes new sessions again (it has the fewest).
	back := startPlaywrightServer(t, a.Port)
	deadline := time.Now().Add(time.Minute)
	for {
		st := m.Status()
		if !st[0].Down {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the endpoint that came back is still avoided: %+v", st)
		}
		time.Sleep(200 * time.Millisecond)
	}
	c := connectServer(t, srv)
	c.ok("browser_navigate", map[string]any{"url": fx.Page("interact.html")})
	if w := c.where(); w != back.URL {
		t.Fatalf("a new session went to %s, want the endpoint that came back (%s)", w, back.URL)
	}
}

// An endpoint that refuses, or that accepts and never answers, is left
// for the next one within the connect timeout; when none answers, the
// error is BROWSER_UNREACHABLE with a plan that works once one is back.
func TestEndpointUnreachable(t *testing.T) {
	t.Parallel()
	closed := freePort(t)
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	go func() {
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { conn.Close() }) // accept, never answer
		}
	}()
	refused := "ws://127.0.0.1:" + strconv.Itoa(closed) + "/"
	hangs := "ws://" + silent.Addr().String() + "/"

	srv, _ := endpointServer(t, []browser.Endpoint{{URL: refused}, {URL: hangs}}, 2*time.Second)
	c := connectServer(t, srv)
	start := time.Now()
	r := c.fail("browser_navigate", map[string]any{"url": fx.Page("interact.html")}, llmerr.BrowserUnreachable)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("two unreachable endpoints took %s to report (connect timeout 2 s)", d)
	}
	mustContain(t, r.Text, "127.0.0.1:"+strconv.Itoa(closed), silent.Addr().String())

	// A good endpoint after a dead one: the call just works, on it.
	good := startPlaywrightServer(t, 0)
	srv2, _ := endpointServer(t, []browser.Endpoint{{URL: refused}, {URL: good.URL}}, 2*time.Second)
	c2 := connectServer(t, srv2)
	c2.ok("browser_navigate", map[string]any{"url": fx.Page("interact.html")})
	if w := c2.where(); w != good.URL {
		t.Fatalf("session runs on %s, want %s", w, good.URL)
	}
	// A second session avoids the refusing endpoint while it is down.
	c3 := connectServer(t, srv2)
	c3.ok("browser_navigate", map[string]any{"url": fx.Page("interact.html")})
	if w := c3.where(); w != good.URL {
		t.Fatalf("second session runs on %s, want %s", w, good.URL)
	}

	// The only endpoint refuses, then comes back: the plan's step works.
	port := freePort(t)
	only := "ws://127.0.0.1:" + strconv.Itoa(port) + "/"
	srv3, _ := endpointServer(t, []browser.Endpoint{{URL: only}}, 2*time.Second)
	c4 := connectServer(t, srv3)
	r = c4.fail("browser_navigate", map[string]any{"url": fx.Page("interact.html")}, llmerr.BrowserUnreachable)
	startPlaywrightServer(t, port)
	c4.follow(r)
	mustContain(t, c4.ok("browser_snapshot", nil), "Interactions")
}

// Secrets in an endpoint's URL or headers never reach a result.
func TestEndpointSecretsAreNotShown(t *testing.T) {
	t.Parallel()
	s := startPlaywrightServer(t, 0)
	withToken := s.URL + "?token=sekrit-in-url"
	srv, _ := endpointServer(t, []browser.Endpoint{{URL: withToken, Headers: map[string]string{"Authorization": "Bearer sekrit-in-header"}}}, 5*time.Second)
	c := connectServer(t, srv)
	c.record = true
	c.ok("browser_navigate", map[string]any{"url": fx.Page("interact.html")})
	c.ok("list_current_roles", nil)
	s.Kill()
	<-s.Done()
	c.call("browser_snapshot", nil)
	c.call("browser_navigate", map[string]any{"url": fx.Page("interact.html")})
	c.assertNoSecret("sekrit")
}

// A Playwright server of another version is SETUP_REQUIRED naming both.
func TestEndpointVersionMismatch(t *testing.T) {
	t.Parallel()
	dir := otherPlaywright(t, "1.51.0")
	paths, err := browser.Locate("", "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := pwserver.Start(pwserver.Options{DriverDir: dir, Node: paths.Node, Chromium: paths.Chromium, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	srv, _ := endpointServer(t, []browser.Endpoint{{URL: s.URL}}, 5*time.Second)
	c := connectServer(t, srv)
	r := c.fail("browser_navigate", map[string]any{"url": fx.Page("interact.html")}, llmerr.SetupRequired)
	mustContain(t, r.Text, "1.51", browser.DriverVersion)
}

// otherPlaywright installs playwright-core@version from the npm registry
// once, into the user cache, laid out as a driver directory
// (<dir>/package/cli.js).
func otherPlaywright(t *testing.T, version string) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "retrace", "test-playwright-core-"+version)
	if _, err := os.Stat(filepath.Join(dir, "package", "cli.js")); err == nil {
		return dir
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "npm-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	out, err := exec.Command("npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", tmp, "playwright-core@"+version).CombinedOutput()
	if err != nil {
		t.Fatalf("npm install playwright-core@%s: %v\n%s", version, err, out)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(tmp, "node_modules", "playwright-core"), filepath.Join(dir, "package")); err != nil && !os.IsExist(err) {
		t.Fatal(err)
	}
	return dir
}

// A Chromium started with --remote-debugging-port is an http:// endpoint.
// When it dies, the session gets BROWSER_CLOSED; once it is back, the plan
// works.
func TestEndpointCDP(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	chromium := startDebuggableChromium(t, port)
	srv, _ := endpointServer(t, []browser.Endpoint{{URL: fmt.Sprintf("http://127.0.0.1:%d", port)}}, 5*time.Second)
	c := connectServer(t, srv)
	c.ok("browser_navigate", map[string]any{"url": fx.Page("interact.html")})
	ref := refOf(t, c.ok("browser_snapshot", nil), "button", "Buy")
	mustContain(t, c.ok("list_current_roles", nil), "CDP endpoint")

	_ = syscall.Kill(-chromium.Process.Pid, syscall.SIGKILL)
	_ = chromium.Wait()
	r := c.fail("browser_click", map[string]any{"ref": ref}, llmerr.BrowserClosed)
	startDebuggableChromium(t, port)
	mustContain(t, c.follow(r), "Interactions")
	c.fail("browser_click", map[string]any{"ref": ref}, llmerr.StaleRef)
}

// startDebuggableChromium starts Chromium serving CDP on port, in a fresh
// profile, killed at the test's end; it opens about:blank, or the pages
// given.
func startDebuggableChromium(t *testing.T, port int, pages ...string) *exec.Cmd {
	t.Helper()
	if len(pages) == 0 {
		pages = []string{"about:blank"}
	}
	paths, err := browser.Locate("", "")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(paths.Chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
		"--remote-debugging-address=127.0.0.1", "--remote-debugging-port="+strconv.Itoa(port),
		"--user-data-dir="+t.TempDir())
	cmd.Args = append(cmd.Args, pages...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			conn.Close()
			return cmd
		}
		if time.Now().After(deadline) {
			t.Fatalf("Chromium did not open its debugging port %d", port)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// freePort returns a TCP port on 127.0.0.1 that nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// An idle HTTP session is reclaimed after its timeout: its contexts are
// released and its place on the endpoint is given back.
func TestIdleSessionIsReclaimed(t *testing.T) {
	t.Parallel()
	s := startPlaywrightServer(t, 0)
	srv, m := endpointServer(t, []browser.Endpoint{{URL: s.URL}}, 5*time.Second)
	ts := httptest.NewServer(srv.HTTPHandler(HTTPOptions{BindHost: "127.0.0.1", SessionTimeout: 1500 * time.Millisecond}))
	t.Cleanup(func() {
		for ss := range srv.MCP().Sessions() {
			ss.Close()
		}
		ts.Close()
		srv.Close()
	})
	cs, err := sdkConnect(t, ts.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"", "default"} {
		args := map[string]any{"url": fx.Page("interact.html")}
		if role != "" {
			args["role"] = role
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "browser_navigate", Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("navigate: %v %+v", err, res)
		}
	}
	if n := m.Contexts(); n != 1 {
		t.Fatalf("%d contexts open for one session, want 1", n)
	}
	if st := m.Status(); st[0].Sessions != 1 {
		t.Fatalf("endpoint holds %d sessions, want 1", st[0].Sessions)
	}
	// The client goes quiet; no DELETE comes.
	deadline := time.Now().Add(15 * time.Second)
	for m.Contexts() != 0 || m.Status()[0].Sessions != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("an idle session still holds %d contexts and %d places after its timeout", m.Contexts(), m.Status()[0].Sessions)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// --cdp-endpoint attaches to the user's own browser: the default role
// works in its context and open tabs (reading a tab it did not open),
// and browser_close closes only the tabs retrace opened.
func TestAttachToTheUsersBrowser(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	startDebuggableChromium(t, port, fx.Page("form.html"))
	srv, _ := endpointServer(t, []browser.Endpoint{{URL: fmt.Sprintf("http://127.0.0.1:%d", port), UseDefaultContext: true}}, 5*time.Second)
	c := connectServer(t, srv)
	// The user's tab may still be loading when retrace attaches.
	for i := 0; !strings.Contains(c.ok("browser_tabs", map[string]any{"action": "list"}), fx.Page("form.html")); i++ {
		if i == 50 {
			t.Fatalf("the user's tab is not listed:\n%s", c.ok("browser_tabs", map[string]any{"action": "list"}))
		}
		time.Sleep(100 * time.Millisecond)
	}
	mustContain(t, c.ok("browser_snapshot", nil), fx.Page("form.html"), `button "Sign in"`)
	c.ok("browser_tabs", map[string]any{"action": "new", "url": fx.Page("interact.html")})
	mustContain(t, c.ok("browser_tabs", map[string]any{"action": "list"}), fx.Page("form.html"), fx.Page("interact.html"))
	c.ok("browser_close", nil)

	open := func() string {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/json/list", port))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	deadline := time.Now().Add(5 * time.Second)
	for strings.Contains(open(), "interact.html") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if pages := open(); !strings.Contains(pages, fx.Page("form.html")) || strings.Contains(pages, "interact.html") {
		t.Errorf("after browser_close the browser has, want the user's tab only:\n%s", pages)
	}
	// The next call attaches again, to the same tab.
	mustContain(t, c.ok("browser_snapshot", nil), `button "Sign in"`)

	// A browser that is not there is named, not the local Chromium.
	dead := freePort(t)
	srv2, _ := endpointServer(t, []browser.Endpoint{{URL: fmt.Sprintf("http://127.0.0.1:%d", dead), UseDefaultContext: true}}, 2*time.Second)
	r := connectServer(t, srv2).fail("browser_snapshot", nil, llmerr.BrowserUnreachable)
	mustContain(t, r.Text, fmt.Sprintf("127.0.0.1:%d", dead))
	if strings.Contains(r.Text, "/usr/bin/chromium") {
		t.Errorf("the error names the local Chromium:\n%s", r.Text)
	}
}
