package server

import (
	"strings"
	"testing"
	"time"

	"github.com/retrace-dev/retrace/llmerr"
)

// The eval's virtualised order lists: 1,000 orders, about twenty rows in
// the DOM, on the window and in a pane of a page that does not scroll.

func TestFindScrollsVirtualList(t *testing.T) {
	t.Parallel()
	for _, page := range []string{"_vlist-window.html", "_vlist-pane.html"} {
		t.Run(page, func(t *testing.T) {
			t.Parallel()
			c := connect(t, Config{})
			c.ok("browser_navigate", map[string]any{"url": fx.URL + "/eval/" + page})
			if snap := c.ok("browser_snapshot", nil); strings.Contains(snap, "#20700") {
				t.Fatalf("row #20700 is rendered before any scroll; the page is not virtualised:\n%s", snap)
			}
			found := c.ok("browser_find", map[string]any{"role": "button", "name": "Reorder order #20700"})
			mustContain(t, found, "Scrolled ", "until it appeared", "1 match for")
			if page == "_vlist-pane.html" {
				mustContain(t, found, `the scrolling area <div id="pane"> (list "Orders")`)
			} else {
				mustContain(t, found, "Scrolled the page down")
			}
			// The list stays scrolled there: the ref acts.
			c.ok("browser_click", map[string]any{"ref": refOf(t, found, `button "Reorder order #20700"`)})
			if got := c.ok("browser_find", map[string]any{"text": "added to your cart"}); !strings.Contains(got, "order #20700") {
				t.Errorf("the click did not reorder #20700:\n%s", got)
			}
			// A row that does not exist: the list is searched to its end and
			// put back; the answer says where it looked.
			missing := c.ok("browser_find", map[string]any{"role": "button", "name": "Reorder order #12345"})
			mustContain(t, missing, "No element matches", "It is not in ", "scrolled from its top down")
		})
	}
}

func TestFindLeavesPlainPagesAlone(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	// A long table, all of it in the DOM: scrolling renders nothing new.
	c.ok("browser_navigate", map[string]any{"url": fx.URL + "/table?rows=300"})
	c.ok("browser_snapshot", nil)
	got := c.ok("browser_find", map[string]any{"role": "button", "name": "No such button"})
	if strings.Contains(got, "Scrolled") || strings.Contains(got, "It is not in") {
		t.Errorf("a page that renders nothing as it scrolls was scrolled:\n%s", got)
	}
	if y := c.ok("browser_evaluate", map[string]any{"function": "() => scrollY"}); !strings.Contains(y, ">0<") {
		t.Errorf("the page was left scrolled: %s", y)
	}
}

func TestPageDownScrollsPane(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.URL + "/eval/_vlist-pane.html"})
	c.ok("browser_snapshot", nil)
	got := c.ok("browser_press_key", map[string]any{"key": "PageDown"})
	mustContain(t, got, "Pressed PageDown.", `so PageDown scrolled the scrolling area <div id="pane"> (list "Orders") instead`, "added in list")
	if top := c.ok("browser_evaluate", map[string]any{"function": "() => document.getElementById('pane').scrollTop > 300"}); !strings.Contains(top, "true") {
		t.Errorf("the pane did not scroll: %s", top)
	}
	// On a page that scrolls itself the key is the browser's alone.
	c.ok("browser_navigate", map[string]any{"url": fx.URL + "/eval/_vlist-window.html"})
	c.ok("browser_snapshot", nil)
	got = c.ok("browser_press_key", map[string]any{"key": "PageDown"})
	if strings.Contains(got, "scrolled the scrolling area") || strings.Contains(got, "Nothing had focus") {
		t.Errorf("PageDown on a scrolling page was redirected:\n%s", got)
	}
	// With a field focused, the key goes to it.
	c.ok("browser_navigate", map[string]any{"url": fx.URL + "/eval/_vlist-pane.html"})
	snap := c.ok("browser_snapshot", nil)
	c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Reorder order #20999"`)})
	got = c.ok("browser_press_key", map[string]any{"key": "End"})
	if strings.Contains(got, "Nothing had focus") {
		t.Errorf("End with a focused button was redirected:\n%s", got)
	}
}

