package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/retrace-dev/retrace/browser"
)

// What an action does after it returned. An action's new tab becomes the
// current one (reportNewTabs), since that is where the action led. A page
// often opens it only after the action has returned: a wallet or sign-in
// popup opened with window.open once a request answers. Such a tab is
// taken up by the role's next call that reads or waits on the current tab,
// the same way, and that call's result says so with the call that goes
// back. Likewise a search that answers slowly: the next read says which
// requests started since the action are still running, so the page may
// still change.

// lateTabPending reports whether the context opened a page that no call
// has taken up yet.
func (r *role) lateTabPending() bool {
	r.popMu.Lock()
	defer r.popMu.Unlock()
	return slices.ContainsFunc(r.opened, func(t *browser.Tab) bool { return !t.Closed() })
}

// followLateTabs takes up the tabs opened since the role's last call and
// makes the newest the current tab, noting it for the result. It returns
// the current tab. Call with mu held.
func (r *role) followLateTabs(ctx context.Context) *browser.Tab {
	if r.bctx == nil || r.tab == nil || !r.lateTabPending() {
		return r.tab
	}
	fresh := r.adopt()
	if len(fresh) == 0 {
		return r.tab
	}
	prev := r.indexOf(r.tab)
	var lines []string
	deadline := time.Now().Add(time.Second)
	for _, t := range fresh {
		st := popupState(ctx, t, deadline)
		lines = append(lines, fmt.Sprintf("The page opened a new tab %d after the last call returned: %s\n%s", r.indexOf(t), st.url, titleLine(st.title)))
	}
	r.tab = fresh[len(fresh)-1]
	line := fmt.Sprintf("Tab %d is now the current tab, and this call ran in it", r.indexOf(r.tab))
	if prev >= 0 {
		line += fmt.Sprintf("; browser_tabs(action=\"select\", index=%d) goes back", prev)
	}
	r.note(strings.Join(append(lines, line+"."), "\n"))
	return r.tab
}

// maxPendingShown bounds the requests a note names.
const maxPendingShown = 3

// notePending notes, for the role's first read after an action, the
// requests started since that action in its tab that are still running:
// a page read now may change when they answer. Call with mu held.
func (r *role) notePending(tab *browser.Tab) {
	acted, mark := r.acted, r.actedMark
	r.acted = nil
	if acted == nil || acted != tab || tab.Closed() {
		return
	}
	pending := tab.Pending(mark)
	if len(pending) == 0 {
		return
	}
	shown := pending[:min(maxPendingShown, len(pending))]
	s := "Requests started since the last action are still running: " + strings.Join(shown, ", ")
	if n := len(pending) - len(shown); n > 0 {
		s += fmt.Sprintf(" and %d more", n)
	}
	r.note(s + ". The page may still change when they answer (results, a popup): browser_wait_for(time=2) waits, then read it again.")
}
