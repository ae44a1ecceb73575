package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/llmerr"
)

// Browser and driver faults: the real processes are killed by PID and the
// agent's side of the recovery is only the plan's text.

// faultRig is a server on a browser.Manager of its own, whose Chromium
// carries a unique flag, so that only its processes are killed.
type faultRig struct {
	t      *testing.T
	own    *browser.Manager
	c      *client
	marker string
	// n numbers the /hold/ keys of the rig's calls in flight.
	n int
	// firstStep is the text of the last followed plan's first step.
	firstStep string
}

func newFaultRig(t *testing.T) *faultRig {
	t.Helper()
	marker := fmt.Sprintf("retrace-test-fault-%d", time.Now().UnixNano())
	own := browser.NewManager(browser.Options{Headless: true, Args: []string{"--" + marker},
		ActionTimeout: 3 * time.Second, NavigationTimeout: 20 * time.Second})
	t.Cleanup(func() { own.Close() })
	return &faultRig{t: t, own: own, c: connectServer(t, New(Config{}, own)), marker: marker}
}

// driverPID returns the PID of the rig's Playwright driver: the parent of
// its Chromium, checked to be the driver (node running cli.js run-driver)
// and a child of this test process.
func (f *faultRig) driverPID() (int, error) {
	b, err := browserPID("--" + f.marker)
	if err != nil {
		return 0, err
	}
	pid, err := parentPID(b)
	if err != nil {
		return 0, err
	}
	args, err := cmdline(pid)
	if err != nil {
		return 0, err
	}
	if !slices.ContainsFunc(args, func(a string) bool { return strings.HasSuffix(a, "cli.js") }) || !slices.Contains(args, "run-driver") {
		return 0, fmt.Errorf("the parent %d of Chromium is not a Playwright driver: %q", pid, args)
	}
	if pp, err := parentPID(pid); err != nil || pp != os.Getpid() {
		return 0, fmt.Errorf("the driver %d is not a child of the test process %d (parent %d, %v)", pid, os.Getpid(), pp, err)
	}
	return pid, nil
}

// kill kills the rig's browser or driver process with SIGKILL and returns
// its PID.
func (f *faultRig) kill(what browser.Process) (int, error) {
	pid, err := browserPID("--" + f.marker)
	if what == browser.ProcessDriver {
		pid, err = f.driverPID()
	}
	if err != nil {
		return 0, err
	}
	return pid, syscall.Kill(pid, syscall.SIGKILL)
}