// A snackbar (a live region with no close control) over the target goes
// by itself: the click waits for it and says so. One that stays longer
// than the click waits fails the click at once, with a wait for its text
// to go as step 1, and never the notice's own Undo.
func TestNoticeOverTarget(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{ActionTimeout: 1500 * time.Millisecond})
	c.ok("browser_navigate", map[string]any{"url": fx.URL + "/eval/_toast-sync.html"})
	pay := refOf(t, c.ok("browser_snapshot", nil), `button "Pay"`)
	c.ok("browser_evaluate", map[string]any{"function": "() => showSnackbar('Saved to your list', {ms: 1000})"})
	res := c.ok("browser_click", map[string]any{"ref": pay})
	mustContain(t, res, `for a notice ("Saved to your list") over it to go.`, "Paid, thank you")

	c.ok("browser_navigate", map[string]any{"url": fx.URL + "/eval/_toast-undo.html"})
	checkout := refOf(t, c.ok("browser_snapshot", nil), `button "Checkout"`)
	c.ok("browser_evaluate", map[string]any{"function": "() => showSnackbar('Kettle added to your cart', {action: 'Undo', ms: 8000})"})
	start := time.Now()
	r := c.fail("browser_click", map[string]any{"ref": checkout}, llmerr.ElementNotInteractable)
	if took := time.Since(start); took > noticeWait+2*time.Second {
		t.Errorf("the click took %v: it must give up once it has waited %v for the notice", took, noticeWait)
	}
	c.checkPlan("browser_click", r)
	mustContain(t, r.Text, `a notice covers it: <div id="snackbar"> (status) saying "Kettle added to your cart"; it goes by itself`,
		`1. browser_wait_for(textGone="Kettle added to your cart")`, "2. browser_click(ref=", "do not close it")
	if n := strings.Count(r.Text, "browser_click("); n != 1 {
		t.Errorf("the plan has %d clicks, want only the retry (never the notice's Undo):\n%s", n, r.Text)
	}
}

// A route change of the page's own script (history.pushState on the same
// path) that swaps the view: the stale ref's error says so and leads back
// to the view it was read on; when the new view has the element, its new
// ref.
func TestStaleRefAfterRouteChange(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	start := fx.URL + "/eval/_spa-tabs.html?tab=billing"
	c.ok("browser_navigate", map[string]any{"url": start})
	snap := c.ok("browser_snapshot", nil)
	c.ok("browser_evaluate", map[string]any{"function": "() => window.onSupportReply('T-88')"})
	r := c.fail("browser_click", map[string]any{"ref": refOf(t, snap, `button "Pay"`)}, llmerr.StaleRef)
	c.checkPlan("browser_click", r)
	mustContain(t, r.Text, "the page changed its view", "without loading a new document", "?tab=messages&ticket=T-88",
		`1. browser_navigate(url="`+start+`")`, "2. browser_snapshot()")
	// An agent that makes every call the text names must not go back past
	// the view after loading it.
	if strings.Contains(r.Text, "browser_navigate_back(") {
		t.Errorf("the text names a call beyond the plan:\n%s", r.Text)
	}
	c.follow(r)
	snap = c.ok("browser_snapshot", nil)
	c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Pay"`)})
	mustContain(t, c.ok("browser_find", map[string]any{"text": "Paid, thank you"}), "1 match")

	c.ok("browser_navigate", map[string]any{"url": fx.URL + "/eval/_spa-hash.html#/invoices"})
	snap = c.ok("browser_snapshot", nil)
	c.ok("browser_evaluate", map[string]any{"function": "() => window.applySavedView({sort: 'due'})"})
	r = c.fail("browser_click", map[string]any{"ref": refOf(t, snap, `button "Pay invoice INV-2041"`)}, llmerr.StaleRef)
	c.checkPlan("browser_click", r)
	mustContain(t, r.Text, "the page changed its view", "#/invoices?status=open&sort=due", "1. browser_click(ref=")
	if strings.Contains(r.Text, "browser_navigate(") {
		t.Errorf("the new view has the element, yet the plan loads the old one:\n%s", r.Text)
	}
}
