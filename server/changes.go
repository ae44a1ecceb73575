package server

import (
	"fmt"
	"strings"

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

// onlySet is said when the only change is the values the action set.
const onlySet = "Nothing else changed on the page."

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
	changed, same, fields := r.eng.ChangedFields(page)
	if !same {
		r.eng.DropBaseline(page)
		return
	}
	// CSS alone can open a :hover menu: the watch cannot see that.
	if !changed && a.c.tool != "browser_hover" {
		res.changes = noChange
		res.hint = "" // the same document: its refs hold (a hash or route change)
		return
	}
	if a.c.snapshot {
		return // the snapshot, taken as the new baseline, shows it all
	}
	var whole shown
	if old := r.eng.Baseline(page); len(fields) > 0 {
		// Only the values of fields changed (the usual result of typing):
		// they alone are read again, not the whole page.
		if now, err := r.eng.PatchFields(page, r.reg, fields); err == nil {
			res.changes, whole = diffReport(old, now, a.srv.cfg.SnapshotBudget, a.set, "")
			if whole != nil {
				res.snapshot = whole.Render(a.srv.inlineView(a.c))
			}
			if res.changes != "" {
				res.hint = ""
			}
			return
		}
	}
	res.changes, whole = r.changesSince(page, a.srv.cfg.SnapshotBudget, a.set)
	if whole != nil {
		res.snapshot = whole.Render(a.srv.inlineView(a.c))
	}
	if res.changes != "" {
		res.hint = ""
	}
}

// wholeInline is the largest tree (in characters) that a result gives whole
// when its changes would take longer to read: a page that small costs the
// agent less inline than another call; a larger one is left to
// browser_snapshot, browser_find and the budget.
const wholeInline = 8000

// changesSince captures page as its new baseline and renders what changed
// since the old one within budget characters, or says why it cannot. When
// the changes would take most of the page to read and the page is
// small, it returns the new capture too, for the result to give whole.
//
// When a modal dialog that the old baseline showed alone has closed, the
// changes are counted from the agent's last read of the page behind it
// (Engine.Behind), whose refs still hold: the agent reads what the dialog
// did to the page, not the page again.
func (r *role) changesSince(page playwright.Page, budget int, set map[string]string) (string, shown) {
	old, behind := r.eng.Baseline(page), r.eng.Behind(page)
	now, err := r.baseline(page)
	switch {
	case err != nil:
		return "(No change report: " + llmerr.FirstLine(err.Error()) + " browser_snapshot() reads the page.)", nil
	case old == nil || now.Doc != old.Doc:
		return hintStaleRefs, nil
	case old.Modal && !now.Modal && behind != nil && behind.Doc == now.Doc:
		closed := "The modal dialog closed"
		if d := modalOf(old.Tree); d != nil && d.Name != "" {
			closed = fmt.Sprintf("The %s %q closed", d.Role, d.Name)
		}
		report, whole := diffReport(behind, now, budget, set, closed+". Changes since the page behind it was last read")
		if report == onlySet || report == noChange {
			report = closed + "; nothing else changed since the page behind it was last read (its refs are unchanged and still valid)."
		} else if whole != nil {
			report = closed + ". " + report
		}
		return report, whole
	}
	return diffReport(old, now, budget, set, "")
}

// modalOf returns the first dialog or alertdialog of a tree, depth first.
func modalOf(nodes []*snapshot.Node) *snapshot.Node {
	for _, n := range nodes {
		if n.Role == "dialog" || n.Role == "alertdialog" {
			return n
		}
		if d := modalOf(n.Children); d != nil {
			return d
		}
	}
	return nil
}

// shown is what a result gives whole of a page that changed: the page
// (*snapshot.Snapshot), or the part of it that holds every change
// (snapshot.Part).
type shown interface {
	Render(snapshot.View) string
}

// diffReport renders the changes from old to now for a result, or, when
// they would take longer to read than the page, says so and returns what
// the result gives whole if it is small: the smallest part of the page
// that holds them all (a list redrawn, a form replaced by its answer), or
// the page. A field of set that shows just what the action put there is
// not reported again. since, when set, says what the changes are counted
// from.
func diffReport(old, now *snapshot.Snapshot, budget int, set map[string]string, since string) (string, shown) {
	ch := snapshot.Diff(old, now)
	if ch.DropSet(set) > 0 && ch.Empty() {
		return onlySet, nil
	}
	if since != "" && ch.Empty() {
		return noChange, nil
	}
	fits := func(n int) bool { return n <= wholeInline && (budget <= 0 || n <= budget) }
	// Changes that take most of the page to read are clearer as the page
	// itself, for about the same cost; or as the part of the page that
	// holds them all, when there is one: the rest of the page, and its
	// refs, are as they were.
	if ch.TooMany || (!ch.Empty() && 3*ch.Size() > 2*ch.Full) {
		if p, ok := ch.Part(); ok && p.Size() < ch.Full && fits(p.Size()) {
			where := p.Head
			if p.In != "" {
				where += ", in " + p.In + ","
			}
			return fmt.Sprintf("Most of %s changed; here it is whole (the rest of the page is unchanged, its refs still valid):", where), p
		}
		if fits(ch.Full) {
			return fmt.Sprintf("The page changed nearly as much as reading it whole would take (%s of its tree); here it is whole:", lines(ch.Lines)), now
		}
		return fmt.Sprintf("The page changed nearly as much as reading it whole would take (%s of its tree): browser_snapshot() reads it.", lines(ch.Lines)), nil
	}
	ch.Since = since
	return ch.Render(budget, true), nil
}

// includeNewPage gives, in the result of an action that loaded another
// document (a link, a form's submit, a reload), that page whole when it is
// small: its refs are all new, so the agent's next call would read it.
// A larger page is left to browser_snapshot, as the hint says.
func (a *acting) includeNewPage() {
	r, res := a.role, a.res
	if a.landed != nil || res.page == nil || (res.page.kind != navigated && res.page.kind != reloaded) ||
		r.tab != a.tab || a.tab.Closed() || len(res.tabs) > 0 || res.unfinished || res.notLoaded ||
		r.eng.Baseline(a.tab.Page) != nil {
		return // not a new document, or one the result already shows
	}
	snap, err := r.baseline(a.tab.Page)
	if err != nil {
		return
	}
	var tree strings.Builder
	snapshot.RenderTree(&tree, snap.Tree, 0)
	budget := a.srv.cfg.SnapshotBudget
	if tree.Len() > wholeInline || (budget > 0 && tree.Len() > budget) {
		return
	}
	res.snapshot = snap.Render(a.srv.inlineView(a.c))
}

// inlineView is view for a page given whole inside an action's result,
// whose own lines have said where the page is.
func (s *Server) inlineView(c *call) snapshot.View {
	v := s.view(c, s.cfg.SnapshotBudget, 0)
	v.Inline = true
	return v
}

// lines is n lines, in words.
func lines(n int) string {
	if n == 1 {
		return "1 line"
	}
	return fmt.Sprintf("%d lines", n)
}
