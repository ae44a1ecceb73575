package server

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrace-dev/retrace/llmerr"
)

var holdKeys atomic.Int64

// A main document that cannot be read is an error with a plan, never a
// snapshot with nothing in it: the FailureLog records the failure, and the
// end of the snapshot decides. The page blocks its main thread on a
// synchronous request the test holds, then replaces built-ins the
// snapshot script needs.
func TestMainDocumentUnreadable(t *testing.T) {
	t.Parallel()
	key := fmt.Sprintf("legacy-%d", holdKeys.Add(1))
	c := connect(t, Config{ActionTimeout: 2 * time.Second})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_legacy-page.html?hold=" + key)})
	snap := c.ok("browser_snapshot", nil)
	c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Render chart"`)})

	// The page's thread is blocked: the main document does not answer.
	select {
	case <-fx.Held(key):
	case <-time.After(10 * time.Second):
		t.Fatal("the page never asked for its held request")
	}
	busy := c.fail("browser_snapshot", nil, llmerr.ActionTimeout)
	mustContain(t, busy.Text, "The page did not answer the snapshot in time.", "browser_find(")

	// Released, the page breaks the built-ins. Playwright's own locators
	// run in an isolated world, so waiting for its text still works; a
	// fresh snapshot script cannot run in the page's world.
	fx.Release(key)
	c.ok("browser_wait_for", map[string]any{"text": "Rendered"})
	r := c.fail("browser_snapshot", nil, llmerr.PageUnreadable)
	mustContain(t, r.Text, "The page could not be read: the snapshot script could not run in its document.",
		"polyfill: not supported", "1. browser_reload()")
	if d, _ := r.Structured["details"].(map[string]any); d["kind"] != "frame-injection" {
		t.Errorf("details = %v", r.Structured["details"])
	}
	t.Logf("an unreadable main document, as the model sees it:\n%s", r.Text)

	// Said once, as that call's error, never left as a warning; following
	// the plan reads the page again.
	mustContain(t, c.ok("browser_reload", nil), "Reloaded")
	after := c.ok("browser_snapshot", nil)
	mustContain(t, after, "paragraph: Ready", `button "Render chart" [ref=`)
	if strings.Contains(after, "Warnings:") {
		t.Errorf("the failure outlived its document:\n%s", after)
	}
}
