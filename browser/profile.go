package browser

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Profile is a local Chromium that retrace starts on a user data
// directory (--user-data-dir) and reaches over CDP, as it reaches a
// user's own browser (--cdp-endpoint): the default role works in the
// profile's own context, whose cookies and storage outlive the server.
// Chromium is started again, on the same port, if it exits while the
// server runs.
type Profile struct {
	// URL is the CDP endpoint, http://127.0.0.1:PORT.
	URL string

	dir, chromium string
	args          []string
	log           io.Writer

	mu      sync.Mutex
	cmd     *exec.Cmd
	closed  bool
	exited  chan struct{}
	restart int
}

// maxProfileRestarts bounds how often a Chromium that keeps exiting is
// started again.
const maxProfileRestarts = 5

// StartProfile starts Chromium on dir (created 0700 if missing) with a
// debugging port on 127.0.0.1 and waits for it to answer.
func StartProfile(opts Options, dir string) (*Profile, error) {
	chromium, err := FindChromium(opts.ExecutablePath)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("--user-data-dir: %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	sandbox := sandboxed(os.Geteuid(), opts.NoSandbox)
	args := launchArgs(sandbox, opts.Args)
	if opts.Headless {
		args = append(args, "--headless")
	}
	if v := opts.Viewport; v != nil {
		args = append(args, fmt.Sprintf("--window-size=%d,%d", v.Width, v.Height))
	}
	args = append(args, "--remote-debugging-address=127.0.0.1", "--remote-debugging-port="+strconv.Itoa(port),
		"--user-data-dir="+dir, "about:blank")
	log := opts.DriverLog
	if log == nil {
		log = os.Stderr
	}
	p := &Profile{URL: fmt.Sprintf("http://127.0.0.1:%d", port), dir: dir, chromium: chromium, args: args, log: log}
	if err := p.start(); err != nil {
		return nil, err
	}
	return p, nil
}

// start runs Chromium and waits until its debugging port answers.
func (p *Profile) start() error {
	// A profile Chromium left locked (a crash) would refuse to start.
	for _, f := range []string{"SingletonLock", "SingletonSocket", "SingletonCookie"} {
		_ = os.Remove(filepath.Join(p.dir, f))
	}
	cmd := exec.Command(p.chromium, p.args...)
	// Never stdout: in stdio mode it carries JSON-RPC only.
	cmd.Stdout, cmd.Stderr = p.log, p.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting Chromium on %s: %w", p.dir, err)
	}
	exited := make(chan struct{})
	p.mu.Lock()
	p.cmd, p.exited = cmd, exited
	p.mu.Unlock()
	go p.watch(cmd, exited)
	addr := p.URL[len("http://"):]
	for deadline := time.Now().Add(20 * time.Second); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("Chromium exited at start on %s (is the profile used by another Chromium?)", p.dir)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("Chromium on %s did not open its debugging port in 20 s", p.dir)
		}
	}
}

// watch waits for cmd to exit and, unless the profile was closed, starts
// Chromium again: the next call finds its endpoint answering.
func (p *Profile) watch(cmd *exec.Cmd, exited chan struct{}) {
	_ = cmd.Wait()
	close(exited)
	p.mu.Lock()
	again := !p.closed && p.cmd == cmd && p.restart < maxProfileRestarts
	if again {
		p.restart++
	}
	p.mu.Unlock()
	if again {
		if err := p.start(); err != nil {
			fmt.Fprintf(p.log, "retrace: the profile's Chromium did not start again: %v\n", err)
		}
	}
}

// PID is the process ID of the Chromium running now, or 0.
func (p *Profile) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Close stops Chromium; the profile stays on disk.
func (p *Profile) Close() error {
	p.mu.Lock()
	p.closed = true
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return nil
	}
	// Asked over CDP, Chromium shuts down as a person closing it would,
	// writing its cookies out; a signal would lose the last ones.
	if err := p.askToClose(); err != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
	return nil
}

// askToClose sends Browser.close over the browser's DevTools WebSocket: one
// client frame, no answer awaited.
func (p *Profile) askToClose() error {
	resp, err := http.Get(p.URL + "/json/version")
	if err != nil {
		return err
	}
	var v struct {
		WS string `json:"webSocketDebuggerUrl"`
	}
	err = json.NewDecoder(resp.Body).Decode(&v)
	resp.Body.Close()
	if err != nil {
		return err
	}
	u, err := url.Parse(v.WS)
	if err != nil || u.Scheme != "ws" {
		return fmt.Errorf("no DevTools WebSocket in %q", v.WS)
	}
	c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n",
		u.RequestURI(), u.Host, base64.StdEncoding.EncodeToString(key))
	r, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return err
	}
	if r.StatusCode != http.StatusSwitchingProtocols {
		return fmt.Errorf("DevTools WebSocket: %s", r.Status)
	}
	msg := []byte(`{"id":1,"method":"Browser.close"}`)
	// A client's text frame: FIN, opcode 1, masked, length under 126.
	frame := []byte{0x81, 0x80 | byte(len(msg)), 0, 0, 0, 0}
	_, _ = rand.Read(frame[2:6])
	for i, b := range msg {
		frame = append(frame, b^frame[2+i%4])
	}
	_, err = c.Write(frame)
	return err
}

// ErrProfileWithEndpoints is returned when --user-data-dir is combined
// with browsers elsewhere.
var ErrProfileWithEndpoints = errors.New("--user-data-dir runs a local Chromium; it cannot be combined with --cdp-endpoint or --browser-endpoint")
