package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/snapshot"
)

type snapshotArgs struct {
	Ref    string   `json:"ref,omitempty" jsonschema:"Only this element's subtree (an iframe's ref: its content)"`
	Budget *int     `json:"budget,omitempty" jsonschema:"Most characters of tree to return; 0: no limit"`
	Offset int      `json:"offset,omitempty" jsonschema:"Start at this line of the tree, to read on after a cut snapshot"`
	Role   roleName `json:"role,omitempty" jsonschema:"Role to act as (default: current)"`
}

type findArgs struct {
	Text  string `json:"text,omitempty" jsonschema:"Part of the element's name, value or text (case-insensitive)"`
	Role  string `json:"role,omitempty" jsonschema:"Exact role, like button, link, textbox, checkbox, row"`
	Name  string `json:"name,omitempty" jsonschema:"Part of the accessible name (case-insensitive)"`
	Limit int    `json:"limit,omitempty" jsonschema:"Maximum matches to return (default 20)"`
	// role means the ARIA role here, so the user to act as is asRole.
	AsRole roleName `json:"asRole,omitempty" jsonschema:"Role to act as (default: current)"`
}

func (s *Server) addSnapshotTools() {
	addTool(s, &mcp.Tool{
		Name:        "browser_snapshot",
		Description: "The current page as a compact accessibility tree, iframes inline. Elements you can act on carry refs (e12) for the other tools. Large pages are cut; the text says how to read on.",
		Annotations: &mcp.ToolAnnotations{Title: "Page snapshot", ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, s.snapshot)
	addTool(s, &mcp.Tool{
		Name:        "browser_find",
		Description: "Find elements by text, role or name without reading the whole tree: each match with its ref and container.",
		Annotations: &mcp.ToolAnnotations{Title: "Find elements", ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, s.find)
}

func (s *Server) snapshot(ctx context.Context, c *call, in snapshotArgs) (*result, error) {
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
		snap, err = r.eng.Capture(tab.Page, r.reg)
	}
	if err != nil {
		return nil, snapshotError(c.tool, tab.Page.URL(), err)
	}
	text := snap.Render(snapshot.View{Budget: budget, Offset: in.Offset})
	var extra strings.Builder
	for _, d := range tab.TakeDialogs() {
		extra.WriteString("\nDialog: " + d.String())
	}
	return &result{text: text + extra.String()}, nil
}

func (s *Server) find(ctx context.Context, c *call, in findArgs) (*result, error) {
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
	snap, err := r.eng.Capture(tab.Page, r.reg)
	if err != nil {
		return nil, snapshotError(c.tool, tab.Page.URL(), err)
	}
	matches, total := snap.Find(snapshot.Query{Text: in.Text, Role: in.Role, Name: in.Name}, limit)
	var b strings.Builder
	what := describeQuery(in)
	if total == 0 {
		fmt.Fprintf(&b, "No element matches %s on %s.\n", what, snap.URL)
		// What to try, as calls: the page may still be loading it, or
		// call it something else.
		b.WriteString("If it should be there:\n")
		n := 1
		if want := firstNonEmpty(in.Name, in.Text); want != "" {
			fmt.Fprintf(&b, "%d. browser_wait_for(text=%q) — if the page is still loading it\n", n, want)
			n++
		}
		fmt.Fprintf(&b, "%d. browser_snapshot() — read the page: it may use other words, or show it after another step", n)
		return &result{text: b.String()}, nil
	}
	fmt.Fprintf(&b, "%d match%s for %s on %s:\n", total, plural(total, "es"), what, snap.URL)
	for _, m := range matches {
		b.WriteString("- " + m.Line)
		if m.Context != "" {
			b.WriteString("  (in: " + m.Context + ")")
		}
		b.WriteString("\n")
	}
	if total > len(matches) {
		fmt.Fprintf(&b, "[%d more not shown: narrow the search with role= or name=, or raise limit=.]\n", total-len(matches))
	}
	if snap.Cut {
		b.WriteString("[The page is too large to search in time; matches past the point where time ran out are missing.]\n")
	}
	return &result{text: strings.TrimRight(b.String(), "\n")}, nil
}

func describeQuery(in findArgs) string {
	var parts []string
	if in.Text != "" {
		parts = append(parts, fmt.Sprintf("text=%q", in.Text))
	}
	if in.Role != "" {
		parts = append(parts, fmt.Sprintf("role=%q", in.Role))
	}
	if in.Name != "" {
		parts = append(parts, fmt.Sprintf("name=%q", in.Name))
	}
	return strings.Join(parts, ", ")
}

func plural(n int, suffix string) string {
	if n == 1 {
		return ""
	}
	return suffix
}

// snapshotError explains a snapshot that could not be taken.
func snapshotError(tool, url string, err error) error {
	if errors.Is(err, snapshot.ErrPageBusy) {
		return &llmerr.Error{Code: llmerr.ActionTimeout, Tool: tool, URL: url, Err: err,
			Message: "The page did not answer the snapshot in time.",
			Cause:   "its main thread is busy (a script that does not yield) or the page is enormous",
			Actions: []llmerr.Action{
				llmerr.Call("browser_find", "search for what you need instead of reading everything", llmerr.A("text", "...")),
				llmerr.Call("browser_navigate", "reload the page if it stays stuck", llmerr.A("url", url)),
			}}
	}
	return llmerr.Classify(err, llmerr.Situation{Tool: tool, URL: url})
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
