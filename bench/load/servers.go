package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/retrace-dev/retrace/internal/peer"
	"github.com/retrace-dev/retrace/internal/proctree"
)

// child is one server process the bench started.
type child struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed when the process has exited
	lines   chan string   // its stdout, line by line, while someone reads
}

// startChild starts cmd in its own process group (a Ctrl-C at the terminal
// reaches the bench, which then stops its children in order), with stderr
// and stdout going to a temporary log file; stdout lines are also sent on
// lines, dropped when nobody reads them.
func startChild(name string, cmd *exec.Cmd) (*child, error) {
	slug := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(name))
	logf, err := os.CreateTemp("", "retrace-load-"+slug+"-*.log")
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = w, logf
	// Pdeathsig: if the bench dies without cleaning up, its children are
	// told to stop too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		logf.Close()
		r.Close()
		w.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	w.Close()
	c := &child{name: name, cmd: cmd, logPath: logf.Name(), done: make(chan struct{}), lines: make(chan string, 64)}
	var copied sync.WaitGroup
	copied.Go(func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			select {
			case c.lines <- sc.Text():
			default:
			}
		}
		r.Close()
	})
	go func() {
		cmd.Wait()
		copied.Wait()
		logf.Close()
		close(c.done)
	}()
	return c, nil
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// exited reports whether the process has ended.
func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// waitLine waits for a stdout line matching re and returns its first
// submatch.
func (c *child) waitLine(ctx context.Context, re *regexp.Regexp, timeout time.Duration) (string, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case line := <-c.lines:
			if m := re.FindStringSubmatch(line); m != nil {
				return m[1], nil
			}
		case <-c.done:
			return "", fmt.Errorf("%s exited before printing %s (log: %s)", c.name, re, c.logPath)
		case <-t.C:
			return "", fmt.Errorf("%s printed no %s in %s (log: %s)", c.name, re, timeout, c.logPath)
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// waitPort waits until something accepts TCP connections on addr.
func (c *child) waitPort(ctx context.Context, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		if c.exited() {
			return fmt.Errorf("%s exited before listening on %s (log: %s)", c.name, addr, c.logPath)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not listen on %s within %s (log: %s)", c.name, addr, timeout, c.logPath)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM and, after grace, SIGKILL to the process.
func (c *child) stop(grace time.Duration) {
	if c.exited() {
		return
	}
	syscall.Kill(c.pid(), syscall.SIGTERM)
	select {
	case <-c.done:
		return
	case <-time.After(grace):
	}
	syscall.Kill(c.pid(), syscall.SIGKILL)
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
	}
}

// system is one MCP server under load, with the processes behind it.
type system struct {
	key      string // names it in -systems
	name     string
	how      string   // how it was started, for the report
	endpoint string   // http://127.0.0.1:P/mcp
	children []*child // the MCP server first
	refArg   string   // the argument of browser_click that takes the ref
	http     *http.Client
	sampler  *sampler
}

// roots are the PIDs whose process trees are the system's cost.
func (s *system) roots() []int {
	var pids []int
	for _, c := range s.children {
		pids = append(pids, c.pid())
	}
	return pids
}

// logs are the children's log files.
func (s *system) logs() string {
	var paths []string
	for _, c := range s.children {
		paths = append(paths, c.logPath)
	}
	return strings.Join(paths, ", ")
}

// connect opens one MCP session.
func (s *system) connect(ctx context.Context, timeout time.Duration) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return mcp.NewClient(&mcp.Implementation{Name: "retrace-load", Version: "0"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.endpoint, HTTPClient: s.http}, nil)
}

// stop ends the children in order (the MCP server first, so it lets go of
// its browsers before they go), then kills, by PID and start time, any
// process that was ever in their trees and is still running.
func (s *system) stop() {
	if s.sampler != nil {
		s.sampler.close() // it takes a last reading as it goes
	}
	for _, c := range s.children {
		c.stop(10 * time.Second)
	}
	if s.sampler == nil {
		return
	}
	seen := s.sampler.seenProcs()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && seen.Running() > 0 {
		time.Sleep(100 * time.Millisecond)
	}
	if n := seen.KillLeft(); n > 0 {
		fmt.Fprintf(os.Stderr, "load: %s: killed %d processes left after the servers exited\n", s.name, n)
	}
}

// newHTTPClient keeps enough idle connections for every session of a level
// (the default keeps two per host, and the rest would reconnect each call).
func newHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 256
	return &http.Client{Transport: t}
}

