package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/samber/lo"

	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/snapshot"
)

type snapshotArgs struct {
	Ref     string `json:"ref,omitempty" jsonschema:"Only this element's subtree (an iframe's ref: its content)"`
	Budget  *int   `json:"budget,omitempty" jsonschema:"Most characters of tree to return; 0: no limit"`
	Offset  int    `json:"offset,omitempty" jsonschema:"Start at this line, to read on after a cut"`
	Changes bool   `json:"changes,omitempty" jsonschema:"Only what changed since the last snapshot"`
	roleArg
}

type findArgs struct {
	Text  string `json:"text,omitempty" jsonschema:"Part of its name, value or text (any case)"`
	Role  string `json:"role,omitempty" jsonschema:"Exact role, like button or row"`
	Name  string `json:"name,omitempty" jsonschema:"Part of the accessible name"`
	Limit int    `json:"limit,omitempty" jsonschema:"Most matches (default 20)"`
	// role means the ARIA role here, so the user to act as is asRole.
	asRoleArg
}

func (s *Server) addSnapshotTools() {
	addTool(s, def("browser_snapshot", "Page snapshot", readOnly, "The page as an accessibility tree, iframes inline; elements to act on carry refs (e12). A large page is cut, saying how to read on."), s.snapshot)
	addTool(s, withOutput(def("browser_find", "Find elements", readOnly, "Find elements by text, role or name, with refs; scrolls virtualised lists to find them."), "matches", "total"), s.find)
}

func (s *Server) snapshot(ctx context.Context, c *call, in snapshotArgs) (*response, error) {
	budget := s.cfg.SnapshotBudget
	if in.Budget != nil {
		budget = *in.Budget
	}
	if budget < 0 || in.Offset < 0 {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool,
			Message: "budget and offset cannot be negative.",
			Cause:   fmt.Sprintf("got budget=%d, offset=%d", budget, in.Offset),
			Actions: []llmerr.Action{llmerr.Call(c.tool, "without them, or with positive values")}}
	}
	r, tab, unlock, err := c.lockTab()
	if err != nil {
		return nil, err
	}
	defer unlock()
	var snap *snapshot.Snapshot
	if in.Ref != "" {
		rec, lerr := r.reg.Lookup(in.Ref)
		if lerr != nil {
			return nil, lerr
		}
		snap, err = r.eng.CaptureSubtree(tab.Page, r.reg, rec)
	} else {
		if in.Changes && in.Offset == 0 {
			if changed, same := r.eng.Changed(tab.Page); same {
				res := &response{dialogs: tab.TakeDialogs(), changes: noChange}
				if changed {
					var whole shown
					if res.changes, whole = r.changesSince(tab.Page, budget, nil); whole != nil {
						res.addDid("%s", res.changes)
						res.changes = ""
						res.addBody(whole.Render(s.view(c, budget, 0)))
					}
				}
				return res, nil
			}
		}
		snap, err = r.baseline(tab.Page)
		if err != nil && llmerr.Classify(err, llmerr.Situation{}).Code == llmerr.StaleRef {
			// The document navigated under the walk (a script redirect, a
			// page that reloads itself): read the one it went to.
			snap, err = r.baseline(tab.Page)
		}
	}
	if err != nil {
		return nil, err
	}
	res := &response{dialogs: tab.TakeDialogs()}
	if in.Changes && in.Ref == "" && in.Offset == 0 {
		res.addDid("No earlier snapshot of this document to compare with: the whole page follows.")
	}
	res.addBody(snap.Render(s.view(c, budget, in.Offset)))
	if in.Ref == "" && in.Offset == 0 {
		res.notes = append(res.notes, busyNote(snap)...)
	}
	return res, nil
}

// busyNote says, when the page shows that it is still at work ("Loading
// payment options…"), which wait outlasts it: what the agent came for is
// often not on the page until that text goes.
func busyNote(snap *snapshot.Snapshot) []string {
	busy := strings.TrimRight(snap.Busy(), " .…")
	if busy == "" {
		return nil
	}
	return []string{fmt.Sprintf("The page says it is still at work (%q): what it loads may not be shown yet. browser_wait_for(textGone=%q) waits until that has gone.", busy, busy)}
}

