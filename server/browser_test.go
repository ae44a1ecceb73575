package server

import (
	"strings"
	"testing"
	"time"

	"github.com/retrace-dev/retrace/llmerr"
)

func TestFormFlow(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	nav := c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	mustContain(t, nav, "Title: <page-content>Sign in</page-content>", "HTTP 200")

	snap := c.ok("browser_snapshot", nil)
	mustContain(t, snap, `heading "Sign in" [level=1]`, `textbox "Email"`, `textbox "Password"`,
		`checkbox "Remember me"`, `button "Sign in"`)
	email := refOf(t, snap, `textbox "Email"`)
	remember := refOf(t, snap, `checkbox "Remember me"`)
	submit := refOf(t, snap, `button "Sign in"`)

	typed := c.ok("browser_type", map[string]any{"ref": email, "text": "ada@example.com"})
	mustContain(t, typed, "Typed 15 characters", `textbox "Email"`)
	c.ok("browser_click", map[string]any{"ref": remember})
	clicked := c.ok("browser_click", map[string]any{"ref": submit, "element": "the sign in button"})
	mustContain(t, clicked, `Title changed: <page-content>Sign in</page-content> → <page-content>Signed in</page-content>`)

	snap2 := c.ok("browser_snapshot", nil)
	mustContain(t, snap2, "Welcome, ada@example.com (remembered)", `[checked]`, `"ada@example.com"`)
	// Refs are stable while the elements stay in the document.
	if got := refOf(t, snap2, `textbox "Email"`); got != email {
		t.Errorf("Email ref changed across snapshots: %s -> %s", email, got)
	}
}

func TestTypeSubmit(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	snap := c.ok("browser_snapshot", nil)
	res := c.ok("browser_type", map[string]any{"ref": refOf(t, snap, `textbox "Email"`), "text": "bob@example.com", "submit": true})
	mustContain(t, res, "Pressed Enter", `<page-content>Signed in</page-content>`)
}

func TestCrossOriginFrameClick(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("frames.html")})
	snap := c.ok("browser_snapshot", nil)
	mustContain(t, snap, `iframe "Same origin"`, `iframe "Cross origin"`, "Same frame on 127.0.0.1",
		"Cross frame on localhost", `button "Cross button"`, `button "Same button"`)

	// The frames are expanded under their iframe lines.
	lines := strings.Split(snap, "\n")
	for i, l := range lines {
		if strings.Contains(l, `button "Cross button"`) {
			indent := len(l) - len(strings.TrimLeft(l, " "))
			if indent == 0 {
				t.Errorf("cross-origin frame content is not nested:\n%s", snap)
			}
			_ = i
		}
	}
	cross := refOf(t, snap, `button "Cross button"`)
	same := refOf(t, snap, `button "Same button"`)
	outer := refOf(t, snap, `button "Outer button"`)
	if cross == same || cross == outer || same == outer {
		t.Fatalf("refs are not unique across frames: %s %s %s", outer, same, cross)
	}
	c.ok("browser_click", map[string]any{"ref": cross})
	c.ok("browser_click", map[string]any{"ref": cross})
	c.ok("browser_click", map[string]any{"ref": same})
	snap2 := c.ok("browser_snapshot", nil)
	mustContain(t, snap2, "Cross clicked 2", "Same clicked 1")
	if got := refOf(t, snap2, `button "Cross button"`); got != cross {
		t.Errorf("cross-origin ref changed across snapshots: %s -> %s", cross, got)
	}
}

