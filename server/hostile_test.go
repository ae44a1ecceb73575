package server

import (
	"strings"
	"testing"
	"time"
)

// A page that opens 40 popups from one click: the call returns in bounded
// time, keeps the first tabs and says it closed the rest.
func TestPopupStormIsBounded(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_popup-storm.html")})
	snap := c.ok("browser_snapshot", nil)
	start := time.Now()
	r := c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Open many"`)})
	took := time.Since(start)
	mustContain(t, r, "the 30 past the first 10 were closed", "Opened a new tab 10:")
	t.Logf("a click that opened 40 popups answered in %v:\n%s", took.Round(time.Millisecond), firstLines(r, 4))
	list := c.ok("browser_tabs", map[string]any{"action": "list"})
	if n := strings.Count(list, "\n- "); n > 11 {
		t.Errorf("%d tabs left open:\n%s", n, list)
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// A page whose main thread never yields: every call returns within its
// timeout plus 2 s, and following the plan gets the agent off the page.
func TestFrozenPageIsBounded(t *testing.T) {
	t.Parallel()
	const action, navigation = 2 * time.Second, 4 * time.Second
	c := connect(t, Config{ActionTimeout: action, NavigationTimeout: navigation})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("busy.html")})
	ref := refOf(t, c.ok("browser_snapshot", nil), `button "Freeze"`)
	var last reply
	for _, step := range []struct {
		tool  string
		args  map[string]any
		bound time.Duration
	}{
		{"browser_click", map[string]any{"ref": ref}, action}, // freezes it
		{"browser_click", map[string]any{"ref": ref}, action},
		{"browser_snapshot", nil, action},
		{"browser_evaluate", map[string]any{"function": "() => 1"}, action},
		{"browser_navigate", map[string]any{"url": fx.Page("form.html")}, navigation},
	} {
		done := make(chan reply, 1)
		start := time.Now()
		go func() { done <- c.callAsync(step.tool, step.args) }()
		select {
		case last = <-done:
		case <-time.After(step.bound + 10*time.Second):
			t.Fatalf("%s on a frozen page did not return", step.tool)
		}
		took := time.Since(start)
		t.Logf("%s: %v, %.70q", step.tool, took.Round(time.Millisecond), last.Text)
		if !last.IsError {
			t.Errorf("%s on a frozen page succeeded:\n%s", step.tool, last.Text)
		}
		if took > step.bound+2*time.Second {
			t.Errorf("%s took %v, beyond its %v timeout plus 2 s", step.tool, took, step.bound)
		}
	}
	// The last plan, followed as written: close the browser, load a page.
	mustContain(t, last.Text, "1. browser_close()", "2. browser_navigate(")
	c.ok("browser_close", nil)
	mustContain(t, c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")}), "Title: Sign in")
}
