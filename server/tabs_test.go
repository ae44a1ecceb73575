package server

import (
	"strings"
	"testing"
	"time"

	"github.com/retrace-dev/retrace/llmerr"
)

func TestPopupsBecomeTabs(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_tabs.html")})
	snap := c.ok("browser_snapshot", nil)
	buy := refOf(t, snap, `button "Go to form"`)

	// A target=_blank link: reported in the click's result, and current.
	res := c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `link "Open the form in a new tab"`)})
	mustContain(t, res, "Opened a new tab 1: "+fx.Page("form.html"), "Title: <page-content>Sign in</page-content>",
		"Tab 1 is now the current tab", `browser_tabs(action="select", index=0) to go back`)
	mustContain(t, c.ok("browser_snapshot", nil), "Title: Sign in")

	// A ref of the first tab still acts there, without a select.
	res = c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Help popup"`)})
	mustContain(t, res, "Opened a new tab 2: "+fx.Page("nav.html"), "Title: <page-content>Navigation start</page-content>")
	list := c.ok("browser_tabs", map[string]any{"action": "list"})
	mustContain(t, list, "- 0: "+fx.Page("_tabs.html")+" — Tabs start", "- 1: "+fx.Page("form.html"),
		"- 2 (current): "+fx.Page("nav.html"))

	// Select, act, close.
	mustContain(t, c.ok("browser_tabs", map[string]any{"action": "select", "index": 0}), "Tab 0 is now the current tab", "Title: <page-content>Tabs start</page-content>")
	res = c.ok("browser_click", map[string]any{"ref": buy})
	mustContain(t, res, "Page navigated: "+fx.Page("_tabs.html")+" → "+fx.Page("form.html"))
	closed := c.ok("browser_tabs", map[string]any{"action": "close", "index": 1})
	mustContain(t, closed, "Closed tab 1 ("+fx.Page("form.html")+"); its refs are stale.", "- 0 (current):", "- 1: "+fx.Page("nav.html"))
	// New tab with a URL.
	res = c.ok("browser_tabs", map[string]any{"action": "new", "url": fx.Page("dialogs.html")})
	mustContain(t, res, "Opened tab 2 at "+fx.Page("dialogs.html")+" (HTTP 200)", "Title: <page-content>Dialogs</page-content>")
	mustContain(t, c.ok("browser_snapshot", nil), `button "Prompt"`)

	// Bad input: a clear error with a plan.
	r := c.fail("browser_tabs", map[string]any{"action": "select", "index": 7}, llmerr.InvalidParams)
	mustContain(t, r.Text, "There is no tab 7: the role has 3 tabs (0 to 2).", `browser_tabs(action="list")`)
	r = c.fail("browser_tabs", map[string]any{"action": "open"}, llmerr.InvalidParams)
	mustContain(t, r.Text, `"open" is not a tab action.`)
	c.fail("browser_tabs", map[string]any{"action": "select"}, llmerr.InvalidParams)
}

func TestTabClosedByThePage(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_tabs.html")})
	// Only a window a script opened may close itself.
	c.ok("browser_click", map[string]any{"ref": refOf(t, c.ok("browser_snapshot", nil), `button "Open closer"`)})
	c.ok("browser_wait_for", map[string]any{"text": "Close this window"})
	res := c.ok("browser_click", map[string]any{"ref": refOf(t, c.ok("browser_snapshot", nil), `button "Close this window"`)})
	mustContain(t, res, "The tab closed itself. Tab 0 ("+fx.Page("_tabs.html")+") is now the current tab.")
	mustContain(t, c.ok("browser_snapshot", nil), "Title: Tabs start")
	// Closing the last tab leaves none; the next call opens one.
	mustContain(t, c.ok("browser_tabs", map[string]any{"action": "close"}), "No tab is open")
	mustContain(t, c.ok("browser_tabs", map[string]any{"action": "list"}), "- 0 (current): about:blank")
}

func TestHistoryAndReload(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	res := c.ok("browser_navigate_back", nil)
	mustContain(t, res, "There is no page to go back to")
	c.ok("browser_navigate", map[string]any{"url": fx.Page("nav.html")})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	mustContain(t, c.ok("browser_navigate_back", nil), "Went back to "+fx.Page("nav.html"), "Title: <page-content>Navigation start</page-content>")
	mustContain(t, c.ok("browser_navigate_forward", nil), "Went forward to "+fx.Page("form.html"), "Title: <page-content>Sign in</page-content>")
	mustContain(t, c.ok("browser_navigate_forward", nil), "There is no page to go forward to")
	snap := c.ok("browser_snapshot", nil)
	ref := refOf(t, snap, `button "Sign in"`)
	mustContain(t, c.ok("browser_reload", nil), "Reloaded "+fx.Page("form.html"), "Refs from earlier snapshots are stale")
	r := c.fail("browser_click", map[string]any{"ref": ref}, llmerr.StaleRef)
	mustContain(t, r.Text, "reloaded")
}

