package server

import (
	"testing"
	"time"
)

func TestLateTabBecomesCurrent(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_late-tab.html?key=late-tab-wait")})
	snap := c.ok("browser_snapshot", nil)
	go1 := refOf(t, snap, `button "Open the form when ready"`)

	// The click returns while the server holds its request: no tab yet.
	held := fx.Held("late-tab-wait")
	res := c.ok("browser_click", map[string]any{"ref": go1})
	<-held
	if containsAny(res, "Opened a new tab") {
		t.Fatalf("the tab opened before the click returned; the test needs it later:\n%s", res)
	}
	// The server answers, the page opens its popup; a wait for text that is
	// only there finds it in the new tab, which is now current.
	fx.Release("late-tab-wait")
	res = c.ok("browser_wait_for", map[string]any{"text": "Remember me"})
	mustContain(t, res, "The page opened a new tab 1 after the last call returned: "+fx.Page("form.html"),
		`Tab 1 is now the current tab, and this call ran in it; browser_tabs(action="select", index=0) goes back.`,
		`The text "Remember me" appeared`)
	mustContain(t, c.ok("browser_snapshot", nil), `button "Sign in"`)

	// Back on the first page, a snapshot taken once the late popup has
	// loaded shows the popup, and says so.
	c.ok("browser_tabs", map[string]any{"action": "select", "index": 0})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_late-tab.html?key=late-tab-snap")})
	held = fx.Held("late-tab-snap")
	arrived := fx.Arrived("/form.html")
	c.ok("browser_click", map[string]any{"ref": refOf(t, c.ok("browser_snapshot", nil), `button "Open the form when ready"`)})
	<-held
	fx.Release("late-tab-snap")
	<-arrived
	// The popup's page event may reach the server a moment after its
	// request reached the fixture: a wait for its text takes it up.
	res = c.ok("browser_wait_for", map[string]any{"text": "Remember me"})
	mustContain(t, res, "The page opened a new tab 2 after the last call returned: "+fx.Page("form.html"),
		`browser_tabs(action="select", index=0) goes back`)
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if len(sub) > 0 && len(s) >= len(sub) {
			for i := 0; i+len(sub) <= len(s); i++ {
				if s[i:i+len(sub)] == sub {
					return true
				}
			}
		}
	}
	return false
}

func TestReadAfterActionNamesItsPendingRequests(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_late-tab.html?key=late-pending")})
	held := fx.Held("late-pending")
	c.ok("browser_click", map[string]any{"ref": refOf(t, c.ok("browser_snapshot", nil), `button "Open the form when ready"`)})
	<-held
	// The click's request is still held: the next read says so, once.
	snap := c.ok("browser_snapshot", nil)
	mustContain(t, snap, "Requests started since the last action are still running: "+fx.Page("hold/late-pending"),
		"browser_wait_for(time=2) waits")
	if again := c.ok("browser_snapshot", nil); containsAny(again, "still running") {
		t.Errorf("the second read said it again:\n%s", again)
	}
	fx.Release("late-pending")
	c.ok("browser_wait_for", map[string]any{"text": "Remember me"})
}

// A page that says it is loading gets, in its snapshot, the wait that
// outlasts the message; followed, the element it loaded is there.
func TestSnapshotNamesTheWaitForALoadingPage(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{ActionTimeout: 3 * time.Second})
	c.ok("browser_navigate", map[string]any{"url": fx.URL + "/eval/_pay-later.html?delay=1200"})
	snap := c.ok("browser_snapshot", nil)
	mustContain(t, snap, `The page says it is still at work ("Loading payment options")`,
		`browser_wait_for(textGone="Loading payment options") waits until that has gone.`)
	if containsAny(snap, `button "Pay"`) {
		t.Fatalf("Pay is already there; the test needs it late:\n%s", snap)
	}
	c.ok("browser_wait_for", map[string]any{"textGone": "Loading payment options"})
	snap = c.ok("browser_snapshot", nil)
	mustContain(t, snap, `button "Pay"`)
	if containsAny(snap, "still at work") {
		t.Errorf("the note stayed after the message went:\n%s", snap)
	}
}
