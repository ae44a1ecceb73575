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
