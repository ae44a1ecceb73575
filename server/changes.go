package server

import (
	"fmt"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/snapshot"
)

// Change reports. After an action that leaves the tab on its document, the
// result says what the action did to the page since the agent last read
// that tab whole (a snapshot, or the previous change report), in the
// snapshot's own lines, instead of the agent reading the page again. The
// engine's watch (snapshot.Engine.Changed) makes "nothing changed" one
// round trip per frame; otherwise the page is captured again and diffed.

// noChange is said when the watch saw nothing change.
const noChange = "No change in the page's elements since the last snapshot."

// reportChanges adds the change report of the op's action to the result,
// and makes the new capture the tab's baseline. navigated says the tab
// loaded another document: the page-change lines say so, and the refs of
// the old one are stale, so there is no report.
func (a *acting) reportChanges(navigated bool) {
	r, tab, res := a.role, a.tab, a.res
	page := tab.Page
	if tab.Closed() || r.eng.Baseline(page) == nil {
		return
	}
	if navigated {
		r.eng.DropBaseline(page)
		return
	}
	changed, same := r.eng.Changed(page)
	if !same {
		r.eng.DropBaseline(page)
		return
	}
	// CSS alone can open a :hover menu: the watch cannot see that.
	if !changed && a.c.tool != "browser_hover" {
		res.changes = noChange
		return
	}
	if a.c.snapshot {
		return // the snapshot, taken as the new baseline, shows it all
	}
	res.changes = r.changesSince(page, a.srv.cfg.SnapshotBudget)
	if res.changes != "" {
		res.hint = ""
	}
}

// changesSince captures page as its new baseline and renders what changed
// since the old one within budget characters, or says why it cannot.
func (r *role) changesSince(page playwright.Page, budget int) string {
	old := r.eng.Baseline(page)
	now, err := r.baseline(page)
	switch {
	case err != nil:
		return "(No change report: " + llmerr.FirstLine(err.Error()) + " browser_snapshot() reads the page.)"
	case old == nil || now.Doc != old.Doc:
		return hintStaleRefs
	}
	return diffReport(old, now, budget)
}

// diffReport renders the changes from old to now for a result.
func diffReport(old, now *snapshot.Snapshot, budget int) string {
	ch := snapshot.Diff(old, now)
	if ch.TooMany || (!ch.Empty() && ch.Size() > ch.Full) {
		return fmt.Sprintf("The page changed more than reading it whole would take (%d lines of its tree): browser_snapshot() reads it.", ch.Lines)
	}
	return ch.Render(budget, true)
}
