package server

import (
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

// Partial failures through the FailureLog, each from a real page: the rest
// of the page is there, the gap is a placeholder line, a warning says what
// is missing and why, and it goes away with the page.

func warningsOf(r reply) []map[string]any {
	ws, _ := r.Structured["warnings"].([]any)
	out := make([]map[string]any, 0, len(ws))
	for _, w := range ws {
		out = append(out, w.(map[string]any))
	}
	return out
}

func TestBusyAndSandboxedFrames(t *testing.T) {
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_frames-partial.html")})
	r := c.call("browser_snapshot", nil)
	if r.IsError {
		t.Fatal(r.Text)
	}
	mustContain(t, r.Text, `button "Main button"`, "Footer text", `button "Healthy button"`,
		`iframe "Busy widget" [ref=`, "(not shown: the frame did not answer within 3s)",
		"Warnings:\n- The content of iframe \"Busy widget\" [ref=", "is missing: it did not answer in time",
		`to retry just that frame`)
	ws := warningsOf(r)
	if len(ws) != 1 || ws[0]["kind"] != "frame-timeout" || ws[0]["reason"] != "timeout" || ws[0]["mainFrame"] != false ||
		!strings.Contains(ws[0]["frameUrl"].(string), "_busy-frame.html") {
		t.Errorf("structured warnings = %v", ws)
	}
	// A sandboxed frame without scripts is still read (CDP evaluation is
	// not page script); its own script never ran, so its button keeps the
	// markup's text.
	mustContain(t, r.Text, "iframe \"Sandboxed ad\" [ref=", `button "Inner button"`)
	t.Logf("snapshot with a busy frame:\n%s", r.Text)
	// The abandoned read costs no block of ref numbers, and a second
	// snapshot reads the same refs for the frames that answer.
	if strings.Contains(r.Text, "[ref=e1000") {
		t.Errorf("refs jumped after the timeout:\n%s", r.Text)
	}
	again := c.call("browser_snapshot", nil)
	if refOf(t, again.Text, `button "Healthy button"`) != refOf(t, r.Text, `button "Healthy button"`) {
		t.Errorf("a healthy frame's refs changed after a busy frame timed out")
	}

	// Navigating away clears the warning with the page it belonged to.
	after := c.call("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	if strings.Contains(after.Text, "Warnings:") {
		t.Errorf("the busy frame's warning outlived its page:\n%s", after.Text)
	}
}

func TestFrameRemovedWhileSnapshotRuns(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_big-frame.html")})
	role := c.srv.sessionForTest().role(defaultRole)
	// The page removes the frame once the snapshot is under way: its iframe
	// is found, and its 150,000 nodes are about to be read.
	var removed atomic.Int32
	role.eng.BeforeFrame = func(frameURL string) {
		if !strings.Contains(frameURL, "huge.html") || !removed.CompareAndSwap(0, 1) {
			return
		}
		if _, err := role.tab.Page.Evaluate(`() => document.getElementById('big').remove()`); err != nil {
			t.Errorf("removing the frame: %v", err)
		}
	}
	r := c.call("browser_snapshot", nil)
	if r.IsError {
		t.Fatal(r.Text)
	}
	if removed.Load() != 1 {
		t.Fatalf("the snapshot never came to read the big frame:\n%s", r.Text)
	}
	t.Logf("snapshot that lost its frame:\n%s", r.Text)
	mustContain(t, r.Text, `heading "Host"`, "After the frame", `iframe "Big list"`,
		"is missing: it was removed while the snapshot ran")
	if ws := warningsOf(r); len(ws) != 1 || ws[0]["kind"] != "frame-detached" {
		t.Errorf("structured warnings = %v", ws)
	}
	// The next snapshot sees the page as it is: no frame, no warning.
	if s := c.ok("browser_snapshot", nil); strings.Contains(s, "Warnings:") || strings.Contains(s, "Big list") {
		t.Errorf("after the frame left:\n%s", s)
	}
}

func TestHangingFrameDoesNotHoldNavigation(t *testing.T) {
	c := connect(t, Config{})
	start := time.Now()
	res := c.ok("browser_navigate", map[string]any{"url": fx.Page("_hanging-frame.html")})
	took := time.Since(start)
	mustContain(t, res, "Title: <page-content>Hanging frame</page-content>", "Still loading (not waited for): "+fx.Page("hang"))
	// Not a speed assertion: waiting for the frame would take the whole
	// 10 s navigation timeout of the test browser.
	if took > 8*time.Second {
		t.Errorf("navigation waited %v for a frame that never loads", took)
	}
	// The snapshot gives the frame its bounded time, then says so.
	mustContain(t, c.ok("browser_snapshot", nil), "Readable text", `iframe "Never loads" [ref=`,
		`Warnings:`, `"Never loads"`, "did not answer in time (it may still be loading)")
}

func TestBlockedFrameIsAWarning(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{Origins: OriginPolicy{Blocked: []string{"localhost"}}})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("frames.html")})
	r := c.call("browser_snapshot", nil)
	mustContain(t, r.Text, `button "Same button"`, `iframe "Cross origin" [ref=`,
		`The content of iframe "Cross origin"`, "its page was blocked or failed to load")
	if ws := warningsOf(r); len(ws) != 1 || ws[0]["reason"] != "blocked" {
		t.Errorf("structured warnings = %v", ws)
	}
}

