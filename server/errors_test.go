package server

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/llmerr"
)

// Real situations for the error codes, each through MCP against Chromium.

func TestFrameDetached(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("detach.html")})
	snap := c.ok("browser_snapshot", nil)
	pay := refOf(t, snap, `button "Pay button"`)
	c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Remove frame"`)})
	r := c.fail("browser_click", map[string]any{"ref": pay}, llmerr.FrameDetached)
	c.golden("FRAME_DETACHED", r)
	mustContain(t, r.Text, "inside a frame that has been removed", "Frame: "+fx.OtherURL+"/frame-inner.html?label=Pay", "browser_snapshot()")
}

// An overlay with a control that closes it does not go by itself: the
// click says so at once, not after its whole timeout.
func TestCoveredElementNamesTheWayOut(t *testing.T) {
	c := connect(t, Config{ActionTimeout: 10 * time.Second})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("interact.html")})
	snap := c.ok("browser_snapshot", nil)
	buy := refOf(t, snap, `button "Buy"`)
	c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Show banner"`)})
	start := time.Now()
	r := c.fail("browser_click", map[string]any{"ref": buy}, llmerr.ElementNotInteractable)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the click took %v: a closable overlay should fail it well before its 10s timeout", took)
	}
	c.golden("ELEMENT_NOT_INTERACTABLE-covered", r)
	mustContain(t, r.Text, `another element covers it: <div id="banner"> (dialog "Cookies")`,
		`1. browser_click(ref="`, `close the covering element with its button "Accept all"`,
		`2. browser_click(ref="`+buy+`") — then retry the original action`)
	// Following the plan's text literally gets the original click through.
	c.follow(r)
	mustContain(t, c.ok("browser_snapshot", nil), "bought")
}

func TestDisabledHiddenAndNotEditable(t *testing.T) {
	c := connect(t, Config{ActionTimeout: 1000 * time.Millisecond})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("interact.html")})
	snap := c.ok("browser_snapshot", nil)
	mustContain(t, snap, `button "Checkout" [disabled]`)
	r := c.fail("browser_click", map[string]any{"ref": refOf(t, snap, `button "Checkout"`)}, llmerr.ElementNotInteractable)
	c.golden("ELEMENT_NOT_INTERACTABLE-disabled", r)
	mustContain(t, r.Text, "Cause: the element is disabled")

	coupon := refOf(t, snap, `textbox "Coupon"`)
	c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Hide coupon"`)})
	r = c.fail("browser_type", map[string]any{"ref": coupon, "text": "SAVE10"}, llmerr.ElementNotInteractable)
	mustContain(t, r.Text, "Cause: the element is hidden")

	r = c.fail("browser_type", map[string]any{"ref": refOf(t, snap, `button "Buy"`), "text": "x"}, llmerr.ElementNotInteractable)
	mustContain(t, r.Text, "does not accept text")
}

func TestPageCrashed(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	snap := c.ok("browser_snapshot", nil)
	// Crash the renderer for real; chrome://crash is not a URL agents may
	// load, so the test reaches the page directly.
	r := c.srv.sessionForTest().role(defaultRole)
	go r.tab.Page.Goto("chrome://crash")
	deadline := time.Now().Add(10 * time.Second)
	for !r.tab.Crashed() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !r.tab.Crashed() {
		t.Fatal("the page did not crash")
	}
	e := c.fail("browser_click", map[string]any{"ref": refOf(t, snap, `button "Sign in"`)}, llmerr.PageCrashed)
	c.golden("PAGE_CRASHED", e)
	mustContain(t, e.Text, "The page crashed", `browser_navigate(url="`+fx.Page("form.html")+`")`)
	// Following the plan recovers.
	c.follow(e)
	mustContain(t, c.ok("browser_snapshot", nil), `button "Sign in" [ref=`)
}

