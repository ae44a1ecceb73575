package server

import "testing"

// Calls written for playwright-mcp 0.0.83, which names a ref `target` (and
// gives its form fields a name and a type), work as they are.
func TestTargetIsAnAliasOfRef(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	snap := c.ok("browser_snapshot", nil)
	email, remember := refOf(t, snap, `textbox "Email"`), refOf(t, snap, `checkbox "Remember me"`)
	c.ok("browser_type", map[string]any{"target": email, "element": "Email", "text": "ada@example.com"})
	c.ok("browser_fill_form", map[string]any{"fields": []map[string]any{
		{"target": refOf(t, snap, `textbox "Password"`), "name": "Password", "type": "textbox", "value": "secret"},
		{"target": remember, "name": "Remember me", "type": "checkbox", "value": "true"},
	}})
	mustContain(t, c.ok("browser_snapshot", nil), `checkbox "Remember me" [checked] [ref=`+remember+`]`, `"ada@example.com"`)
	out := c.ok("browser_click", map[string]any{"target": refOf(t, snap, `button "Sign in"`), "element": "Sign in"})
	mustContain(t, out, `Clicked button "Sign in"`)

	// Both at once is ambiguous, and target on a tool without ref is not
	// an alias of anything: each is an unknown argument.
	r := c.fail("browser_click", map[string]any{"ref": email, "target": email}, "INVALID_PARAMS")
	mustContain(t, r.Text, `unexpected additional properties ["target"]`)
	c.fail("browser_navigate", map[string]any{"url": fx.Page("form.html"), "target": email}, "INVALID_PARAMS")
}