func TestStaleRefAfterRerender(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("rerender.html")})
	snap := c.ok("browser_snapshot", nil)
	save := refOf(t, snap, `button "Save"`)
	c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Re-render"`)})

	// The old ref must be rejected, never applied to the new, identical button.
	r := c.fail("browser_click", map[string]any{"ref": save}, llmerr.StaleRef)
	c.golden("STALE_REF-rerender", r)
	mustContain(t, r.Text, save, `button "Save"`, "left the DOM")
	snap2 := c.ok("browser_snapshot", nil)
	mustContain(t, snap2, "Saved 0 times")
	save2 := refOf(t, snap2, `button "Save"`)
	if save2 == save {
		t.Fatalf("the re-rendered button got the old ref %s", save)
	}
	// The error names the new button, so the agent can retry in one call:
	// following the text of the plan saves once.
	mustContain(t, r.Text, `1. browser_click(ref="`+save2+`")`)
	c.follow(r)
	mustContain(t, c.ok("browser_snapshot", nil), "Saved 1 times")
}

func TestStaleRefAfterNavigation(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("nav.html")})
	snap := c.ok("browser_snapshot", nil)
	link := refOf(t, snap, `link "Go to the form"`)
	res := c.ok("browser_click", map[string]any{"ref": link})
	mustContain(t, res, "Page navigated:", "form.html", "Title: <page-content>Sign in</page-content>")

	r := c.fail("browser_click", map[string]any{"ref": link}, llmerr.StaleRef)
	c.golden("STALE_REF-navigated", r)
	mustContain(t, r.Text, "navigated from "+fx.Page("nav.html")+" to "+fx.Page("form.html"))
}

func TestUnknownRefs(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	r := c.fail("browser_click", map[string]any{"ref": "e1"}, llmerr.UnknownRef)
	c.golden("UNKNOWN_REF", r)
	mustContain(t, r.Text, "no snapshot has been taken yet")
	c.ok("browser_snapshot", nil)
	cases := []struct{ ref, cause string }{
		{"e99999", "does not exist yet"},
		{"#login > button", "CSS selector"},
		{"the blue one at the top", "text or a description"},
		{"[ref=e3]", "only the ref itself"},
		{"", "no ref was given"},
	}
	for _, tc := range cases {
		r := c.fail("browser_click", map[string]any{"ref": tc.ref}, llmerr.UnknownRef)
		mustContain(t, r.Text, tc.cause, "browser_snapshot()")
	}
}

func TestDialogsDoNotBlock(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("dialogs.html")})
	snap := c.ok("browser_snapshot", nil)
	for _, tc := range []struct{ button, dialog, after string }{
		{"Alert", `alert dialog <page-content>Hello from alert</page-content> was dismissed`, "after alert"},
		{"Confirm", `confirm dialog <page-content>Delete everything?</page-content> was dismissed`, "confirm returned false"},
		{"Prompt", `prompt dialog <page-content>Your name?</page-content> was dismissed`, "prompt returned null"},
	} {
		start := time.Now()
		res := c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "`+tc.button+`"`)})
		mustContain(t, res, tc.dialog)
		mustContain(t, c.ok("browser_snapshot", nil), tc.after)
		if d := time.Since(start); d > 2500*time.Millisecond {
			// Not a speed assertion: a blocked dialog would hit the 3 s action timeout.
			t.Errorf("%s click took %v; the dialog blocked the action", tc.button, d)
		}
	}
}

func TestDialogAcceptPolicy(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{DialogPolicy: "accept"})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("dialogs.html")})
	snap := c.ok("browser_snapshot", nil)
	res := c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Prompt"`)})
	mustContain(t, res, "was accepted")
	mustContain(t, c.ok("browser_snapshot", nil), "prompt returned Ada")
}