func TestBrowserKilled(t *testing.T) {
	t.Parallel()
	// A browser of its own, marked so that only it is killed.
	marker := fmt.Sprintf("retrace-test-kill-%d", time.Now().UnixNano())
	own := browser.NewManager(browser.Options{Headless: true, Args: []string{"--" + marker},
		ActionTimeout: 3 * time.Second, NavigationTimeout: 20 * time.Second})
	defer own.Close()
	srv := New(Config{}, own)
	c := connectServer(t, srv)
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	// The browser dies once the navigation's request has reached the
	// server, while the page waits for an answer that never comes.
	arrived := fx.Arrived("/hang")
	killed := make(chan error, 1)
	go func() {
		select {
		case <-arrived:
		case <-time.After(15 * time.Second): // before the 20 s navigation timeout
			killed <- fmt.Errorf("the navigation to /hang never reached the server")
			return
		}
		pid, err := browserPID("--" + marker)
		if err == nil {
			err = syscall.Kill(pid, syscall.SIGKILL)
		}
		killed <- err
	}()
	r := c.call("browser_navigate", map[string]any{"url": fx.Page("hang")})
	if err := <-killed; err != nil {
		t.Fatalf("killing the browser: %v", err)
	}
	if !r.IsError || r.code() != string(llmerr.BrowserClosed) {
		t.Fatalf("browser_navigate code = %q (error %v), want %s:\n%s", r.code(), r.IsError, llmerr.BrowserClosed, r.Text)
	}
	c.golden("BROWSER_CLOSED", r)
	mustContain(t, r.Text, "closed, crashed or was killed", `browser_navigate(url="`+fx.Page("hang")+`")`)
	// The next call starts a fresh browser. (The plan's own step would load
	// the hanging page again, so the test goes elsewhere.)
	mustContain(t, c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")}), "Title: <page-content>Sign in</page-content>")
	mustContain(t, c.ok("browser_snapshot", nil), `button "Sign in" [ref=`)
}

// browserPID returns the PID of the one Chromium browser process whose
// command line carries flag: the main process, the one without a --type=
// switch (renderers, the zygote, GPU and utility processes have one).
func browserPID(flag string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue // it ended meanwhile, or is not ours to read
		}
		args := strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
		child := slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--type=") })
		if slices.Contains(args, flag) && !child {
			pids = append(pids, pid)
		}
	}
	if len(pids) != 1 {
		return 0, fmt.Errorf("want one browser process with %s, found %v", flag, pids)
	}
	return pids[0], nil
}

func TestOriginPolicy(t *testing.T) {
	t.Parallel()
	other, _ := url.Parse(fx.OtherURL)
	c := connect(t, Config{Origins: OriginPolicy{Blocked: []string{other.Hostname()}}})
	r := c.fail("browser_navigate", map[string]any{"url": fx.OtherURL + "/form.html"}, llmerr.OriginBlocked)
	c.golden("ORIGIN_BLOCKED", r)
	mustContain(t, r.Text, "outside what this server may load", "--blocked-origins lists localhost", "will fail the same way")
	// A page on an allowed origin loads, but its frame from the blocked one does not.
	c.ok("browser_navigate", map[string]any{"url": fx.Page("frames.html")})
	snap := c.ok("browser_snapshot", nil)
	mustContain(t, snap, `button "Same button"`)
	if strings.Contains(snap, "Cross button") {
		t.Errorf("the blocked origin's frame loaded:\n%s", snap)
	}

	c = connect(t, Config{Origins: OriginPolicy{Allowed: []string{fx.URL}}})
	r = c.fail("browser_navigate", map[string]any{"url": fx.OtherURL + "/form.html"}, llmerr.OriginBlocked)
	mustContain(t, r.Text, "--allowed-origins does not list it", `browser_navigate(url="`+fx.URL+`/")`)
	c.follow(r)
}

func TestParseOrigins(t *testing.T) {
	t.Parallel()
	got := ParseOrigins(" https://a.test/ ; b.test,c.test:8080;")
	want := []string{"https://a.test", "b.test", "c.test:8080"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("ParseOrigins = %q, want %q", got, want)
	}
	p := OriginPolicy{Allowed: got}
	for raw, ok := range map[string]bool{
		"https://a.test/x": true, "http://a.test/": false, "http://b.test:9/": true,
		"https://c.test:8080/": true, "https://c.test/": false, "about:blank": true, "https://evil.test/": false,
	} {
		if (p.check(raw) == "") != ok {
			t.Errorf("check(%q) = %q, want allowed=%v", raw, p.check(raw), ok)
		}
	}
}