// freePort asks the kernel for a free loopback port. Another process could
// take it before the server binds it; the server then fails to start and
// the bench says so.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// env are the settings every system needs.
type env struct {
	bin       string // bin/retrace
	chromium  string
	driverDir string // the Playwright driver retrace uses (package/cli.js)
	node      string
	peerCLI   string // @playwright/mcp's cli.js, installed on first use
	tmp       string // scratch directory of this run
}

// startSystem starts the MCP server of key (and what it needs), waits for
// it, opens one session to learn the click argument and starts sampling its
// process trees.
func startSystem(ctx context.Context, key string, e env, o options) (*system, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	s := &system{key: key, endpoint: "http://" + addr + "/mcp", http: newHTTPClient(), refArg: "ref"}
	fail := func(err error) (*system, error) {
		s.sampler = newSampler(s.roots()...)
		s.stop()
		return nil, err
	}
	serverArgs := []string{"--port", strconv.Itoa(port), "--host", "127.0.0.1", "--max-sessions", "64"}
	var server *exec.Cmd
	switch key {
	case "retrace":
		s.name = "retrace, local Chromium"
		server = exec.Command(e.bin, append(serverArgs, "--executable-path", e.chromium)...)
		s.how = fmt.Sprintf("`bin/retrace %s --executable-path %s`", shown(serverArgs, port), e.chromium)
	case "retrace-servers":
		s.name = "retrace, 2 Playwright servers"
		if err := hasFlag(e.bin, "browser-endpoint"); err != nil {
			return nil, err
		}
		browsers, err := browserShim(e)
		if err != nil {
			return nil, err
		}
		var endpoints []string
		for i := 1; i <= 2; i++ {
			cmd := exec.Command(e.node, filepath.Join(e.driverDir, "package", "cli.js"), "run-server", "--port", "0", "--host", "127.0.0.1")
			cmd.Env = append(os.Environ(), "PLAYWRIGHT_BROWSERS_PATH="+browsers, "PLAYWRIGHT_SKIP_VALIDATE_HOST_REQUIREMENTS=1")
			c, err := startChild(fmt.Sprintf("playwright run-server %d", i), cmd)
			if err != nil {
				return fail(err)
			}
			s.children = append(s.children, c)
			ws, err := c.waitLine(ctx, regexp.MustCompile(`Listening on (ws://\S+)`), 30*time.Second)
			if err != nil {
				return fail(err)
			}
			endpoints = append(endpoints, ws)
		}
		args := slices.Clone(serverArgs)
		for _, ws := range endpoints {
			args = append(args, "--browser-endpoint", ws)
		}
		server = exec.Command(e.bin, args...)
		s.how = fmt.Sprintf("two `node <driver>/package/cli.js run-server --port 0 --host 127.0.0.1` (Playwright %s, the driver retrace uses; each prints the `ws://127.0.0.1:N/` it listens on), then `bin/retrace %s --browser-endpoint ws://127.0.0.1:N1/ --browser-endpoint ws://127.0.0.1:N2/`",
			driverVersion(e.driverDir), shown(serverArgs, port))
	case "playwright-mcp":
		s.name = "playwright-mcp " + peer.Version
		// Its HTTP transport accepts only the Host it prints (localhost:P)
		// unless told otherwise; the endpoint here is 127.0.0.1:P.
		peerArgs := []string{"--port", strconv.Itoa(port), "--host", "127.0.0.1", "--allowed-hosts", addr, "--headless", "--isolated", "--executable-path", e.chromium, "--no-sandbox"}
		server = exec.Command("node", append([]string{e.peerCLI}, peerArgs...)...)
		server.Dir = e.tmp // it writes output files into its working directory
		s.how = fmt.Sprintf("`node cli.js %s` (@playwright/mcp@%s from npm)", shown(peerArgs, port), peer.Version)
	default:
		return nil, fmt.Errorf("unknown system %q (want retrace, retrace-servers or playwright-mcp)", key)
	}
	c, err := startChild(s.name, server)
	if err != nil {
		return fail(err)
	}
	// The MCP server goes first: it is stopped first.
	s.children = append([]*child{c}, s.children...)
	s.sampler = newSampler(s.roots()...)
	if err := c.waitPort(ctx, addr, 60*time.Second); err != nil {
		s.stop()
		return nil, err
	}
	cs, err := s.connect(ctx, o.callTimeout)
	if err != nil {
		s.stop()
		return nil, fmt.Errorf("%s: first session: %w (logs: %s)", s.name, err, s.logs())
	}
	s.refArg = peer.ClickRefArg(ctx, cs)
	cs.Close()
	return s, nil
}