func TestWaitFor(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_wait.html")})
	snap := c.ok("browser_snapshot", nil)
	res := c.ok("browser_wait_for", map[string]any{"text": "Results ready"})
	mustContain(t, res, `The text "Results ready" appeared (after`, `- heading "Results ready" [level=2]`)
	mustContain(t, c.ok("browser_wait_for", map[string]any{"textGone": "Loading results"}), `The text "Loading results" is gone`)
	mustContain(t, c.ok("browser_wait_for", map[string]any{"ref": refOf(t, snap, `button "Continue"`)}), `button "Continue" [ref=`, "is visible and enabled")

	start := time.Now()
	res = c.ok("browser_wait_for", map[string]any{"time": 0.3})
	if d := time.Since(start); d < 300*time.Millisecond || !strings.Contains(res, "Waited 300ms.") {
		t.Errorf("a 0.3 s pause took %v: %s", d, res)
	}
	// The action timeout (3 s in tests) bounds every call.
	mustContain(t, c.ok("browser_wait_for", map[string]any{"time": 60}), "Waited 3s. One call waits at most 3s")
	r := c.fail("browser_wait_for", map[string]any{"text": "Never shown"}, llmerr.ActionTimeout)
	mustContain(t, r.Text, `the text "Never shown" did not appear`, `browser_wait_for(text="Never shown")`, "browser_snapshot()")
	c.fail("browser_wait_for", map[string]any{}, llmerr.InvalidParams)
	c.fail("browser_wait_for", map[string]any{"time": -1}, llmerr.InvalidParams)
	c.fail("browser_wait_for", map[string]any{"ref": "e999"}, llmerr.UnknownRef)
}

func TestHandleDialog(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("dialogs.html")})
	snap := c.ok("browser_snapshot", nil)
	mustContain(t, c.ok("browser_handle_dialog", map[string]any{"accept": true, "promptText": "Grace"}), "will be answered: accept (OK) with \"Grace\"")
	res := c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Prompt"`)})
	mustContain(t, res, `prompt dialog <page-content>Your name?</page-content> was accepted with "Grace" (as set by browser_handle_dialog)`)
	mustContain(t, c.ok("browser_snapshot", nil), "prompt returned Grace")
	// Used once: the next dialog goes back to the policy (dismiss).
	res = c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Confirm"`)})
	mustContain(t, res, `confirm dialog <page-content>Delete everything?</page-content> was dismissed (by the --dialog policy`,
		"If it should have been accepted:\n1. browser_handle_dialog(accept=true) — answer the next dialog with OK\n2. browser_click(ref=\""+refOf(t, snap, `button "Confirm"`)+`") — do the action again`)
	c.ok("browser_handle_dialog", map[string]any{"accept": true})
	res = c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Confirm"`)})
	mustContain(t, res, `was accepted (as set by browser_handle_dialog)`)
	mustContain(t, c.ok("browser_snapshot", nil), "confirm returned true")
	c.fail("browser_handle_dialog", map[string]any{"accept": "yes"}, llmerr.InvalidParams)
}

func TestSnapshotWithTheResult(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	res := c.ok("browser_navigate", map[string]any{"url": fx.Page("nav.html"), "snapshot": true})
	mustContain(t, res, "Navigated to "+fx.Page("nav.html"), "Title: <page-content>Navigation start</page-content>\n\nURL: ", `link "Go to the form" [ref=`)
	if strings.Contains(res, "Next: browser_snapshot()") {
		t.Errorf("the result asks for the snapshot it already holds:\n%s", res)
	}
	res = c.ok("browser_click", map[string]any{"ref": refOf(t, res, `link "Go to the form"`), "snapshot": true})
	mustContain(t, res, "Page navigated:", `button "Sign in" [ref=`)
	// Without it, results stay lean.
	if res := c.ok("browser_navigate_back", nil); strings.Contains(res, "[ref=") {
		t.Errorf("a snapshot came without snapshot: true:\n%s", res)
	}
}

// A crashed tab takes only its own refs with it.
func TestCrashedTabSparesTheOthers(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("dialogs.html")})
	first := c.ok("browser_snapshot", nil)
	c.ok("browser_tabs", map[string]any{"action": "new", "url": fx.Page("form.html")})
	c.ok("browser_snapshot", nil)
	r := c.srv.sessionForTest().role(defaultRole)
	crashed := r.tab
	go crashed.Page.Goto("chrome://crash")
	deadline := time.Now().Add(10 * time.Second)
	for !crashed.Crashed() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !crashed.Crashed() {
		t.Fatal("the tab did not crash")
	}
	c.fail("browser_snapshot", nil, llmerr.PageCrashed)
	// The first tab is current again, and its refs still act.
	mustContain(t, c.ok("browser_tabs", map[string]any{"action": "list"}), "- 0 (current): "+fx.Page("dialogs.html"))
	res := c.ok("browser_click", map[string]any{"ref": refOf(t, first, `button "Alert"`)})
	mustContain(t, res, `alert dialog <page-content>Hello from alert</page-content>`)
}