func TestOptionNotFound(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("interact.html")})
	snap := c.ok("browser_snapshot", nil)
	country := refOf(t, snap, `combobox "Country"`)
	r := c.fail("browser_select_option", map[string]any{"ref": country, "values": []string{"france"}}, llmerr.OptionNotFound)
	c.golden("OPTION_NOT_FOUND", r)
	mustContain(t, r.Text, `has no option "france"`, `its options are "Belgium", "France", "Spain"`,
		`1. browser_select_option(ref="`+country+`", values=["France"])`)
	mustContain(t, c.follow(r), `Selected "France" in combobox "Country"`)
	mustContain(t, c.ok("browser_snapshot", nil), `combobox "Country" [ref=`+country+`]: "France"`)
	// By value works too, and a button is not a select.
	c.ok("browser_select_option", map[string]any{"ref": country, "values": []string{"es"}})
	c.fail("browser_select_option", map[string]any{"ref": refOf(t, snap, `button "Buy"`), "values": []string{"x"}}, llmerr.ElementNotInteractable)
	c.fail("browser_select_option", map[string]any{"ref": country, "values": []string{}}, llmerr.InvalidParams)
}

func TestEvaluate(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	mustContain(t, c.ok("browser_evaluate", map[string]any{"function": "() => document.title"}), `Result: <page-content>"Sign in"</page-content>`)
	snap := c.ok("browser_snapshot", nil)
	email := refOf(t, snap, `textbox "Email"`)
	mustContain(t, c.ok("browser_evaluate", map[string]any{"function": "(el) => el.id", "ref": email}), `Result: <page-content>"email"</page-content>`)

	r := c.fail("browser_evaluate", map[string]any{"function": "() => document.querySelector('#nope').value"}, llmerr.EvaluationFailed)
	c.golden("EVALUATION_FAILED", r)
	mustContain(t, r.Text, "The script threw: <page-content>TypeError", "Cannot read properties of null", "will throw the same way")
	r = c.fail("browser_evaluate", map[string]any{"function": "() => {"}, llmerr.EvaluationFailed)
	mustContain(t, r.Text, "SyntaxError")
	// The session is still fine.
	mustContain(t, c.ok("browser_evaluate", map[string]any{"function": "() => 1 + 1"}), "Result: <page-content>2</page-content>")

	off := connect(t, Config{NoEvaluate: true})
	res, err := off.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name == "browser_evaluate" {
			t.Error("--no-evaluate still lists browser_evaluate")
		}
	}
}

func TestSetupRequired(t *testing.T) {
	t.Parallel()
	// A machine without the driver: the server answers, the call explains.
	none := browser.NewManager(browser.Options{DriverDir: "/nonexistent/retrace-driver", Headless: true})
	defer none.Close()
	c := connectServer(t, New(Config{}, none))
	for i := 0; i < 2; i++ {
		r := c.fail("browser_navigate", map[string]any{"url": fx.Page("form.html")}, llmerr.SetupRequired)
		mustContain(t, r.Text, "retrace install")
		if i == 0 {
			c.golden("SETUP_REQUIRED", r)
		}
	}
}

