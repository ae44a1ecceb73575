package browser

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLostAtOnce kills Chromium, then the driver, under a call in flight,
// and checks that Lost says so as soon as the call has failed, with no
// wait: the server decides from it whether that call already reported the
// loss. It also keeps true what Lost relies on in playwright-go.
func TestLostAtOnce(t *testing.T) {
	if _, err := Locate("", ""); err != nil {
		t.Skipf("no driver or Chromium: %v", err)
	}
	marker := fmt.Sprintf("--retrace-test-lost-%d", time.Now().UnixNano())
	m := NewManager(Options{Headless: true, Args: []string{marker}, DriverLog: testWriter{t}})
	defer m.Close()
	for _, what := range []Process{ProcessBrowser, ProcessDriver, ProcessBrowser} {
		c, err := m.NewContext(ContextOptions{})
		if err != nil {
			t.Fatalf("NewContext after the %s died: %v", what, err)
		}
		page, err := c.NewPage()
		if err != nil {
			t.Fatal(err)
		}
		if _, lost := m.Lost(c); lost {
			t.Fatal("a fresh context is lost")
		}
		done := make(chan error, 1)
		go func() {
			_, err := page.Evaluate("() => new Promise(() => {})")
			done <- err
		}()
		pid, err := processOf(marker, what)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		select {
		case err = <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("the call in flight did not return within 20s of killing the %s", what)
		}
		if err == nil {
			t.Fatalf("the call in flight succeeded after the %s was killed", what)
		}
		got, lost := m.Lost(c)
		if !lost || got != what {
			t.Fatalf("right after the call failed (%v): Lost = %q, %v; want %q, true", err, got, lost, what)
		}
		m.ReleaseContext(c) // forgets it: nothing to close
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// processOf returns the PID of the Chromium main process whose command
// line carries marker or, for the driver, its parent, checked to be a
// Playwright driver started by this test process.
func processOf(marker string, what Process) (int, error) {
	var mains []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		args := cmdline(pid)
		if slices.Contains(args, marker) && !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--type=") }) {
			mains = append(mains, pid)
		}
	}
	if len(mains) != 1 {
		return 0, fmt.Errorf("want one Chromium with %s, found %v", marker, mains)
	}
	if what == ProcessBrowser {
		return mains[0], nil
	}
	drv := parentOf(mains[0])
	if !slices.Contains(cmdline(drv), "run-driver") || parentOf(drv) != os.Getpid() {
		return 0, fmt.Errorf("the parent %d of Chromium is not this test's driver: %q", drv, cmdline(drv))
	}
	return drv, nil
}

func cmdline(pid int) []string {
	data, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
}

func parentOf(pid int) int {
	data, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "PPid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// TestIdleLinger checks that with CloseWhenIdle and IdleLinger, a context
// opened soon after the last one closed reuses the running Chromium (the
// start is skipped), and that Chromium goes once nothing has used it for
// IdleLinger.
func TestIdleLinger(t *testing.T) {
	if _, err := Locate("", ""); err != nil {
		t.Skipf("no driver or Chromium: %v", err)
	}
	t.Parallel()
	marker := fmt.Sprintf("--retrace-test-linger-%d", time.Now().UnixNano())
	const linger = 1500 * time.Millisecond
	m := NewManager(Options{Headless: true, Args: []string{marker}, DriverLog: testWriter{t},
		ActionTimeout: 5 * time.Second, CloseWhenIdle: true, IdleLinger: linger})
	defer m.Close()
	open := func() int {
		t.Helper()
		c, err := m.NewContext(ContextOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.NewPage(); err != nil {
			t.Fatal(err)
		}
		pid, err := processOf(marker, ProcessBrowser)
		if err != nil {
			t.Fatal(err)
		}
		m.ReleaseContext(c)
		return pid
	}
	first := open()
	if again := open(); again != first {
		t.Errorf("a context opened within the linger started another Chromium (pid %d, was %d)", again, first)
	}
	deadline := time.Now().Add(linger + 10*time.Second)
	for {
		if _, err := processOf(marker, ProcessBrowser); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Chromium still runs %v after its last context closed (linger %v)", linger+10*time.Second, linger)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if next := open(); next == first {
		t.Errorf("after the linger, the next context ran in the Chromium that should have closed (pid %d)", next)
	}
}