// view is how a snapshot is shown to call c: fenced, within the result
// limit, and cut with the call that reads on in the call's role (and with
// its budget, when that is not the default).
func (s *Server) view(c *call, budget, offset int) snapshot.View {
	var again []llmerr.Arg
	if budget != s.cfg.SnapshotBudget {
		again = append(again, llmerr.A("budget", budget))
	}
	if c.roleName != "" {
		again = append(again, llmerr.A("role", c.roleName))
	}
	return snapshot.View{Budget: budget, Offset: offset, Fence: true, Max: s.outputRoom(), Again: again}
}

// outputRoom is how much of a result a tool's own output (a snapshot, a
// list) may take: the result limit, less room for the sections around it
// (what was done, dialogs, warnings).
func (s *Server) outputRoom() int {
	return s.cfg.MaxResultBytes - min(16<<10, s.cfg.MaxResultBytes/4)
}

func (s *Server) find(ctx context.Context, c *call, in findArgs) (*response, error) {
	if in.Text == "" && in.Role == "" && in.Name == "" {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool,
			Message: "browser_find needs at least one of text, role or name.",
			Cause:   "all three were empty",
			Actions: []llmerr.Action{llmerr.Call(c.tool, "for example", llmerr.A("role", "button"), llmerr.A("name", "Save"))}}
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 20
	}
	r, tab, unlock, err := c.lockTab()
	if err != nil {
		return nil, err
	}
	defer unlock()
	snap, err := r.capture(tab.Page)
	if err != nil {
		return nil, err
	}
	q := snapshot.Query{Text: in.Text, Role: in.Role, Name: in.Name}
	matches, total := snap.Find(q, limit)
	res := &response{}
	what := describeQuery(in)
	var searched []string
	if total == 0 {
		// Not in the DOM may mean not rendered yet: a list that renders
		// only the rows in view is scrolled for it.
		var found *scrolledFind
		if found, searched = r.scrollFind(ctx, tab, q); found != nil {
			snap = found.snap
			matches, total = snap.Find(q, limit)
			res.addDid("Scrolled %s %s until it appeared: the page renders only the part of it in view. It stays scrolled there, so the refs below work.", found.where, scrolledBy(found.by))
		}
	}
	if total == 0 {
		res.addDid("No element matches %s on %s.", what, snap.URL)
		if len(searched) > 0 {
			res.addDid("It is not in %s either, scrolled from its top down (it renders only the part in view).", strings.Join(searched, " or "))
		}
		// What to try, as calls: the page may still be loading it, or
		// call it something else.
		steps := []string{"If it should be there:"}
		if want := firstNonEmpty(in.Name, in.Text); want != "" {
			steps = append(steps, fmt.Sprintf("%d. browser_wait_for(text=%q) — if the page is still loading it", len(steps), want))
		}
		steps = append(steps, fmt.Sprintf("%d. browser_snapshot() — read the page: it may use other words, or show it after another step", len(steps)))
		res.addBody(steps...)
		res.data = map[string]any{"matches": []map[string]any{}, "total": 0}
		return res, nil
	}
	res.addDid("%d match%s for %s on %s:", total, plural(total, "es"), what, snap.URL)
	// A limit past what a result holds is cut like a history list.
	lines, over := fitLines(matchLines(matches), s.outputRoom(), false)
	res.addBody(fenceBlock(lines)...)
	found := make([]map[string]any, len(matches))
	for i, m := range matches {
		found[i] = map[string]any{"ref": m.Ref, "line": m.Line, "context": m.Context}
	}
	res.data = map[string]any{"matches": found, "total": total}
	switch {
	case over > 0:
		res.addBody(fmt.Sprintf("[%d more not shown: the result limit is reached; narrow the search with role= or name=.]", total-len(lines)))
	case total > len(matches):
		res.addBody(fmt.Sprintf("[%d more not shown: narrow the search with role= or name=, or raise limit=.]", total-len(matches)))
	}
	if snap.Cut {
		res.addBody("[The page is too large to search in time; matches past the point where time ran out are missing.]")
	}
	return res, nil
}

// matchLines renders matches as list lines, each with its container.
func matchLines(ms []snapshot.Match) []string {
	return lo.Map(ms, func(m snapshot.Match, _ int) string {
		if m.Context != "" {
			return "- " + m.Line + "  (in: " + m.Context + ")"
		}
		return "- " + m.Line
	})
}

func describeQuery(in findArgs) string {
	return strings.Join(lo.Map(given("text", in.Text, "role", in.Role, "name", in.Name),
		func(a llmerr.Arg, _ int) string { return fmt.Sprintf("%s=%q", a.Name, a.Value) }), ", ")
}