// waitNoticed waits until the manager sees the default role's context as
// lost: the kill is complete, so the next call is the first after it.
func (f *faultRig) waitNoticed() error {
	r := f.c.srv.sessionForTest().role(defaultRole)
	r.mu.Lock()
	bctx := r.bctx
	r.mu.Unlock()
	if bctx == nil {
		return errors.New("the role has no context")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, lost := f.c.srv.browsers.Lost(bctx); lost {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("the context was not lost within 10s of the kill")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func parentPID(pid int) (int, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "PPid:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, fmt.Errorf("no PPid in /proc/%d/status", pid)
}

func cmdline(pid int) ([]string, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimRight(string(data), "\x00"), "\x00"), nil
}

// try calls a tool without failing the test: a protocol error is returned
// as an error (the server stopped answering).
func (f *faultRig) try(name string, args map[string]any) (reply, error) {
	res, err := f.c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return reply{}, fmt.Errorf("%s: protocol error: %w", name, err)
	}
	r := f.c.toReply(res)
	if r.IsError {
		f.c.checkPlan(name, r)
	}
	return r, nil
}

// follow performs the plan's steps, reading only its text, and fails at
// the first step that does not succeed.
func (f *faultRig) follow(r reply) error {
	_, plan, ok := strings.Cut(r.Text, "Action Required:\n")
	if !ok {
		return fmt.Errorf("no plan in:\n%s", r.Text)
	}
	steps := 0
	for _, line := range strings.Split(plan, "\n") {
		m := stepLine.FindStringSubmatch(line)
		if m == nil {
			break
		}
		steps++
		res, err := f.try(m[1], parseCallArgs(f.t, m[2]))
		if err != nil {
			return err
		}
		if res.IsError {
			return fmt.Errorf("step %d, %s(%s), failed (%s):\n%s", steps, m[1], m[2], res.code(), res.Text)
		}
		if steps == 1 {
			f.firstStep = res.Text
		}
	}
	if steps == 0 {
		return fmt.Errorf("a plan without steps:\n%s", r.Text)
	}
	return nil
}

// faultRound is one fault: the role is on a page with refs, the process
// dies (between calls, or under a call in flight), the call gets
// BROWSER_CLOSED, the plan is followed, and the role works again with new
// refs while the old ones stay stale.
type faultRound struct {
	what     browser.Process
	inFlight bool
	// next is the first call after a kill between calls.
	next string
}

// faultResult is what a round measured.
type faultResult struct {
	// noticed is, for a kill between calls, from the kill to the manager
	// seeing the role's context lost.
	noticed time.Duration
	// failed is how long the call that met the fault took to return its
	// error: for a call in flight, from the kill.
	failed time.Duration
	// plan is how long the plan's steps took (a new browser, and a new
	// driver if it died, start within them).
	plan time.Duration
	// recovered is from the kill to the end of the plan's last step.
	recovered time.Duration
	text      string
}

func (f *faultRig) round(fr faultRound) (faultResult, error) {
	var res faultResult
	if _, err := f.mustOK("browser_navigate", map[string]any{"url": fx.Page("form.html")}); err != nil {
		return res, err
	}
	snap, err := f.mustOK("browser_snapshot", nil)
	if err != nil {
		return res, err
	}
	old := refIn(snap, `button "Sign in"`)
	if old == "" {
		return res, fmt.Errorf("no Sign in button before the kill:\n%s", snap)
	}
	var r reply
	var killed time.Time
	if fr.inFlight {
		// A script waits for an answer the fixture holds back: the call is
		// in flight, at a moment the test knows, when the process dies.
		f.n++
		key := fmt.Sprintf("%s-%d", f.marker, f.n)
		held := fx.Held(key)
		done := make(chan reply, 1)
		go func() {
			r, err := f.try("browser_evaluate", map[string]any{"function": fmt.Sprintf("() => fetch('/hold/%s').then(r => r.text())", key)})
			if err != nil {
				r = reply{Text: err.Error()}
			}
			done <- r
		}()
		select {
		case <-held:
		case r = <-done:
			return res, fmt.Errorf("the script ended before the kill:\n%s", r.Text)
		case <-time.After(10 * time.Second):
			return res, errors.New("the script's request never reached the fixture")
		}
		killed = time.Now()
		if _, err := f.kill(fr.what); err != nil {
			return res, err
		}
		select {
		case r = <-done:
		case <-time.After(30 * time.Second):
			return res, errors.New("the call in flight did not return within 30s of the kill")
		}
		res.failed = time.Since(killed)
	} else {
		killed = time.Now()
		if _, err := f.kill(fr.what); err != nil {
			return res, err
		}
		if err := f.waitNoticed(); err != nil {
			return res, err
		}
		res.noticed = time.Since(killed)
		args := map[string]any(nil)
		switch fr.next {
		case "browser_click":
			args = map[string]any{"ref": old}
		case "browser_wait_for":
			args = map[string]any{"text": "Sign in"}
		case "browser_evaluate":
			args = map[string]any{"function": "() => document.title"}
		case "browser_navigate":
			args = map[string]any{"url": fx.Page("form.html")}
		case "browser_tabs":
			args = map[string]any{"action": "list"}
		}
		start := time.Now()
		if r, err = f.try(fr.next, args); err != nil {
			return res, err
		}
		res.failed = time.Since(start)
	}
	res.text = r.Text
	if !r.IsError || r.code() != string(llmerr.BrowserClosed) {
		return res, fmt.Errorf("after the kill: code %q (error %v), want %s:\n%s", r.code(), r.IsError, llmerr.BrowserClosed, r.Text)
	}
	start := time.Now()
	if err := f.follow(r); err != nil {
		return res, fmt.Errorf("following the plan: %w", err)
	}
	res.plan = time.Since(start)
	res.recovered = time.Since(killed)
	if fr.inFlight && !strings.Contains(f.firstStep, "started again") {
		// The call that met the death said so; the next one runs in a new
		// browser and must say that too, or an agent would trust old refs.
		return res, fmt.Errorf("the plan's first step does not say the browser was started again:\n%s", f.firstStep)
	}
	snap, err = f.mustOK("browser_snapshot", nil)
	if err != nil {
		return res, err
	}
	fresh := refIn(snap, `button "Sign in"`)
	if fresh == "" || fresh == old {
		return res, fmt.Errorf("the Sign in button has ref %q after recovery, was %s:\n%s", fresh, old, snap)
	}
	if st, err := f.try("browser_click", map[string]any{"ref": old}); err != nil || !st.IsError || st.code() != string(llmerr.StaleRef) {
		return res, fmt.Errorf("the old ref %s after recovery: code %q, want %s (%v):\n%s", old, st.code(), llmerr.StaleRef, err, st.Text)
	}
	if _, err := f.mustOK("browser_click", map[string]any{"ref": fresh}); err != nil {
		return res, err
	}
	return res, nil
}

func (f *faultRig) mustOK(name string, args map[string]any) (string, error) {
	r, err := f.try(name, args)
	if err != nil {
		return "", err
	}
	if r.IsError {
		return "", fmt.Errorf("%s(%v) failed (%s):\n%s", name, args, r.code(), r.Text)
	}
	return r.Text, nil
}

// refIn is refOf without failing: "" when no line has the element.
func refIn(snap, element string) string {
	for _, line := range strings.Split(snap, "\n") {
		if i := strings.Index(line, element); i >= 0 {
			rest := line[i:]
			if j := strings.Index(rest, "[ref="); j >= 0 {
				if k := strings.IndexByte(rest[j:], ']'); k >= 0 {
					return rest[j+5 : j+k]
				}
			}
		}
	}
	return ""
}

func TestDriverKilled(t *testing.T) {
	t.Parallel()
	f := newFaultRig(t)
	// Another session on the same browser, whose context goes too.
	other := connectServer(t, New(Config{}, f.own))
	other.ok("browser_navigate", map[string]any{"url": fx.Page("interact.html")})
	f.c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	snap := f.c.ok("browser_snapshot", nil)
	old := refOf(t, snap, `button "Sign in"`)
	pid, err := f.kill(browser.ProcessDriver)
	if err != nil {
		t.Fatalf("killing the driver: %v", err)
	}
	if err := f.waitNoticed(); err != nil {
		t.Fatal(err)
	}
	r := f.c.fail("browser_click", map[string]any{"ref": old}, llmerr.BrowserClosed)
	f.c.golden("BROWSER_CLOSED-driver", r)
	mustContain(t, r.Text, "driver", `1. browser_navigate(url="`+fx.Page("form.html")+`")`)
	f.c.follow(r)
	snap = f.c.ok("browser_snapshot", nil)
	fresh := refOf(t, snap, `button "Sign in"`)
	if fresh == old {
		t.Errorf("the new page reuses ref %s", old)
	}
	f.c.fail("browser_click", map[string]any{"ref": old}, llmerr.StaleRef)
	f.c.ok("browser_click", map[string]any{"ref": fresh})
	if now, err := f.driverPID(); err != nil || now == pid {
		t.Errorf("driver after recovery: pid %d (killed %d), %v", now, pid, err)
	}
	// The other session meets the loss at its next call, on the new driver.
	r = other.fail("browser_snapshot", nil, llmerr.BrowserClosed)
	mustContain(t, r.Text, `browser_navigate(url="`+fx.Page("interact.html")+`")`)
	other.follow(r)
	mustContain(t, other.ok("browser_snapshot", nil), `button "Buy" [ref=`)

	// browser_close and browser_wait_for, which failed for good before,
	// work after a driver's death too.
	if _, err := f.kill(browser.ProcessDriver); err != nil {
		t.Fatal(err)
	}
	if err := f.waitNoticed(); err != nil {
		t.Fatal(err)
	}
	mustContain(t, f.c.ok("browser_close", nil), "Closed the browser")
	mustContain(t, f.c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")}), "Title: <page-content>Sign in</page-content>")
	if _, err := f.kill(browser.ProcessDriver); err != nil {
		t.Fatal(err)
	}
	if err := f.waitNoticed(); err != nil {
		t.Fatal(err)
	}
	r = f.c.fail("browser_wait_for", map[string]any{"text": "Sign in"}, llmerr.BrowserClosed)
	f.c.follow(r)
	mustContain(t, f.c.ok("browser_wait_for", map[string]any{"text": "Sign in"}), `The text "Sign in" appeared`)
}

// TestFaultRounds kills the browser and the driver, between calls and under
// a call in flight, and follows each plan.
func TestFaultRounds(t *testing.T) {
	t.Parallel()
	f := newFaultRig(t)
	for _, fr := range []faultRound{
		{what: browser.ProcessBrowser, next: "browser_snapshot"},
		{what: browser.ProcessBrowser, inFlight: true},
		{what: browser.ProcessDriver, next: "browser_evaluate"},
		{what: browser.ProcessDriver, inFlight: true},
	} {
		res, err := f.round(fr)
		if err != nil {
			t.Fatalf("%s killed (in flight %v): %v", fr.what, fr.inFlight, err)
		}
		if fr.inFlight && res.failed > 5*time.Second {
			t.Errorf("%s killed under a call: it returned after %s", fr.what, res.failed)
		}
		t.Logf("%s killed (in flight %v): error after %s, recovered after %s", fr.what, fr.inFlight, res.failed.Round(time.Millisecond), res.recovered.Round(time.Millisecond))
	}
}

// TestFaultSoak kills Chromium 50 times and the driver 20 times in a row,
// between calls and under calls in flight, following each plan, on one
// server. It takes a minute or more, so it runs only with
// RETRACE_FAULT_SOAK=1:
//
//	RETRACE_FAULT_SOAK=1 go test -count=1 -run TestFaultSoak -v -timeout 30m ./server
func TestFaultSoak(t *testing.T) {
	if os.Getenv("RETRACE_FAULT_SOAK") != "1" {
		t.Skip("set RETRACE_FAULT_SOAK=1 to kill the browser 50 times and the driver 20 times")
	}
	f := newFaultRig(t)
	nexts := []string{"browser_snapshot", "browser_click", "browser_wait_for", "browser_evaluate", "browser_navigate", "browser_tabs"}
	type tally struct {
		kills, closed, ok       int
		failures                []string
		failed, plan, recovered []time.Duration
		noticed                 []time.Duration
	}
	tallies := map[string]*tally{}
	start := time.Now()
	for i := range 70 {
		fr := faultRound{what: browser.ProcessBrowser, inFlight: i%2 == 1, next: nexts[(i/2)%len(nexts)]}
		if i%7 == 2 || i%7 == 5 {
			fr.what = browser.ProcessDriver
		}
		key := string(fr.what) + " between calls"
		if fr.inFlight {
			key = string(fr.what) + " under a call"
		}
		tl := tallies[key]
		if tl == nil {
			tl = &tally{}
			tallies[key] = tl
		}
		tl.kills++
		res, err := f.round(fr)
		if strings.Contains(res.text, "BROWSER_CLOSED") {
			tl.closed++
		}
		if err != nil {
			tl.failures = append(tl.failures, fmt.Sprintf("round %d (%s, next %s): %v", i, key, fr.next, err))
			continue
		}
		tl.ok++
		tl.failed = append(tl.failed, res.failed)
		tl.plan = append(tl.plan, res.plan)
		tl.recovered = append(tl.recovered, res.recovered)
		if !fr.inFlight {
			tl.noticed = append(tl.noticed, res.noticed)
		}
	}
	// The server is still the same process, and its session answers.
	if _, err := f.c.cs.ListTools(context.Background(), nil); err != nil {
		t.Errorf("the session stopped answering: %v", err)
	}
	t.Logf("%d kills in %s; server exits: 0", 70, time.Since(start).Round(time.Second))
	keys := slices.Sorted(maps.Keys(tallies))
	for _, k := range keys {
		tl := tallies[k]
		t.Logf("%-22s kills %2d  BROWSER_CLOSED %2d  recovered %2d  failures %d", k, tl.kills, tl.closed, tl.ok, len(tl.failures))
		t.Logf("%-22s error returned   %s", "", spread(tl.failed))
		if len(tl.noticed) > 0 {
			t.Logf("%-22s kill seen        %s", "", spread(tl.noticed))
		}
		t.Logf("%-22s plan's steps     %s", "", spread(tl.plan))
		t.Logf("%-22s kill to working  %s", "", spread(tl.recovered))
		for _, fl := range tl.failures {
			t.Errorf("%s", fl)
		}
	}
	// Nothing is left behind: one Chromium of this server, no zombie.
	if procs := chromiumMains("--" + f.marker); len(procs) != 1 {
		t.Errorf("Chromium main processes of this server after the soak: %v, want one", procs)
	}
	if z := zombies(); len(z) > 0 {
		t.Errorf("zombie children of the test process: %v", z)
	}
}

// spread renders durations as median, 90th percentile and maximum.
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))].Round(time.Millisecond) }
	return fmt.Sprintf("median %s  p90 %s  max %s  (n=%d)", at(0.5), at(0.9), s[len(s)-1].Round(time.Millisecond), len(s))
}

// chromiumMains lists the Chromium main processes whose command line
// carries flag.
func chromiumMains(flag string) []int {
	var pids []int
	for _, pid := range allPIDs() {
		args, err := cmdline(pid)
		if err == nil && slices.Contains(args, flag) && !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--type=") }) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// zombies lists the children of the test process that exited and were
// never waited for.
func zombies() []int {
	var pids []int
	for _, pid := range allPIDs() {
		if pp, err := parentPID(pid); err != nil || pp != os.Getpid() {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			continue
		}
		// The state follows the command name, which is in parentheses.
		if i := strings.LastIndexByte(string(data), ')'); i >= 0 && strings.HasPrefix(string(data[i+1:]), " Z") {
			pids = append(pids, pid)
		}
	}
	return pids
}

func allPIDs() []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}
