package server

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/retrace-dev/retrace/llmerr"
)

func TestTracingTools(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	c := connect(t, Config{Caps: []string{"tracing"}, OutputDir: out})
	r := c.fail("browser_stop_tracing", nil, llmerr.InvalidParams)
	mustContain(t, r.Text, "No trace is being recorded in this role.", "browser_start_tracing()")
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_api.html")})
	mustContain(t, c.ok("browser_start_tracing", nil), "Tracing this role")
	c.fail("browser_start_tracing", nil, llmerr.InvalidParams)
	snap := c.ok("browser_snapshot", nil)
	c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Load fares"`)})
	res := c.ok("browser_stop_tracing", nil)
	m := regexp.MustCompile(`Trace saved to (\S+) \((\d+(\.\d)? [KM]?B)\); a person opens it with: npx playwright show-trace `).FindStringSubmatch(res)
	if m == nil {
		t.Fatalf("stop_tracing:\n%s", res)
	}
	if filepath.Dir(m[1]) != out {
		t.Errorf("the trace went to %s, not --output-dir %s", m[1], out)
	}
	if st, err := os.Stat(m[1]); err != nil || st.Size() == 0 {
		t.Errorf("no trace file at %s: %v", m[1], err)
	}
	// Stopped, it is not recording: browser_close saves nothing more.
	if regexp.MustCompile(`Trace saved`).MatchString(c.ok("browser_close", nil)) {
		t.Errorf("browser_close saved a trace after browser_stop_tracing")
	}
	// Started and not stopped, the trace is saved when the browser closes.
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_api.html")})
	c.ok("browser_start_tracing", nil)
	mustContain(t, c.ok("browser_close", nil), "Trace saved to "+out)
}
