package server

import (
	"strings"
	"testing"
	"time"

	"github.com/retrace-dev/retrace/llmerr"
)

// Numbers are clamped before they become durations, and echoed arguments
// are cut: an absurd argument gets a small, sensible answer.
func TestAbsurdArgumentsAreBounded(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{ActionTimeout: 500 * time.Millisecond})
	start := time.Now()
	r := c.ok("browser_wait_for", map[string]any{"time": 1e308})
	mustContain(t, r, "Waited 500ms. One call waits at most 500ms")
	if took := time.Since(start); took < 400*time.Millisecond {
		t.Errorf("time=1e308 returned after %v: it overflowed instead of waiting the most one call waits", took)
	}
	huge := strings.Repeat("admin", 1_000_000)
	e := c.fail("browser_navigate", map[string]any{"url": "about:blank", "role": huge}, llmerr.UnknownRole)
	if len(e.Text) > 2000 {
		t.Errorf("a 5 MB role name came back in a %d-byte answer", len(e.Text))
	}
}
