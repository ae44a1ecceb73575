package server

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/llmerr"
)

// The tools that manage the role's tabs and browser: browser_tabs,
// browser_close.

type tabsArgs struct {
	Action string `json:"action" jsonschema:"list, new, select or close"`
	Index  *int   `json:"index,omitempty" jsonschema:"Tab index for select and close (close: current by default)"`
	URL    string `json:"url,omitempty" jsonschema:"URL to open in the new tab"`
	snapshotArg
	roleArg
}

type closeArgs struct {
	roleArg
}

func (s *Server) addTabTools() {
	addTool(s, withOutput(def("browser_tabs", "Tabs", destructive|openWorld, "List, open, select or close tabs; popups appear here."), "tabs", "page"), s.tabsTool)
	addTool(s, def("browser_close", "Close the browser", destructive|idempotent, "Close the role's browser; its refs become stale."), s.closeBrowser)
}

func (s *Server) tabsTool(ctx context.Context, c *call, in tabsArgs) (*response, error) {
	action := strings.ToLower(strings.TrimSpace(in.Action))
	switch action {
	case "list", "new", "select", "close":
	default:
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool,
			Message: fmt.Sprintf("%q is not a tab action.", in.Action),
			Cause:   "action must be list, new, select or close",
			Actions: []llmerr.Action{llmerr.Call(c.tool, "see the tabs", llmerr.A("action", "list"))}}
	}
	if action == "new" {
		return s.newTab(ctx, c, in.URL)
	}
	r, unlock, err := c.lockRole()
	if err != nil {
		return nil, err
	}
	defer unlock()
	res := &response{}
	// list, select and close work on what is open; a role with no page
	// yet gets one, so the list is never empty.
	if _, err := r.ensureTab(); err != nil {
		return nil, err
	}
	r.adopt()
	if action == "list" {
		text, tabs := r.tabList()
		res.addBody(text)
		res.data = tabsData(tabs)
		return res, nil
	}
	idx := r.indexOf(r.tab)
	if in.Index != nil {
		idx = *in.Index
	} else if action == "select" {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool,
			Message: "select needs the index of the tab.", Cause: "index is missing",
			Details: map[string]any{"tabs": len(r.tabs)},
			Actions: []llmerr.Action{llmerr.Call(c.tool, "see the tabs and their indexes", llmerr.A("action", "list"))}}
	}
	if idx < 0 || idx >= len(r.tabs) {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool,
			Message: fmt.Sprintf("There is no tab %d: the role has %d tab%s (0 to %d).", idx, len(r.tabs), plural(len(r.tabs), "s"), len(r.tabs)-1),
			Cause:   "the index is out of range; tabs are numbered from 0 in the order they opened",
			Actions: []llmerr.Action{llmerr.Call(c.tool, "see the tabs and their indexes", llmerr.A("action", "list"))}}
	}
	t := r.tabs[idx]
	if action == "select" {
		r.tab = t
		// A page that does not answer is selected all the same.
		bounded(time.Second, func() error { return t.Page.BringToFront() })
		st := pageState(t)
		res.addDid("Tab %d is now the current tab: %s\n%s", idx, st.url, titleLine(st.title))
		_, tabs := r.tabList()
		res.data = tabsData(tabs)
		res.hint = "browser_snapshot() shows it; refs from its earlier snapshots still work."
		return res, nil
	}
	url := t.Page.URL()
	r.closeTab(t)
	res.addDid("Closed tab %d (%s); its refs are stale.", idx, url)
	if r.tab == nil && len(r.tabs) > 0 {
		r.tab = r.tabs[len(r.tabs)-1]
	}
	text, tabs := r.tabList()
	res.data = tabsData(tabs)
	if len(r.tabs) == 0 {
		res.hint = "No tab is open; the next browser call opens a new one."
	} else {
		res.addBody(text)
	}
	return res, nil
}

// newTab opens a tab, at url when given, through the action pipeline: a
// page that opens on a sign-in page or a dialog is reported as any
// navigation's.
func (s *Server) newTab(ctx context.Context, c *call, url string) (*response, error) {
	if url != "" {
		target, err := s.checkURL(c.tool, url)
		if err != nil {
			return nil, err
		}
		url = target
	}
	return s.run(ctx, c, op{
		retry: c.step(llmerr.A("action", "new"), llmerr.A("url", url)),
		tab:   func(r *role) (*browser.Tab, error) { return r.newTab() },
		do: func(a *acting) error {
			idx := a.role.indexOf(a.tab)
			if url == "" {
				a.res.addDid("Opened tab %d (about:blank); it is the current tab.", idx)
				text, tabs := a.role.tabList()
				a.res.addBody(text)
				a.res.data = tabsData(tabs)
				return nil
			}
			return a.load(url, fmt.Sprintf("Opened tab %d at", idx))
		},
	})
}

func (s *Server) closeBrowser(ctx context.Context, c *call, _ closeArgs) (*response, error) {
	r, unlock, err := c.lockRole()
	if err != nil {
		return nil, err
	}
	defer unlock()
	res := &response{}
	closed := r.closeLocked()
	r.forget()
	if !closed {
		res.addDid("The browser was not open. The next browser call opens a fresh one.")
		return res, nil
	}
	res.addDid("Closed the browser. Refs issued so far are stale; the next browser call opens a fresh browser.")
	return res, nil
}

// tabsData is the tabs as structuredContent: a list, empty when none is
// open.
func tabsData(tabs []map[string]any) map[string]any {
	if tabs == nil {
		tabs = []map[string]any{}
	}
	return map[string]any{"tabs": tabs}
}