func TestHostileFrameIsRead(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_frames-hostile.html")})
	r := c.call("browser_snapshot", nil)
	mustContain(t, r.Text, `iframe "Hostile" [ref=`, `button "Still reachable" [ref=`, `button "Host button"`)
	if strings.Contains(r.Text, "Warnings:") {
		t.Errorf("a frame that breaks Function.prototype.call was not read:\n%s", r.Text)
	}
	c.ok("browser_click", map[string]any{"ref": refOf(t, r.Text, `button "Still reachable"`)})
}

// A frame that was busy during one snapshot gets a fresh bridge the next
// time (the abandoned one may still hand out numbers). This frame replaced
// built-ins meanwhile, so the fresh install fails: a frame-injection warning,
// with the rest of the page read.
func TestFrameInjectionFailure(t *testing.T) {
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_frames-injection.html")})
	first := c.call("browser_snapshot", nil)
	if ws := warningsOf(first); len(ws) != 1 || ws[0]["kind"] != "frame-timeout" {
		t.Fatalf("first snapshot, while the frame is busy: warnings = %v\n%s", ws, first.Text)
	}
	// The frame's busy spell ends and it breaks its built-ins; it then tells
	// the host page, which shows it.
	page := c.srv.sessionForTest().role(defaultRole).tab.Page
	status := page.GetByText("Chart polyfills installed", playwright.PageGetByTextOptions{Exact: playwright.Bool(true)})
	if err := status.WaitFor(playwright.LocatorWaitForOptions{Timeout: playwright.Float(10000)}); err != nil {
		t.Fatalf("the frame did not report replacing its built-ins: %v", err)
	}
	r := c.call("browser_snapshot", nil)
	if r.IsError {
		t.Fatal(r.Text)
	}
	mustContain(t, r.Text, `heading "Report"`, `button "Export" [ref=`, `iframe "Legacy chart" [ref=`,
		"Warnings:\n- The content of iframe \"Legacy chart\" [ref=", "is missing: it could not be read",
		"bind polyfill: not supported", "Reload the page (browser_navigate to its URL again) to read it.")
	ws := warningsOf(r)
	if len(ws) != 1 || ws[0]["kind"] != "frame-injection" || ws[0]["mainFrame"] != false ||
		!strings.Contains(ws[0]["frameUrl"].(string), "_legacy-frame.html") {
		t.Errorf("structured warnings = %v", ws)
	}
	t.Logf("snapshot with an unreadable frame:\n%s", r.Text)
	// Following the advice: a fresh document is read again (its busy spell
	// comes later than this snapshot).
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_frames-injection.html")})
	if s := c.ok("browser_snapshot", nil); strings.Contains(s, "Warnings:") || !strings.Contains(s, `button "Zoom" [ref=`) {
		t.Errorf("after reloading:\n%s", s)
	}
}

// Two partial failures of different kinds in one snapshot: a role browsing
// without its auth file, on a page with a busy cross-origin frame.
func TestTwoWarningsInOneSnapshot(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "visitor.json")
	c := connect(t, Config{Roles: rolesConfig(t, "visitor="+missing)})
	c.ok("select_role", map[string]any{"role": "visitor"})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_frames-partial.html")})
	r := c.call("browser_snapshot", nil)
	if r.IsError {
		t.Fatal(r.Text)
	}
	mustContain(t, r.Text, `button "Main button" [ref=`, `button "Healthy button" [ref=`, "Warnings:\n",
		"- Role visitor is browsing signed out: its auth file "+missing+" is missing",
		`- The content of iframe "Busy widget" [ref=`)
	ws := warningsOf(r)
	if len(ws) != 2 || ws[0]["kind"] != "auth-load" || ws[1]["kind"] != "frame-timeout" {
		t.Errorf("structured warnings = %v", ws)
	}
	t.Logf("snapshot with two warnings:\n%s", r.Text)
}

// A crashed cross-origin frame (its renderer killed through its own CDP
// session) cannot be a frame warning: Playwright 1.52 marks the whole page
// crashed and stops answering for it. So it is PAGE_CRASHED, whose plan
// (load the page again) recovers.
func TestCrashedChildFrame(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("frames.html")})
	c.ok("browser_snapshot", nil)
	r := c.srv.sessionForTest().role(defaultRole)
	crashed := false
	for _, f := range r.tab.Page.Frames() {
		if f.ParentFrame() == nil || !strings.Contains(f.URL(), "localhost") {
			continue
		}
		s, err := r.bctx.NewCDPSession(f)
		if err != nil {
			t.Fatal(err)
		}
		go s.Send("Page.crash", nil) // never answers: its renderer is gone
		crashed = true
	}
	if !crashed {
		t.Fatal("no cross-origin frame to crash")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !r.tab.Crashed() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	e := c.fail("browser_snapshot", nil, "PAGE_CRASHED")
	c.follow(e)
	mustContain(t, c.ok("browser_snapshot", nil), `button "Cross button" [ref=`)
}