func TestNavigateErrors(t *testing.T) {
	c := connect(t, Config{NavigationTimeout: 1500 * time.Millisecond})
	r := c.fail("browser_navigate", map[string]any{"url": fx.DeadURL + "/"}, llmerr.NavigationFailed)
	c.golden("NAVIGATION_FAILED", r)
	mustContain(t, r.Text, "ERR_CONNECTION_REFUSED", fx.DeadURL, "nothing is listening", `browser_navigate(url=`)

	r = c.fail("browser_navigate", map[string]any{"url": fx.Page("hang")}, llmerr.NavigationTimeout)
	c.golden("NAVIGATION_TIMEOUT", r)
	mustContain(t, r.Text, fx.Page("hang"), "1.5s")

	for _, bad := range []string{"ht tp://x", "", "javascript:alert(1)", "ftp://example.com/", "http://"} {
		r := c.fail("browser_navigate", map[string]any{"url": bad}, llmerr.InvalidParams)
		mustContain(t, r.Text, "not a URL the browser can load")
	}
	// The session still works after every failure.
	mustContain(t, c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")}), "Title: <page-content>Sign in</page-content>")
	// An HTTP error status is a loaded page, reported, not an error.
	mustContain(t, c.ok("browser_navigate", map[string]any{"url": fx.Page("status/404")}), "HTTP 404")
}

func TestNormalizeURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"example.com":          "https://example.com",
		"example.com/a?b=c":    "https://example.com/a?b=c",
		"localhost:3000/x":     "http://localhost:3000/x",
		"127.0.0.1:8080":       "http://127.0.0.1:8080",
		" https://a.test/ ":    "https://a.test/",
		"about:blank":          "about:blank",
		"file:///tmp/x.html":   "file:///tmp/x.html",
		"HTTP://Example.com/P": "http://Example.com/P",
	} {
		got, err := normalizeURL(in)
		if err != nil || got != want {
			t.Errorf("normalizeURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestBrowserCloseAndReopen(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	snap := c.ok("browser_snapshot", nil)
	email := refOf(t, snap, `textbox "Email"`)
	mustContain(t, c.ok("browser_close", nil), "Closed the browser")
	mustContain(t, c.ok("browser_close", nil), "was not open")

	r := c.fail("browser_type", map[string]any{"ref": email, "text": "x"}, llmerr.StaleRef)
	mustContain(t, r.Text, "no longer open", `browser_navigate(url="`+fx.Page("form.html")+`")`)

	// The next call opens a fresh browser; refs are never reused.
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	snap2 := c.ok("browser_snapshot", nil)
	if got := refOf(t, snap2, `textbox "Email"`); got == email {
		t.Errorf("ref %s was reused after browser_close", email)
	}
}

func TestBeforeUnloadDoesNotTrap(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("beforeunload.html")})
	snap := c.ok("browser_snapshot", nil)
	c.ok("browser_type", map[string]any{"ref": refOf(t, snap, `textbox "Note"`), "text": "unsaved"})
	res := c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `link "Leave this page"`)})
	mustContain(t, res, "beforeunload dialog", "was accepted", "Page navigated:", "nav.html")
}

func TestStaleRefNamesCandidates(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.URL + "/table?rows=20"})
	snap := c.ok("browser_snapshot", nil)
	edit := refOf(t, snap, `button "Edit"`)
	c.ok("browser_navigate", map[string]any{"url": fx.URL + "/table?rows=20"})
	// 20 buttons named Edit: the plan names three, each with its row.
	r := c.fail("browser_click", map[string]any{"ref": edit, "element": "first Edit"}, llmerr.StaleRef)
	mustContain(t, r.Text, "the page now has 20 elements named button \"Edit\"",
		`1. browser_click(ref="`, `if it is the one in: row: link "Item 1"`, `3. browser_click(ref="`, "4. browser_snapshot()")
	// Typing keeps its text in the retry step.
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	snap = c.ok("browser_snapshot", nil)
	email := refOf(t, snap, `textbox "Email"`)
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	r = c.fail("browser_type", map[string]any{"ref": email, "text": "ada@example.com"}, llmerr.StaleRef)
	mustContain(t, r.Text, "the page reloaded", `1. browser_type(ref="`, `text="ada@example.com"`)
	// Following the plan's text literally succeeds.
	c.follow(r)
	mustContain(t, c.ok("browser_snapshot", nil), `textbox "Email" [required] [ref=`, `"ada@example.com"`)
}