// shown writes args for the report with the port as P, so that the text
// does not change from run to run.
func shown(args []string, port int) string {
	return strings.ReplaceAll(strings.Join(args, " "), strconv.Itoa(port), "P")
}

// hasFlag tells whether the binary's --help lists the flag.
func hasFlag(bin, flag string) error {
	out, _ := exec.Command(bin, "--help").CombinedOutput()
	if !strings.Contains(string(out), "-"+flag+" ") && !strings.Contains(string(out), "-"+flag+"\n") {
		return fmt.Errorf("%s has no --%s flag (rebuild it: make build)", bin, flag)
	}
	return nil
}

// browserShim makes a Playwright browsers directory whose Chromium entries
// are links to the machine's Chromium, and returns it. Playwright's
// run-server drops a client's executablePath (it keeps it only in its
// "extension" mode, see filterLaunchOptions in the driver's
// lib/remote/playwrightConnection.js) and launches the browser of its own
// registry instead, which this machine does not download.
func browserShim(e env) (string, error) {
	revision, err := chromiumRevision(e.driverDir)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(e.tmp, "ms-playwright")
	for _, p := range []string{
		filepath.Join("chromium-"+revision, "chrome-linux", "chrome"),
		filepath.Join("chromium_headless_shell-"+revision, "chrome-linux", "headless_shell"),
	} {
		link := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			return "", err
		}
		if err := os.Symlink(e.chromium, link); err != nil && !errors.Is(err, os.ErrExist) {
			return "", err
		}
	}
	return dir, nil
}

var revisionRe = regexp.MustCompile(`"name":\s*"chromium",\s*"revision":\s*"(\d+)"`)

// chromiumRevision reads the Chromium revision the driver expects from its
// browsers.json.
func chromiumRevision(driverDir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(driverDir, "package", "browsers.json"))
	if err != nil {
		return "", err
	}
	m := revisionRe.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("no chromium revision in %s/package/browsers.json", driverDir)
	}
	return string(m[1]), nil
}

var versionRe = regexp.MustCompile(`"version":\s*"([^"]+)"`)

func driverVersion(driverDir string) string {
	data, _ := os.ReadFile(filepath.Join(driverDir, "package", "package.json"))
	if m := versionRe.FindSubmatch(data); m != nil {
		return string(m[1])
	}
	return "(version unknown)"
}

// sampler reads the summed VmRSS of a system's process trees every few
// hundred milliseconds, keeps the peak since the last reset and remembers
// every process it saw, so that none is left running at the end.
type sampler struct {
	roots []int
	mu    sync.Mutex
	peak  int64
	procs int // the most processes seen at once
	seen  map[[2]uint64]proctree.Proc
	quit  chan struct{}
	done  chan struct{}
	once  sync.Once
}

const sampleEvery = 250 * time.Millisecond

func newSampler(roots ...int) *sampler {
	s := &sampler{roots: roots, seen: map[[2]uint64]proctree.Proc{}, quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(sampleEvery)
		defer t.Stop()
		for {
			s.sample()
			select {
			case <-s.quit:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// sample takes one reading and returns it: the live processes of the
// trees.
func (s *sampler) sample() proctree.Tree {
	t := proctree.Sample(s.roots...).Live()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.peak = max(s.peak, t.RSS())
	s.procs = max(s.procs, len(t))
	for _, p := range t {
		s.seen[[2]uint64{uint64(p.PID), p.Start}] = p
	}
	return t
}

// reset starts a new peak.
func (s *sampler) reset() {
	s.mu.Lock()
	s.peak, s.procs = 0, 0
	s.mu.Unlock()
}

// peaks returns the highest tree RSS and process count since the reset.
func (s *sampler) peaks() (int64, int) {
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak, s.procs
}

// seenProcs are all the processes the sampler saw, each once.
func (s *sampler) seenProcs() proctree.Tree {
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out proctree.Tree
	for _, p := range s.seen {
		out = append(out, p)
	}
	return out
}

func (s *sampler) close() {
	s.once.Do(func() { close(s.quit) })
	<-s.done
	s.sample()
}
