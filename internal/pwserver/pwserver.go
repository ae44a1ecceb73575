// Package pwserver starts a real Playwright browser server (`playwright
// run-server`, from the playwright-core package that is retrace's driver)
// on 127.0.0.1, for tests and benchmarks that need browser endpoints.
//
// A browser server launches the browser its client asks for from its own
// browser registry, and it ignores a client's executablePath. On a machine
// with the distribution's Chromium instead of Playwright's download, Start
// gives the server a registry of its own (PLAYWRIGHT_BROWSERS_PATH) whose
// Chromium entries link to that executable.
package pwserver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/retrace-dev/retrace/browser"
)

// Options say what to run.
type Options struct {
	// DriverDir holds package/cli.js; Node runs it.
	DriverDir string
	Node      string
	// Chromium is the executable the server's registry points to.
	Chromium string
	// Port to listen on; 0 picks a free one.
	Port int
	// Log receives the server's output; nil discards it.
	Log io.Writer
}

// Server is one running browser server.
type Server struct {
	// URL is the ws:// endpoint it printed.
	URL string
	// Port is the port it listens on.
	Port int

	cmd      *exec.Cmd
	registry string
	done     chan struct{}
	stop     sync.Once
}

// PID is the server's process ID (the browsers it launches are its
// descendants).
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Done is closed when the server process has exited.
func (s *Server) Done() <-chan struct{} { return s.done }

var listening = regexp.MustCompile(`Listening on (ws://\S+)`)

// Start runs `node cli.js run-server --port P --host 127.0.0.1` and waits
// until it listens.
func Start(o Options) (*Server, error) {
	registry, err := os.MkdirTemp("", "retrace-pw-registry-")
	if err != nil {
		return nil, err
	}
	if err := linkRegistry(registry, o.DriverDir, o.Chromium); err != nil {
		os.RemoveAll(registry)
		return nil, err
	}
	cmd := exec.Command(o.Node, filepath.Join(o.DriverDir, "package", "cli.js"),
		"run-server", "--port", strconv.Itoa(o.Port), "--host", "127.0.0.1")
	cmd.Env = append(os.Environ(), "PLAYWRIGHT_BROWSERS_PATH="+registry,
		"PLAYWRIGHT_SKIP_VALIDATE_HOST_REQUIREMENTS=1")
	// Its own process group: Stop and Kill reach the browsers it launched.
	// It dies with the process that started it, even one killed (a test
	// binary past its deadline runs no cleanup).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(registry)
		return nil, err
	}
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		os.RemoveAll(registry)
		return nil, err
	}
	s := &Server{cmd: cmd, registry: registry, done: make(chan struct{})}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(log, line)
			if m := listening.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(log, out)
	}()
	go func() {
		_ = cmd.Wait()
		close(s.done)
	}()
	select {
	case u := <-found:
		s.URL = u
		if i := strings.LastIndex(u, ":"); i > 0 {
			s.Port, _ = strconv.Atoi(strings.Trim(u[i+1:], "/"))
		}
		return s, nil
	case <-s.done:
		os.RemoveAll(registry)
		return nil, errors.New("playwright run-server exited before it listened")
	case <-time.After(30 * time.Second):
		s.Kill()
		return nil, errors.New("playwright run-server did not listen within 30 s")
	}
}

// Kill ends the server and the browsers it launched at once (SIGKILL to
// its process group), as a crash or a lost machine would.
func (s *Server) Kill() { s.signal(syscall.SIGKILL) }

// Stop ends the server and its browsers.
func (s *Server) Stop() { s.signal(syscall.SIGTERM) }

func (s *Server) signal(sig syscall.Signal) {
	s.stop.Do(func() {
		_ = syscall.Kill(-s.cmd.Process.Pid, sig)
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-s.done
		}
		os.RemoveAll(s.registry)
	})
}

// linkRegistry makes dir a browser registry whose Chromium builds (the
// full one and the headless shell, at the revisions the driver expects)
// are links to chromium.
func linkRegistry(dir, driverDir, chromium string) error {
	revs, err := browser.Revisions(driverDir)
	if err != nil {
		return err
	}
	exe := map[string]string{
		"chromium":                "chrome",
		"chromium-headless-shell": "headless_shell",
	}
	for b, name := range exe {
		rev, ok := revs[b]
		if !ok {
			continue
		}
		d := filepath.Join(dir, strings.ReplaceAll(b, "-", "_")+"-"+rev, "chrome-linux")
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if err := os.Symlink(chromium, filepath.Join(d, name)); err != nil {
			return err
		}
		for _, marker := range []string{"INSTALLATION_COMPLETE", "DEPENDENCIES_VALIDATED"} {
			if err := os.WriteFile(filepath.Join(filepath.Dir(d), marker), nil, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
