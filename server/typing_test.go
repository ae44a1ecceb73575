package server

import (
	"strings"
	"testing"
)

// TestTypingReadsTheFieldAlone types into fields and changes a select and
// a radio group: a field whose value alone changed is read again alone,
// and its report line is the line a whole snapshot shows; what a page's
// script does in answer (an echo), and a radio's group, are still
// reported.
func TestTypingReadsTheFieldAlone(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_typing.html")})
	snap := c.ok("browser_snapshot", nil)
	plain := refOf(t, snap, `textbox "Plain"`)
	// changed returns the report's line for ref, now, and checks that a
	// whole snapshot shows the same line.
	changed := func(out, ref string) string {
		t.Helper()
		i := strings.Index(out, "- changed: ")
		if i < 0 || !strings.Contains(out[i:], "[ref="+ref+"]") {
			t.Fatalf("no change of %s in:\n%s", ref, out)
		}
		line, _, _ := strings.Cut(out[i+len("- changed: "):], " (was: ")
		if whole := c.ok("browser_snapshot", nil); !strings.Contains(whole, line) {
			t.Errorf("the report says %q, the page reads:\n%s", line, whole)
		}
		return out[i:]
	}
	out := c.ok("browser_type", map[string]any{"ref": plain, "text": "first"})
	mustContain(t, changed(out, plain), `"first"`)
	out = c.ok("browser_type", map[string]any{"ref": plain, "text": "second"})
	mustContain(t, changed(out, plain), `"second"`, `"first"`) // was: the value typed before
	if strings.Contains(out, "Echo") {
		t.Errorf("the report names what did not change:\n%s", out)
	}

	out = c.ok("browser_type", map[string]any{"ref": refOf(t, snap, `textbox "Echoed"`), "text": "hello"})
	mustContain(t, out, "Echo: hello", `textbox "Echoed"`)

	size := refOf(t, snap, `combobox "Size"`)
	out = c.ok("browser_select_option", map[string]any{"ref": size, "values": []string{"Large"}})
	mustContain(t, changed(out, size), "Large")

	out = c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `radio "Pro"`)})
	mustContain(t, out, `radio "Pro" [checked]`, `radio "Free" [ref=`)
}
