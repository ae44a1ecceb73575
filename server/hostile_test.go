package server

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/retrace-dev/retrace/llmerr"
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
	// The bound of every hostile page: the call's timeout (the default
	// action timeout here) plus 2 s.
	if bound := 5*time.Second + 2*time.Second; took > bound {
		t.Errorf("the click took %v, past its timeout plus 2 s (%v)", took.Round(time.Millisecond), bound)
	}
	// Popups still opening when the call answers are closed as they open.
	if !regexp.MustCompile(`The page opened \d+ tabs at once; the \d+ past the first 10 were closed`).MatchString(r) {
		t.Errorf("the storm is not reported:\n%s", r)
	}
	mustContain(t, r, "Opened a new tab 10:")
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

// A page whose main thread never yields: every call returns within its
// timeout plus 2 s, and following the plan gets the agent off the page.
func TestFrozenPageIsBounded(t *testing.T) {
	t.Parallel()
	const action, navigation = 2 * time.Second, 4 * time.Second
	c := connect(t, Config{ActionTimeout: action, NavigationTimeout: navigation})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("busy.html")})
	ref := refOf(t, c.ok("browser_snapshot", nil), `button "Freeze"`)
	var last reply
	for _, step := range []struct {
		tool  string
		args  map[string]any
		bound time.Duration
	}{
		{"browser_click", map[string]any{"ref": ref}, action}, // freezes it
		{"browser_click", map[string]any{"ref": ref}, action},
		{"browser_snapshot", nil, action},
		{"browser_evaluate", map[string]any{"function": "() => 1"}, action},
	} {
		done := make(chan reply, 1)
		start := time.Now()
		go func() { done <- c.callAsync(step.tool, step.args) }()
		select {
		case last = <-done:
		case <-time.After(step.bound + 10*time.Second):
			t.Fatalf("%s on a frozen page did not return", step.tool)
		}
		took := time.Since(start)
		t.Logf("%s: %v, %.70q", step.tool, took.Round(time.Millisecond), last.Text)
		if !last.IsError {
			t.Errorf("%s on a frozen page succeeded:\n%s", step.tool, last.Text)
		}
		if took > step.bound+2*time.Second {
			t.Errorf("%s took %v, beyond its %v timeout plus 2 s", step.tool, took, step.bound)
		}
	}
	// The last plan, followed as written, leaves the page: its tab is
	// replaced, within the navigation timeout.
	mustContain(t, last.Text, "1. browser_navigate(")
	c.follow(last)
	r, _ := c.within("browser_navigate", map[string]any{"url": fx.Page("form.html")}, navigation)
	mustContain(t, r.Text, "form.html (HTTP 200)")
}

// bounded makes a call and fails the test when it takes longer than bound
// plus 2 s; a call that never returns ends the test.
func (c *client) within(tool string, args map[string]any, bound time.Duration) (reply, time.Duration) {
	c.t.Helper()
	done := make(chan reply, 1)
	start := time.Now()
	go func() { done <- c.callAsync(tool, args) }()
	var r reply
	select {
	case r = <-done:
	case <-time.After(bound + 10*time.Second):
		c.t.Fatalf("%s did not return", tool)
	}
	took := time.Since(start)
	c.t.Logf("%s: %v, error=%v, %.90q", tool, took.Round(time.Millisecond), r.IsError, r.Text)
	if took > bound+2*time.Second {
		c.t.Errorf("%s took %v, beyond its %v timeout plus 2 s", tool, took, bound)
	}
	return r, took
}

// Hostile pages: each call returns within its timeout plus 2 s, and the
// session's next call on an ordinary page works.
func TestHostilePagesAreBounded(t *testing.T) {
	const action, navigation = 2 * time.Second, 4 * time.Second
	for _, tc := range []struct {
		name, page, button string
	}{
		{"alert loop", "_alert-loop.html", "Start alerts"},
		{"navigates itself every 50 ms", "_self-nav.html", "Stay"},
		{"requests never go idle", "_never-idle.html", "Count"},
		{"500,000 nodes", "huge.html?nodes=500000", "First button"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connect(t, Config{ActionTimeout: action, NavigationTimeout: navigation})
			c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")}) // the browser is up
			r, _ := c.within("browser_navigate", map[string]any{"url": fx.Page(tc.page)}, navigation)
			if r.IsError {
				// A page too slow to build within the timeout: an error
				// with a plan is fine, a hang is not. It gets time to finish.
				mustContain(t, r.Text, "Action Required:")
				c.ok("browser_wait_for", map[string]any{"time": 5})
			}
			snap, _ := c.within("browser_snapshot", nil, action)
			if ref := refIn(snap.Text, `button "`+tc.button+`"`); ref != "" {
				c.within("browser_click", map[string]any{"ref": ref}, action)
			}
			c.within("browser_snapshot", nil, action)
			c.within("browser_evaluate", map[string]any{"function": "() => document.title"}, action)
			r, _ = c.within("browser_navigate", map[string]any{"url": fx.Page("form.html")}, navigation)
			if r.IsError {
				t.Logf("the plan:\n%s", r.Text)
				c.follow(r)
			}
			mustContain(t, c.ok("browser_snapshot", nil), `textbox "Email"`)
		})
	}
}

