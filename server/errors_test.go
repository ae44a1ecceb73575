package server

import (
	"testing"
	"time"

	"github.com/retrace-dev/retrace/llmerr"
)

// Real situations for the error codes, each through MCP against Chromium.

func TestFrameDetached(t *testing.T) {
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("detach.html")})
	snap := c.ok("browser_snapshot", nil)
	pay := refOf(t, snap, `button "Pay button"`)
	c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Remove frame"`)})
	r := c.fail("browser_click", map[string]any{"ref": pay}, llmerr.FrameDetached)
	mustContain(t, r.Text, "inside a frame that has been removed", "Frame: "+fx.OtherURL+"/frame-inner.html?label=Pay", "browser_snapshot()")
}

func TestCoveredElementNamesTheWayOut(t *testing.T) {
	c := connect(t, Config{ActionTimeout: 1500 * time.Millisecond})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("interact.html")})
	snap := c.ok("browser_snapshot", nil)
	buy := refOf(t, snap, `button "Buy"`)
	c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Show banner"`)})
	r := c.fail("browser_click", map[string]any{"ref": buy}, llmerr.ElementNotInteractable)
	mustContain(t, r.Text, `another element covers it: <div id="banner"> (dialog "Cookies")`,
		`1. browser_click(ref="`, `close the covering element with its button "Accept all"`,
		`2. browser_click(ref="`+buy+`") — then retry the original action`)
	// Following the plan literally gets the original click through.
	for _, a := range r.Structured["actions"].([]any) {
		step := a.(map[string]any)
		c.ok(step["tool"].(string), step["args"].(map[string]any))
	}
	mustContain(t, c.ok("browser_snapshot", nil), "bought")
}

func TestDisabledHiddenAndNotEditable(t *testing.T) {
	c := connect(t, Config{ActionTimeout: 1000 * time.Millisecond})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("interact.html")})
	snap := c.ok("browser_snapshot", nil)
	mustContain(t, snap, `button "Checkout" [disabled]`)
	r := c.fail("browser_click", map[string]any{"ref": refOf(t, snap, `button "Checkout"`)}, llmerr.ElementNotInteractable)
	mustContain(t, r.Text, "Cause: the element is disabled")

	coupon := refOf(t, snap, `textbox "Coupon"`)
	c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Hide coupon"`)})
	r = c.fail("browser_type", map[string]any{"ref": coupon, "text": "SAVE10"}, llmerr.ElementNotInteractable)
	mustContain(t, r.Text, "Cause: the element is hidden")

	r = c.fail("browser_type", map[string]any{"ref": refOf(t, snap, `button "Buy"`), "text": "x"}, llmerr.ElementNotInteractable)
	mustContain(t, r.Text, "does not accept text")
}
