package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrace-dev/retrace/llmerr"
)

func TestHoverAndPressKey(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_input.html")})
	snap := c.ok("browser_snapshot", nil)
	if strings.Contains(snap, "Pricing") {
		t.Fatalf("the submenu shows before hovering:\n%s", snap)
	}
	quick := c.srv.quickMouse.Load()
	mustContain(t, c.ok("browser_hover", map[string]any{"ref": refOf(t, snap, `button "Products"`)}), `Hovered over button "Products"`)
	if c.srv.quickMouse.Load() != quick+1 {
		t.Errorf("the hover over a button ready for it waited as Playwright's hover does")
	}
	snap = c.ok("browser_snapshot", nil)
	c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `link "Pricing"`)})
	mustContain(t, c.ok("browser_snapshot", nil), "Pricing opened")

	search := refOf(t, snap, `textbox "Search"`)
	c.ok("browser_type", map[string]any{"ref": search, "text": "old text"})
	mustContain(t, c.ok("browser_press_key", map[string]any{"key": "Control+A"}), "Pressed Control+A.")
	c.ok("browser_press_key", map[string]any{"key": "Backspace"})
	mustContain(t, c.ok("browser_evaluate", map[string]any{"function": "() => document.querySelector('[name=q]').value"}), `Result: <page-content>""</page-content>`)
	c.ok("browser_type", map[string]any{"ref": search, "text": "kettle"})
	// Aliases models write are accepted; Enter submits the form.
	res := c.ok("browser_press_key", map[string]any{"key": "return"})
	mustContain(t, res, "Pressed Enter.", "Page navigated: "+fx.Page("_input.html")+" → "+fx.Page("_input.html?q=kettle"))
	for _, bad := range []string{"Enterr", "Ctrl+Qq", ""} {
		r := c.fail("browser_press_key", map[string]any{"key": bad}, llmerr.InvalidParams)
		mustContain(t, r.Text, "is not a key Playwright can press", `browser_press_key(key="Enter")`)
	}
	c.fail("browser_hover", map[string]any{"ref": 12}, llmerr.InvalidParams)
}

func TestNormalizeKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"Enter": "Enter", "ctrl+a": "Control+a", "Shift+Tab": "Shift+Tab",
		"a": "a", "+": "+", "Control++": "Control++", "esc": "Escape", "F5": "F5", "meta+shift+k": "Meta+Shift+k"} {
		if got, why := normalizeKey(in); got != want {
			t.Errorf("normalizeKey(%q) = %q (%s), want %q", in, got, why, want)
		}
	}
}

func TestDrag(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_input.html")})
	snap := c.ok("browser_snapshot", nil)
	res := c.ok("browser_drag", map[string]any{"startRef": refOf(t, snap, `button "Card A"`), "endRef": refOf(t, snap, `button "Done column"`)})
	mustContain(t, res, `Dragged button "Card A" [ref=`, `onto button "Done column"`)
	mustContain(t, c.ok("browser_snapshot", nil), "Card A moved to Done")
	r := c.fail("browser_drag", map[string]any{"startRef": "e999", "endRef": refOf(t, snap, `button "Done column"`)}, llmerr.UnknownRef)
	mustContain(t, r.Text, "e999")
	c.fail("browser_drag", map[string]any{"startRef": "e1"}, llmerr.InvalidParams)
}

