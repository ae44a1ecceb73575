package server

import (
	"strings"
	"testing"
	"time"

	"github.com/retrace-dev/retrace/llmerr"
)

// TestClickLandsOnTheElement clicks elements the quick path takes (a plain
// button, one in an open shadow root, one below the fold that needs
// scrolling, one in a child frame) and ones it leaves to Playwright's
// waits (an element still moving, a checkbox through its label): each
// gets a real mouse press, once, where it is.
func TestClickLandsOnTheElement(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_click.html")})
	snap := c.ok("browser_snapshot", nil)
	// The sliding button moves for a moment, so the click waits for it to stop.
	c.ok("browser_evaluate", map[string]any{"function": "() => { document.getElementById('slide').style.animation = 'slide 800ms ease-out'; }"})
	for _, tc := range []struct{ button, log string }{
		{`button "Sliding"`, "slide: mousedown mouseup click"},
		{`button "Plain"`, "plain: mousedown mouseup click"},
		{`button "Shadow"`, "shadow: mousedown mouseup click"},
		{`button "Inner"`, "inner clicked"},
		{`button "Far below"`, "far: mousedown mouseup click"},
	} {
		res := c.ok("browser_click", map[string]any{"ref": refOf(t, snap, tc.button)})
		mustContain(t, res, "Clicked "+tc.button)
		if got := c.ok("browser_evaluate", map[string]any{"function": "() => document.getElementById('log').textContent"}); !strings.Contains(got, tc.log) {
			t.Errorf("after clicking %s the page logged %s, want %q", tc.button, got, tc.log)
		}
	}
	// The far button was scrolled into view to be clicked.
	if y := c.ok("browser_evaluate", map[string]any{"function": "() => scrollY > 1000"}); !strings.Contains(y, "true") {
		t.Errorf("the page was not scrolled to the far button: %s", y)
	}
	res := c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `checkbox "Agree"`)})
	mustContain(t, res, `checkbox "Agree"`, "[checked]")
}

// TestClickThatFreezesThePage clicks a button whose handler then never
// yields: the click went through, so the error says it did, and says so at
// once instead of waiting out every read of the page after it.
func TestClickThatFreezesThePage(t *testing.T) {
	t.Parallel()
	// The bounds are long so that waiting out even one read shows, while
	// the answer (the settle step's fixed waits, about 2 s) has room on a
	// loaded machine: 3 s was too tight for CI.
	const bound = 6 * time.Second
	c := connect(t, Config{ActionTimeout: bound, NavigationTimeout: bound})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_busy-form.html")})
	snap := c.ok("browser_snapshot", nil)
	start := time.Now()
	r := c.fail("browser_click", map[string]any{"ref": refOf(t, snap, `button "Freeze"`)}, llmerr.ActionTimeout)
	if took := time.Since(start); took >= bound {
		t.Errorf("the click took %v: it waited out a read of the frozen page", took)
	}
	mustContain(t, r.Text, `Clicked button "Freeze"`, "Then the page stopped answering", "browser_navigate(")
}

// A click in a child frame (same-origin, cross-origin, a frame in a frame
// of another origin, a frame under CSS zoom) takes the quick path like one
// in the main frame: its point goes up through each iframe to the page,
// and the click lands on the element. A rotated iframe, whose points do
// not map by offset and scale, and one below the fold (a frame of another site takes a click where the
// browser last drew it, which a scroll just now has not reached) are left
// to Playwright's click, which lands as well. A point at whole pixels
// (playwright-go gives it as an int) is quick too.
func TestQuickClickInFrames(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_click-frames.html")})
	snap := c.ok("browser_snapshot", nil)
	click := func(button string, quick bool) string {
		t.Helper()
		before := c.srv.quickMouse.Load()
		out := c.ok("browser_click", map[string]any{"ref": refOf(t, snap, button)})
		if got := c.srv.quickMouse.Load() - before; got != map[bool]int64{true: 1, false: 0}[quick] {
			t.Errorf("clicking %s took the quick path %d times, want quick=%v", button, got, quick)
		}
		return out
	}
	click(`button "Whole"`, true)
	if got := c.ok("browser_evaluate", map[string]any{"function": "() => document.getElementById('log').textContent"}); !strings.Contains(got, "whole clicked") || strings.Contains(got, "untrusted") {
		t.Errorf("the button at whole pixels logged %s", got)
	}
	for _, tc := range []struct {
		label string
		quick bool
	}{{"Same", true}, {"Cross", true}, {"Deep", true}, {"Zoomed", true}, {"Turned", false}, {"Below", false}} {
		out := click(`button "`+tc.label+` button"`, tc.quick)
		mustContain(t, out, "- changed: paragraph: "+tc.label+" clicked 1 (was: Not clicked)")
	}
	// The page was scrolled to the frame below the fold.
	if y := c.ok("browser_evaluate", map[string]any{"function": "() => scrollY > 1000"}); !strings.Contains(y, "true") {
		t.Errorf("the page was not scrolled to the frame below: %s", y)
	}

	// In the main frame, a click after a scroll stays quick: the point the
	// button is scrolled to was on a frame of another site just before,
	// and the click still reaches the button.
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_click-scroll-frame.html")})
	snap = c.ok("browser_snapshot", nil)
	out := click(`button "Far below"`, true)
	mustContain(t, out, "- changed: paragraph: far clicked (was: none)")
}
