package server

import (
	"strings"
	"testing"
)

// TestTypingReadsTheFieldAlone types into fields and changes a select and
// a radio group: a field whose value alone changed is read again alone;
// one that shows just what was put there is not reported again (the
// agent knows it), while one that shows something else (a mask) is, with
// the line a whole snapshot shows; what a page's script does in answer
// (an echo), and a radio's group, are still reported.
func TestTypingReadsTheFieldAlone(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_typing.html")})
	snap := c.ok("browser_snapshot", nil)
	plain := refOf(t, snap, `textbox "Plain"`)
	// asTyped checks that the result does not restate the field's value
	// and that a whole snapshot shows it.
	asTyped := func(out, ref, line string) {
		t.Helper()
		mustContain(t, out, onlySet)
		if strings.Contains(out, "- changed:") {
			t.Errorf("the report restates what was put in %s:\n%s", ref, out)
		}
		mustContain(t, c.ok("browser_snapshot", nil), line)
	}
	out := c.ok("browser_type", map[string]any{"ref": plain, "text": "first"})
	asTyped(out, plain, `textbox "Plain" [ref=`+plain+`]: "first"`)
	out = c.ok("browser_type", map[string]any{"ref": plain, "text": "second"})
	asTyped(out, plain, `textbox "Plain" [ref=`+plain+`]: "second"`)

	out = c.ok("browser_type", map[string]any{"ref": refOf(t, snap, `textbox "Echoed"`), "text": "hello"})
	mustContain(t, out, "Echo: hello", `textbox "Echoed"`)

	phone := refOf(t, snap, `textbox "Phone"`)
	out = c.ok("browser_type", map[string]any{"ref": phone, "text": "0612345678"})
	mustContain(t, out, `- changed: textbox "Phone" [ref=`+phone+`]: "06 12 34 56 78"`)
	mustContain(t, c.ok("browser_snapshot", nil), `textbox "Phone" [ref=`+phone+`]: "06 12 34 56 78"`)

	size := refOf(t, snap, `combobox "Size"`)
	out = c.ok("browser_select_option", map[string]any{"ref": size, "values": []string{"Large"}})
	asTyped(out, size, `combobox "Size" [ref=`+size+`]: "Large"`)

	out = c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `radio "Pro"`)})
	mustContain(t, out, `radio "Pro" [checked]`, `radio "Free" [ref=`)
}