func TestFileUpload(t *testing.T) {
	t.Parallel()
	allowed := t.TempDir()
	outside := t.TempDir()
	file := filepath.Join(allowed, "report.txt")
	os.WriteFile(file, []byte("hello world"), 0o600)
	secret := filepath.Join(outside, "secret.txt")
	os.WriteFile(secret, []byte("x"), 0o600)
	link := filepath.Join(allowed, "escape.txt")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	c := connect(t, Config{UploadDirs: []string{allowed}})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_input.html")})
	snap := c.ok("browser_snapshot", nil)
	input := refOf(t, snap, `button "Attachment"`)
	mustContain(t, c.ok("browser_file_upload", map[string]any{"ref": input, "paths": []string{file}}), "Chose 1 file (report.txt)")
	mustContain(t, c.ok("browser_snapshot", nil), "report.txt (11 bytes)")
	// A button that opens the file chooser.
	mustContain(t, c.ok("browser_file_upload", map[string]any{"ref": refOf(t, snap, `button "Choose avatar"`), "paths": []string{file}}), "Chose 1 file")
	mustContain(t, c.ok("browser_snapshot", nil), "avatar: report.txt")
	for path, why := range map[string]string{
		"/etc/passwd": "outside the allowed directories",
		link:          "outside the allowed directories",
		filepath.Join(allowed, "..", filepath.Base(outside), "secret.txt"): "outside the allowed directories",
		filepath.Join(allowed, "nope.txt"):                                 "there is no such file",
		allowed:                                                            "it is a directory",
		"report.txt":                                                       "not absolute",
	} {
		r := c.fail("browser_file_upload", map[string]any{"ref": input, "paths": []string{path}}, llmerr.InvalidParams)
		mustContain(t, r.Text, why, allowed)
	}
	r := c.fail("browser_file_upload", map[string]any{"ref": refOf(t, snap, `button "Products"`), "paths": []string{file}}, llmerr.ElementNotInteractable)
	mustContain(t, r.Text, "opened no file chooser")
}

func TestFillForm(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_input.html")})
	snap := c.ok("browser_snapshot", nil)
	fields := []map[string]any{
		{"ref": refOf(t, snap, `textbox "Full name"`), "value": "Ada Lovelace"},
		{"ref": refOf(t, snap, `textbox "Email"`), "value": "ada@example.com"},
		{"ref": refOf(t, snap, `textbox "Bio"`), "value": "Analyst"},
		{"ref": refOf(t, snap, `checkbox "Newsletter"`), "value": "true"},
		{"ref": refOf(t, snap, `radio "Pro"`), "value": "true"},
		{"ref": refOf(t, snap, `combobox "Country"`), "value": "France"},
	}
	res := c.ok("browser_fill_form", map[string]any{"fields": fields})
	mustContain(t, res, "Filled 6 fields:\n- typed into textbox \"Full name\" [ref="+fields[0]["ref"].(string)+`], textbox "Email" [ref=`,
		`- checked checkbox "Newsletter" [ref=`+fields[3]["ref"].(string)+`]`, `- checked radio "Pro" [ref=`,
		`- selected "France" in combobox "Country" [ref=`+fields[5]["ref"].(string)+`]`)
	after := c.ok("browser_snapshot", nil)
	mustContain(t, after, `textbox "Full name" [ref=`, `: "Ada Lovelace"`, `checkbox "Newsletter" [checked]`, `radio "Pro" [checked]`, `combobox "Country" [ref=`, `: "France" [options:`)
	// A bad option in field 2: field 1 is filled, field 2's problem has
	// its plan.
	r := c.fail("browser_fill_form", map[string]any{"fields": []map[string]any{
		{"ref": fields[0]["ref"], "value": "Grace"},
		{"ref": fields[5]["ref"], "value": "Atlantis"},
	}}, llmerr.OptionNotFound)
	mustContain(t, r.Text, "Field 2 of 2 (ref "+fields[5]["ref"].(string)+") failed, fields 1 to 1 were filled", "Atlantis", "France")
	r = c.fail("browser_fill_form", map[string]any{"fields": []map[string]any{{"ref": fields[3]["ref"], "value": "maybe"}}}, llmerr.InvalidParams)
	mustContain(t, r.Text, "use true or false")
	r = c.fail("browser_fill_form", map[string]any{"fields": []map[string]any{{"ref": refOf(t, snap, `button "Products"`), "value": "x"}}}, llmerr.ElementNotInteractable)
	mustContain(t, r.Text, "not a field that takes a value")
	c.fail("browser_fill_form", map[string]any{"fields": []map[string]any{}}, llmerr.InvalidParams)
	c.fail("browser_fill_form", map[string]any{"fields": "name=Ada"}, llmerr.InvalidParams)
}
