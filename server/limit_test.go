package server

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retrace-dev/retrace/llmerr"
)

// clientBuffer is the TypeScript SDK's stdio buffer: a result past it
// breaks the client's connection, not just the call.
const clientBuffer = 10 << 20

// A page with one 20 MB text node: browser_snapshot(budget=0) still
// answers in time, under the result limit, with the text cut where it says
// so; and the session goes on.
func TestHugeTextNodeStaysUnderTheLimit(t *testing.T) {
	t.Parallel()
	// The default action timeout, which the answer must keep to.
	c := connect(t, Config{ActionTimeout: 5 * time.Second})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("big-text.html")})
	// within fails the test past the action timeout plus 2 s.
	r, took := c.within("browser_snapshot", map[string]any{"budget": 0}, c.srv.cfg.ActionTimeout)
	if r.IsError {
		// On a loaded machine the page's first layout of 20 MB can outlast
		// the timeout: then the answer is the busy-page plan, in time, and
		// the next snapshot, the layout done, reads the page.
		mustContain(t, r.Text, "[ACTION_TIMEOUT]", "browser_find(")
		r, took = c.within("browser_snapshot", map[string]any{"budget": 0}, c.srv.cfg.ActionTimeout)
		if r.IsError {
			t.Fatalf("browser_snapshot(budget=0) failed twice:\n%s", r.Text)
		}
	}
	snap := r.Text
	t.Logf("browser_snapshot(budget=0) of a 20,000,000-character text: %d bytes in %v", len(snap), took.Round(time.Millisecond))
	if len(snap) > DefaultMaxResultBytes || len(snap) > clientBuffer {
		t.Errorf("the snapshot is %d bytes, over the %d limit", len(snap), DefaultMaxResultBytes)
	}
	mustContain(t, snap, "- paragraph: xxxxxxxxxx", "xxx… [19990000 more characters not shown]\n", `button "After" [ref=`)

	// What else carries the page's text is bounded too: an evaluate result,
	// an exception, a dialog, the console, a title. Each is 2,000,000
	// characters, twice the result limit: 20 MB through Playwright's events
	// takes seconds on a busy machine, which is not what is measured here.
	for _, tc := range []struct {
		name, fn string
		want     []string
	}{
		{"value", "() => document.getElementById('big').textContent.slice(0, 2e6)",
			[]string{"[Cut at 20000 of 2000002 characters: return less, a part (like JSON.stringify(value).slice(20000, 40000))"}},
		{"dialog", "() => { alert('d'.repeat(2e6)); return 1 }",
			// Chromium keeps 10,240 characters of a dialog's message.
			[]string{"Dialog: alert dialog <page-content>ddd", " more characters not shown]</page-content> was dismissed"}},
		{"title", "() => { document.title = 't'.repeat(2e6); return 1 }",
			[]string{"Title changed: <page-content>Big text</page-content> → <page-content>ttt", "… [1999000 more characters not shown]</page-content>"}},
		{"console", "() => { console.log('c'.repeat(2e6)); return 1 }", []string{"Result: <page-content>1</page-content>"}},
	} {
		start := time.Now()
		out := c.ok("browser_evaluate", map[string]any{"function": tc.fn})
		t.Logf("%s: %d bytes in %v", tc.name, len(out), time.Since(start).Round(time.Millisecond))
		if len(out) > 100_000 {
			t.Errorf("%s: %d bytes", tc.name, len(out))
		}
		mustContain(t, out, tc.want...)
	}
	start := time.Now()
	r = c.fail("browser_evaluate", map[string]any{"function": "() => { throw new Error('e'.repeat(2e6)) }"}, llmerr.EvaluationFailed)
	t.Logf("exception: %d bytes in %v", len(r.Text), time.Since(start).Round(time.Millisecond))
	if len(r.Text) > 100_000 || len(fmt.Sprint(r.Structured)) > 100_000 {
		t.Errorf("the exception came back whole: %d bytes of text, %d of structured", len(r.Text), len(fmt.Sprint(r.Structured)))
	}
	mustContain(t, r.Text, "The script threw: <page-content>Error: eee", "e…</page-content>")
	if out := c.ok("browser_console_messages", nil); len(out) > 10_000 || !strings.Contains(out, "[info] ccc") {
		t.Errorf("console: %d bytes:\n%.300s", len(out), out)
	}
	if out := c.ok("browser_tabs", map[string]any{"action": "list"}); len(out) > 10_000 {
		t.Errorf("tabs: %d bytes", len(out))
	}

	// The session goes on.
	c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Before"`)})
	mustContain(t, c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")}), "Title: <page-content>Sign in</page-content>")
}

var readOnCall = regexp.MustCompile(`Read on with browser_snapshot\(budget=0, offset=(\d+)\), or search`)

// Under a small limit, budget=0 is read in parts: each result fits, ends
// saying which call gets the next part, and the parts hold every ref.
func TestSnapshotPagesPastTheResultLimit(t *testing.T) {
	t.Parallel()
	const limit = 20000
	c := connect(t, Config{MaxResultBytes: limit, SnapshotBudget: 50000})
	c.ok("browser_navigate", map[string]any{"url": fx.URL + "/table?rows=300"})
	refs := map[string]bool{}
	var args map[string]any = map[string]any{"budget": 0}
	for parts := 1; ; parts++ {
		if parts > 30 {
			t.Fatal("the offsets do not advance")
		}
		out := c.ok("browser_snapshot", args)
		if len(out) > limit {
			t.Fatalf("part %d is %d bytes, over the %d limit", parts, len(out), limit)
		}
		for _, m := range regexp.MustCompile(`\[ref=(e\d+)\]`).FindAllStringSubmatch(out, -1) {
			refs[m[1]] = true
		}
		m := readOnCall.FindStringSubmatch(out)
		if m == nil {
			if strings.Contains(out, "[Cut at") {
				t.Fatalf("part %d is cut without the call that reads on:\n%s", parts, out[max(0, len(out)-800):])
			}
			t.Logf("%d parts", parts)
			break
		}
		mustContain(t, out, "</page-content>\n[Cut to fit the result limit:")
		n, _ := strconv.Atoi(m[1])
		args = map[string]any{"budget": 0, "offset": n}
	}
	// 300 rows of a link, a checkbox and a button.
	if len(refs) != 900 {
		t.Errorf("the parts hold %d refs, want 900", len(refs))
	}
}

// browser_find with a limit past what a result holds keeps what fits.
func TestFindStaysUnderTheResultLimit(t *testing.T) {
	t.Parallel()
	const limit = 10000
	c := connect(t, Config{MaxResultBytes: limit})
	c.ok("browser_navigate", map[string]any{"url": fx.URL + "/table?rows=300"})
	out := c.ok("browser_find", map[string]any{"role": "button", "limit": 1000})
	if len(out) > limit {
		t.Errorf("%d bytes, over the %d limit", len(out), limit)
	}
	mustContain(t, out, "300 matches for role=\"button\"", "<page-content>\n- button \"Edit\"", "</page-content>\n[", "more not shown: the result limit is reached")
}
