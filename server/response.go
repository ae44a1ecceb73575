package server

import (
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/failurelog"
	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/snapshot"
)

// response is what a successful tool call returns. Handlers and the action
// pipeline add sections to it; it is rendered once, in one order, for every
// tool, and its structured form is built from the same sections. Nothing
// edits the text after it is rendered.
type response struct {
	// did says what the call did, a sentence or a few lines.
	did []string
	// notes are what the role kept to say once (a browser started again).
	notes []string
	// page is where the tab went, when the call moved it.
	page *pageChange
	// unfinished is set when a new document had not loaded when the call
	// returned.
	unfinished bool
	// notLoaded is set when the page had not fired its load event.
	notLoaded bool
	// loading lists what was still loading, reported and not waited for.
	loading []string
	dialogs []browser.DialogEvent
	// accept are the calls that accept a confirm the policy dismissed.
	accept []llmerr.Action
	// tabs says what happened to the role's tabs (opened, closed itself).
	tabs []string
	// body is the tool's own output: a list, a value, matches.
	body []string
	// changes is what the action did to the page since the agent last read
	// it whole (changes.go).
	changes string
	// invalid names the fields a form refused after a submit, and the
	// calls that fix them (formcheck.go).
	invalid []string
	// hint is the next step, dropped when the snapshot is included.
	hint string
	// data is what a tool gives programs beside the sections above (the
	// tabs, the matches, the roles), in structuredContent only.
	data map[string]any
	// snapshot is the page tree, when the call asked for it; noSnapshot
	// says why it could not be taken.
	snapshot   string
	noSnapshot string
	warnings   []failurelog.Entry
	images     []*mcp.ImageContent
	// network lists the role's stubs and emulated network while any is
	// set (tool_network.go).
	network []string
}

// pageChange is a move of the tab: a navigation tool's landing, or what an
// action caused.
type pageChange struct {
	kind      changeKind
	verb      string // for landed: "Navigated to", "Went back to", …
	from, to  string
	requested string // the URL asked for, when it differs from to
	status    int    // HTTP status of the main document, when known
	title     string
	oldTitle  string
}

type changeKind int

const (
	// landed: a navigation tool loaded a document.
	landed changeKind = iota
	// navigated: an action moved the tab to another URL.
	navigated
	// reloaded: an action loaded a new document at the same URL.
	reloaded
	// retitled: only the title changed.
	retitled
)

// Hints for the next step, shared by the tools that end the same way.
const (
	hintSnapshot    = "Next: browser_snapshot() to see the page and get refs."
	hintNewPageRefs = "Call browser_snapshot() for the new page's refs."
	hintStaleRefs   = "Refs from earlier snapshots are stale; call browser_snapshot() for new ones."
)

func (r *response) addDid(format string, args ...any) {
	r.did = append(r.did, fmt.Sprintf(format, args...))
}

func (r *response) addBody(lines ...string) {
	r.body = append(r.body, lines...)
}

// text renders the sections in their one order.
func (r *response) text() string {
	var b strings.Builder
	line := func(s string) {
		if s == "" {
			return
		}
		b.WriteString(s)
		if !strings.HasSuffix(s, "\n") {
			b.WriteString("\n")
		}
	}
	for _, d := range r.did {
		line(d)
	}
	for _, n := range r.notes {
		line(n)
	}
	if p := r.page; p != nil {
		switch p.kind {
		case landed:
			head := p.verb + " " + p.to
			if p.status > 0 {
				head += fmt.Sprintf(" (HTTP %d)", p.status)
			}
			line(head)
			if p.requested != "" && p.requested != p.to {
				line("Requested: " + p.requested)
			}
			line(titleLine(p.title))
		case navigated:
			line(fmt.Sprintf("Page navigated: %s → %s", p.from, p.to))
			line(titleLine(p.title))
		case reloaded:
			line("Page reloaded: " + p.to)
			line(titleLine(p.title))
		case retitled:
			line(fmt.Sprintf("Title changed: %s → %s", pageTitle(p.oldTitle), pageTitle(p.title)))
		}
	}
	if r.unfinished {
		line("The new page had not finished loading; browser_snapshot() shows what is there.")
	}
	if r.notLoaded {
		line("The page has not fired its load event yet: scripts waiting for it have not run, so a control may do nothing until it loads (browser_wait_for(time=2), then act).")
	}
	if n := len(r.loading); n > 0 {
		shown := r.loading[:min(3, n)]
		s := "Still loading (not waited for): " + strings.Join(shown, ", ")
		if n > len(shown) {
			s += fmt.Sprintf(" and %d more", n-len(shown))
		}
		line(s)
	}
	for _, d := range r.dialogs {
		line("Dialog: " + d.Format(pageText))
	}
	if len(r.accept) > 0 {
		line("If it should have been accepted:")
		for i, a := range r.accept {
			line(fmt.Sprintf("%d. %s — %s", i+1, a.Call(), a.Why))
		}
	}
	for _, t := range r.tabs {
		line(t)
	}
	for _, l := range r.body {
		line(l)
	}
	line(r.changes)
	for _, l := range r.invalid {
		line(l)
	}
	switch {
	case r.snapshot != "":
		b.WriteString("\n")
		line(r.snapshot)
	case r.noSnapshot != "":
		line("(No snapshot: " + r.noSnapshot + ". Call browser_snapshot() to try again.)")
	default:
		line(r.hint)
	}
	for _, l := range r.network {
		line(l)
	}
	line(failurelog.Render(r.warnings))
	return strings.TrimRight(b.String(), "\n")
}

// structured is the response for programs: the same sections as facts.
// It is nil when there is nothing beyond the text.
func (r *response) structured() map[string]any {
	m := map[string]any{}
	if p := r.page; p != nil {
		page := map[string]any{"url": p.to, "title": snapshot.Clip(p.title, snapshot.MaxTitle)}
		if p.from != "" && p.from != p.to {
			page["from"] = p.from
		}
		if p.status > 0 {
			page["status"] = p.status
		}
		m["page"] = page
	}
	if len(r.dialogs) > 0 {
		ds := make([]map[string]any, len(r.dialogs))
		for i, d := range r.dialogs {
			ds[i] = map[string]any{"type": d.Type, "message": snapshot.Clip(d.Message, snapshot.MaxText), "accepted": d.Accepted}
		}
		m["dialogs"] = ds
	}
	if len(r.warnings) > 0 {
		m["warnings"] = r.warnings
	}
	for k, v := range r.data {
		m[k] = v
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// result is the MCP form of the response, its text at most limit bytes.
func (r *response) result(limit int) *mcp.CallToolResult {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: capText(r.text(), limit)}}}
	if st := r.structured(); st != nil {
		res.StructuredContent = st
	}
	for _, img := range r.images {
		res.Content = append(res.Content, img)
	}
	return res
}

// textResponse is the response of a tool whose output is one text: a
// list, a report.
func textResponse(text string) *response {
	return &response{body: []string{text}}
}