// A renderer killed while a navigation is in flight: the error's plan is
// to load the page again, and doing so works.
func TestRendererKilledDuringNavigation(t *testing.T) {
	t.Parallel()
	f := newFaultRig(t) // its own browser: only its renderers are killed
	c := f.c
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	key := fmt.Sprintf("crash-%d", time.Now().UnixNano())
	held := fx.Held(key)
	done := make(chan reply, 1)
	go func() { done <- c.callAsync("browser_navigate", map[string]any{"url": fx.URL + "/hold/" + key}) }()
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the navigation never reached the fixture")
	}
	b, err := browserPID("--" + f.marker)
	if err != nil {
		t.Fatal(err)
	}
	renderers := descendants(b, "--type=renderer")
	if len(renderers) == 0 {
		t.Fatal("no renderer process under the browser")
	}
	for _, pid := range renderers {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	var e reply
	select {
	case e = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("navigate did not return after its renderer died")
	}
	fx.Release(key)
	t.Logf("navigate when its renderer was killed (%d renderers):\n%s", len(renderers), e.Text)
	if !e.IsError {
		t.Fatalf("navigate succeeded although its renderer died:\n%s", e.Text)
	}
	if strings.Contains(e.Text, "fail the same way") || strings.Contains(e.Text, "will not help") || strings.Contains(e.Text, "busy") {
		t.Errorf("the plan misreads a killed renderer:\n%s", e.Text)
	}
	c.follow(e)
	mustContain(t, c.ok("browser_snapshot", nil), "released")
}

// descendants lists the processes under pid whose command line has arg.
func descendants(pid int, arg string) []int {
	var out []int
	for _, p := range allPIDs() {
		for q := p; q > 1; {
			pp, err := parentPID(q)
			if err != nil {
				break
			}
			if pp == pid {
				// A child's command line is rewritten into one string.
				if args, err := cmdline(p); err == nil && strings.Contains(strings.Join(args, " ")+" ", arg+" ") &&
					!strings.Contains(strings.Join(args, " "), "--top-chrome-webui") {
					out = append(out, p)
				}
				break
			}
			q = pp
		}
	}
	return out
}

// A renderer killed while an evaluate waits on it: the call returns at
// once with PAGE_CRASHED, and its plan works.
func TestRendererKilledUnderEvaluate(t *testing.T) {
	t.Parallel()
	f := newFaultRig(t)
	c := f.c
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	key := fmt.Sprintf("crash-eval-%d", time.Now().UnixNano())
	held := fx.Held(key)
	done := make(chan reply, 1)
	go func() {
		done <- c.callAsync("browser_evaluate", map[string]any{"function": "() => fetch('/hold/" + key + "').then(r => r.text())"})
	}()
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the script's request never reached the fixture")
	}
	b, err := browserPID("--" + f.marker)
	if err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	for _, pid := range descendants(b, "--type=renderer") {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	var e reply
	select {
	case e = <-done:
	case <-time.After(3*time.Second + 2*time.Second):
		t.Fatal("evaluate did not return within its timeout plus 2 s of its renderer's death")
	}
	fx.Release(key)
	t.Logf("evaluate returned %v after its renderer was killed:\n%s", time.Since(killed).Round(time.Millisecond), e.Text)
	if !e.IsError || e.code() != string(llmerr.PageCrashed) {
		t.Fatalf("code %q, want %s:\n%s", e.code(), llmerr.PageCrashed, e.Text)
	}
	c.follow(e)
	mustContain(t, c.ok("browser_snapshot", nil), `button "Sign in"`)
}

// An agent that writes an element's name where its ref belongs is pointed
// at the element: one named so is the plan's first step, which works as
// written; several are each offered with their line.
func TestNameInPlaceOfRef(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("interact.html")})
	buy := refOf(t, c.ok("browser_snapshot", nil), `button "Buy"`)
	for _, name := range []string{"Buy", "buy button", `"Buy"`} {
		r := c.fail("browser_click", map[string]any{"ref": name}, llmerr.UnknownRef)
		mustContain(t, r.Text, `the page has one element named so: button "Buy" [ref=`+buy+`]`,
			`1. browser_click(ref="`+buy+`")`)
	}
	r := c.fail("browser_click", map[string]any{"ref": "Buy"}, llmerr.UnknownRef)
	c.follow(r)
	mustContain(t, c.ok("browser_snapshot", nil), "bought")

	// Text that names nothing on the page keeps the plain plan.
	r = c.fail("browser_click", map[string]any{"ref": "Purchase now"}, llmerr.UnknownRef)
	mustContain(t, r.Text, "it looks like text or a description", "1. browser_snapshot()")
	if strings.Contains(r.Text, "named so") {
		t.Errorf("text that names nothing got a match:\n%s", r.Text)
	}
}