// navigate waits for the page's load event when the page's own site holds
// it, not when only another site's frame does; a result on a page that has
// not loaded says so.
func TestNavigateWaitsForLoad(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	const notLoaded = "has not fired its load event"
	// A slow frame of the page's own site: navigate waits for it.
	r := c.ok("browser_navigate", map[string]any{"url": fx.Page("_load-frame.html?frame=/slow?ms=1500")})
	if strings.Contains(r, notLoaded) {
		t.Errorf("a first-party frame of 1.5 s was not waited for:\n%s", r)
	}
	snap := c.ok("browser_snapshot", nil)
	mustContain(t, c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Buy"`)}), "Clicked")
	mustContain(t, c.ok("browser_snapshot", nil), "Bought")

	// Another site's frame of 6 s: navigate does not wait, and says the
	// page has not loaded.
	start := time.Now()
	r = c.ok("browser_navigate", map[string]any{"url": fx.Page("_load-frame.html?frame=" + fx.OtherURL + "/slow?ms=6000")})
	took := time.Since(start)
	mustContain(t, r, notLoaded)
	if took > 4*time.Second {
		t.Errorf("navigate waited %v for another site's frame", took)
	}
	snap = c.ok("browser_snapshot", nil)
	mustContain(t, c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Buy"`)}), notLoaded)
	c.ok("browser_wait_for", map[string]any{"time": 6})
	r = c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Buy"`)})
	if strings.Contains(r, notLoaded) {
		t.Errorf("the page loaded, but the click says it has not:\n%s", r)
	}
	mustContain(t, c.ok("browser_snapshot", nil), "Bought")
}

// No call hangs on a page whose main thread never yields: every tool that
// reaches the page returns within its timeout plus 2 s, and the session's
// next page works.
func TestNoToolHangsOnAFrozenPage(t *testing.T) {
	t.Parallel()
	const action, navigation = 2 * time.Second, 4 * time.Second
	c := connect(t, Config{ActionTimeout: action, NavigationTimeout: navigation})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_busy-form.html")})
	snap := c.ok("browser_snapshot", nil)
	name, size, gift := refOf(t, snap, `textbox "Name"`), refOf(t, snap, `combobox "Size"`), refOf(t, snap, `checkbox "Gift"`)
	c.within("browser_click", map[string]any{"ref": refOf(t, snap, `button "Freeze"`)}, action)
	slow := map[string]bool{"browser_navigate_back": true, "browser_navigate_forward": true, "browser_reload": true, "browser_tabs": true}
	for _, step := range []struct {
		tool string
		args map[string]any
	}{
		{"browser_snapshot", nil},
		{"browser_click", map[string]any{"ref": gift}},
		{"browser_type", map[string]any{"ref": name, "text": "Ada"}},
		{"browser_type", map[string]any{"ref": name, "text": "Ada", "submit": true}},
		{"browser_hover", map[string]any{"ref": gift}},
		{"browser_press_key", map[string]any{"key": "Tab"}},
		{"browser_select_option", map[string]any{"ref": size, "values": []string{"Large"}}},
		{"browser_fill_form", map[string]any{"fields": []map[string]any{{"ref": name, "value": "Ada"}}}},
		{"browser_drag", map[string]any{"startRef": gift, "endRef": name}},
		{"browser_evaluate", map[string]any{"function": "() => 1"}},
		{"browser_find", map[string]any{"text": "Gift"}},
		{"browser_inspect", map[string]any{"ref": gift}},
		{"browser_generate_locator", map[string]any{"ref": gift}},
		{"browser_take_screenshot", nil},
		{"browser_wait_for", map[string]any{"text": "never there"}},
		{"browser_console_messages", nil},
		{"browser_network_requests", nil},
		{"browser_save_auth", nil},
		{"browser_handle_dialog", map[string]any{"accept": true}},
		{"browser_tabs", map[string]any{"action": "list"}},
		{"browser_tabs", map[string]any{"action": "select", "index": 0}},
		{"browser_navigate_back", nil},
		{"browser_reload", nil}, // replaces the stuck tab
	} {
		bound := action
		if slow[step.tool] {
			bound = navigation
		}
		c.within(step.tool, step.args, bound)
	}
	// A stuck tab closes too.
	c.within("browser_click", map[string]any{"ref": refOf(t, c.ok("browser_snapshot", nil), `button "Freeze"`)}, action)
	c.within("browser_tabs", map[string]any{"action": "close"}, action)
	r, _ := c.within("browser_navigate", map[string]any{"url": fx.Page("form.html")}, navigation)
	mustContain(t, r.Text, "form.html (HTTP 200)")
}

// A script whose promise never settles: evaluate returns at its timeout
// with a plan, and the page, which still answers, serves the next call.
func TestEvaluateThatNeverSettles(t *testing.T) {
	t.Parallel()
	const action = 2 * time.Second
	c := connect(t, Config{ActionTimeout: action})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	r, _ := c.within("browser_evaluate", map[string]any{"function": "() => new Promise(() => {})"}, action)
	if !r.IsError || r.code() != string(llmerr.ActionTimeout) {
		t.Fatalf("a promise that never settles: code %q:\n%s", r.code(), r.Text)
	}
	mustContain(t, r.Text, "Action Required:")
	mustContain(t, c.ok("browser_evaluate", map[string]any{"function": "() => document.title"}), "Sign in")
}
