package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/retrace-dev/retrace/llmerr"
)

func TestSnapshotBudgetAndOffset(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{SnapshotBudget: 5000})
	c.ok("browser_navigate", map[string]any{"url": fx.URL + "/table?rows=300"})
	first := c.ok("browser_snapshot", nil)
	mustContain(t, first, "[Cut at the 5000-character budget", "browser_snapshot(offset=", "browser_find(", "browser_snapshot(budget=0)")
	var offset int
	i := strings.Index(first, "browser_snapshot(offset=")
	fmt.Sscanf(first[i:], "browser_snapshot(offset=%d)", &offset)
	if offset <= 0 {
		t.Fatalf("no offset in:\n%s", first)
	}
	// Where it continues is named: the first cut row, inside its table.
	mustContain(t, first, "It continues at line", "  - table:\n  - row: link \"Item")

	next := c.ok("browser_snapshot", map[string]any{"offset": offset})
	mustContain(t, next, fmt.Sprintf("[Lines %d and on", offset+1))
	// The rows of the second page follow on from the first, and their refs work.
	ref := refOf(t, next, `button "Edit"`)
	c.ok("browser_click", map[string]any{"ref": ref})

	all := c.ok("browser_snapshot", map[string]any{"budget": 0})
	if n := strings.Count(all, "[ref="); n != 900 {
		t.Errorf("budget=0 snapshot has %d refs, want 900 (300 rows × 3)", n)
	}
	if strings.Contains(all, "[Cut at") {
		t.Error("budget=0 snapshot was cut")
	}
	c.fail("browser_snapshot", map[string]any{"budget": -1}, llmerr.InvalidParams)
	past := c.ok("browser_snapshot", map[string]any{"offset": 100000})
	mustContain(t, past, "past the end")
}

func TestSnapshotSubtree(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("frames.html")})
	snap := c.ok("browser_snapshot", nil)
	cross := refOf(t, snap, `iframe "Cross origin"`)
	sub := c.ok("browser_snapshot", map[string]any{"ref": cross})
	mustContain(t, sub, "Subtree of "+cross, `button "Cross button"`)
	for _, absent := range []string{"Outer button", "Same button"} {
		if strings.Contains(sub, absent) {
			t.Errorf("subtree of the cross-origin iframe shows %q:\n%s", absent, sub)
		}
	}
	// Refs in a subtree are the same as in the full snapshot.
	if refOf(t, sub, `button "Cross button"`) != refOf(t, snap, `button "Cross button"`) {
		t.Error("the subtree gave the button another ref")
	}
	c.fail("browser_snapshot", map[string]any{"ref": "e999"}, llmerr.UnknownRef)
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	c.fail("browser_snapshot", map[string]any{"ref": cross}, llmerr.StaleRef)
}

func TestFind(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.URL + "/table?rows=300"})
	res := c.ok("browser_find", map[string]any{"text": "Item 42"})
	// The link, its description cell and its checkbox all mention item 42;
	// each comes with its row as context.
	mustContain(t, res, `3 matches for text="Item 42"`, `- link "Item 42" [ref=`, `(in: row: link "Item 42"`, `checkbox "Select item 42"`)
	ref := refOf(t, res, `link "Item 42"`)
	nav := c.ok("browser_click", map[string]any{"ref": ref})
	mustContain(t, nav, "/item/42")

	c.ok("browser_navigate", map[string]any{"url": fx.URL + "/table?rows=300"})
	res = c.ok("browser_find", map[string]any{"role": "button", "name": "edit", "limit": 5})
	mustContain(t, res, `300 matches for role="button", name="edit"`, "[295 more not shown")
	if n := strings.Count(res, "\n- button \"Edit\" [ref="); n != 5 {
		t.Errorf("limit 5 returned %d lines:\n%s", n, res)
	}
	res = c.ok("browser_find", map[string]any{"text": "no such thing"})
	mustContain(t, res, "No element matches", "If it should be there:\n1. browser_wait_for(text=\"no such thing\") — if the page is still loading it\n2. browser_snapshot()")
	c.fail("browser_find", map[string]any{}, llmerr.InvalidParams)
}

func TestHostilePageStillSnapshots(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("hostile.html")})
	snap := c.ok("browser_snapshot", nil)
	mustContain(t, snap, `heading "Still readable" [level=1]`, `searchbox "Search" [ref=`, `button "Go" [ref=`,
		`link "A link" [ref=`, "not yet")
	if strings.Contains(snap, "hijacked") {
		t.Errorf("the page's overrides leaked into the snapshot:\n%s", snap)
	}
	// Refs resolve through the bridge the page could not corrupt.
	c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Go"`)})
	mustContain(t, c.ok("browser_snapshot", nil), "went", `searchbox "Search"`)
}

func TestHugeAndDeepPagesAnswerInTime(t *testing.T) {
	c := connect(t, Config{ActionTimeout: 3 * time.Second})
	for _, q := range []string{"nodes=200000", "deep=5000"} {
		c.ok("browser_navigate", map[string]any{"url": fx.Page("huge.html?" + q)})
		start := time.Now()
		r := c.call("browser_snapshot", map[string]any{"budget": 2000})
		took := time.Since(start)
		if r.IsError {
			// A clear error is acceptable; a hang is not.
			mustContain(t, r.Text, "Action Required:")
		} else {
			mustContain(t, r.Text, `button "First button" [ref=`)
		}
		t.Logf("%s: snapshot answered in %v (error=%v)", q, took.Round(time.Millisecond), r.IsError)
		// Not a speed assertion: the bound is the action timeout plus slack,
		// far below what a hang would take.
		if took > 3*time.Second+2*time.Second {
			t.Errorf("%s: snapshot took %v, beyond the 3 s action timeout", q, took)
		}
	}
	mustContain(t, c.ok("browser_snapshot", nil), "nesting deeper than 1000 levels not shown")
}

func TestBusyPageIsAnErrorNotAHang(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{ActionTimeout: 2 * time.Second})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("busy.html")})
	snap := c.ok("browser_snapshot", nil)
	start := time.Now()
	c.call("browser_click", map[string]any{"ref": refOf(t, snap, `button "Freeze"`)})
	r := c.fail("browser_snapshot", nil, llmerr.ActionTimeout)
	c.golden("ACTION_TIMEOUT", r)
	mustContain(t, r.Text, "did not answer", "browser_find(")
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("a frozen page held the server for %v", took)
	}
	// The session recovers: a fresh browser serves the next page.
	c.ok("browser_close", nil)
	mustContain(t, c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")}), "Title: <page-content>Sign in</page-content>")
}
