package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/llmerr"
)

type historyArgs struct {
	Snapshot bool     `json:"snapshot,omitempty" jsonschema:"Also return a snapshot"`
	Role     roleName `json:"role,omitempty" jsonschema:"Role to act as (default: current)"`
}

type tabsArgs struct {
	Action string   `json:"action" jsonschema:"list, new, select or close"`
	Index  *int     `json:"index,omitempty" jsonschema:"Tab index for select and close (default: the current tab for close)"`
	URL    string   `json:"url,omitempty" jsonschema:"URL to open in the new tab"`
	Role   roleName `json:"role,omitempty" jsonschema:"Role to act as (default: current)"`
}

type dialogArgs struct {
	Accept     bool     `json:"accept" jsonschema:"Accept (OK) or dismiss (Cancel) the next dialog"`
	PromptText *string  `json:"promptText,omitempty" jsonschema:"Text to answer a prompt dialog with"`
	Role       roleName `json:"role,omitempty" jsonschema:"Role to act as (default: current)"`
}

func (s *Server) addTabTools() {
	addTool(s, &mcp.Tool{
		Name:        "browser_navigate_back",
		Description: "Go back to the previous page in the current tab's history.",
		Annotations: &mcp.ToolAnnotations{Title: "Go back", DestructiveHint: ptr(false), OpenWorldHint: ptr(true)},
	}, s.goBack)
	addTool(s, &mcp.Tool{
		Name:        "browser_navigate_forward",
		Description: "Go forward to the next page in the current tab's history.",
		Annotations: &mcp.ToolAnnotations{Title: "Go forward", DestructiveHint: ptr(false), OpenWorldHint: ptr(true)},
	}, s.goForward)
	addTool(s, &mcp.Tool{
		Name:        "browser_reload",
		Description: "Reload the current page. Its refs become stale.",
		Annotations: &mcp.ToolAnnotations{Title: "Reload", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
	}, s.reload)
	addTool(s, &mcp.Tool{
		Name:        "browser_tabs",
		Description: "List, open, select or close the role's tabs. Popups the page opens appear here.",
		Annotations: &mcp.ToolAnnotations{Title: "Tabs", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
	}, s.tabsTool)
	addTool(s, &mcp.Tool{
		Name:        "browser_handle_dialog",
		Description: "Set how to answer the next alert, confirm or prompt dialog (otherwise the --dialog policy answers).",
		Annotations: &mcp.ToolAnnotations{Title: "Answer the next dialog", DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, s.handleDialog)
}

func (s *Server) goBack(ctx context.Context, c *call, _ historyArgs) (*result, error) {
	return s.history(ctx, c, "back", func(p playwright.Page, o float64) (playwright.Response, error) {
		return p.GoBack(playwright.PageGoBackOptions{WaitUntil: playwright.WaitUntilStateDomcontentloaded, Timeout: &o})
	})
}

func (s *Server) goForward(ctx context.Context, c *call, _ historyArgs) (*result, error) {
	return s.history(ctx, c, "forward", func(p playwright.Page, o float64) (playwright.Response, error) {
		return p.GoForward(playwright.PageGoForwardOptions{WaitUntil: playwright.WaitUntilStateDomcontentloaded, Timeout: &o})
	})
}

func (s *Server) reload(ctx context.Context, c *call, _ historyArgs) (*result, error) {
	return s.history(ctx, c, "reload", func(p playwright.Page, o float64) (playwright.Response, error) {
		return p.Reload(playwright.PageReloadOptions{WaitUntil: playwright.WaitUntilStateDomcontentloaded, Timeout: &o})
	})
}

// history moves the current tab through its history (or reloads it) and
// reports where it landed, like browser_navigate.
func (s *Server) history(ctx context.Context, c *call, dir string, move func(playwright.Page, float64) (playwright.Response, error)) (*result, error) {
	r, tab, unlock, err := c.lockTab()
	if err != nil {
		return nil, err
	}
	defer unlock()
	from := tab.Page.URL()
	mark := tab.Mark()
	resp, err := move(tab.Page, float64(s.cfg.NavigationTimeout.Milliseconds()))
	if err != nil {
		return nil, llmerr.Classify(err, llmerr.Situation{Tool: c.tool, URL: from,
			Timeout: s.cfg.NavigationTimeout, Navigating: true})
	}
	if dir != "reload" && tab.Page.URL() == from && (resp == nil || tab.Mark() == mark) {
		// Playwright answers "no such entry" with no response and no move.
		return &result{text: fmt.Sprintf("There is no page to go %s to in this tab's history; still on %s.\nbrowser_navigate(url=...) opens another page.", dir, from)}, nil
	}
	verb := map[string]string{"back": "Went back to", "forward": "Went forward to", "reload": "Reloaded"}[dir]
	res, err := s.navigated(ctx, r, tab, mark, resp, "", verb)
	if err == nil && dir == "reload" {
		res.text = strings.Replace(res.text, "Next: browser_snapshot() to see the page and get refs.",
			"Refs from earlier snapshots are stale; browser_snapshot() gets new ones.", 1)
	}
	return s.withSnapshot(c, r, res), err
}

func (s *Server) tabsTool(ctx context.Context, c *call, in tabsArgs) (*result, error) {
	action := strings.ToLower(strings.TrimSpace(in.Action))
	switch action {
	case "list", "new", "select", "close":
	default:
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool,
			Message: fmt.Sprintf("%q is not a tab action.", in.Action),
			Cause:   "action must be list, new, select or close",
			Actions: []llmerr.Action{llmerr.Call(c.tool, "see the tabs", llmerr.A("action", "list"))}}
	}
	if action == "new" && in.URL != "" {
		target, err := normalizeURL(in.URL)
		if err != nil {
			return nil, err
		}
		if why := s.cfg.Origins.check(target); why != "" {
			return nil, s.cfg.Origins.blockedError(c.tool, target, why)
		}
		in.URL = target
	}
	r, unlock, err := c.lockRole()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if action == "new" {
		tab, err := r.newTab()
		if err != nil {
			return nil, err
		}
		if in.URL == "" {
			return &result{text: fmt.Sprintf("Opened tab %d (about:blank); it is the current tab.\n%s", r.indexOf(tab), r.listTabs())}, nil
		}
		mark := tab.Mark()
		resp, err := tab.Page.Goto(in.URL, playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateDomcontentloaded,
			Timeout: playwright.Float(float64(s.cfg.NavigationTimeout.Milliseconds()))})
		if err != nil {
			return nil, llmerr.Classify(err, llmerr.Situation{Tool: c.tool, URL: in.URL,
				Timeout: s.cfg.NavigationTimeout, Navigating: true})
		}
		res, err := s.navigated(ctx, r, tab, mark, resp, in.URL, fmt.Sprintf("Opened tab %d at", r.indexOf(tab)))
		return res, err
	}
	// list, select and close work on what is open; a role with no page
	// yet gets one, so the list is never empty.
	if _, err := r.ensureTab(); err != nil {
		return nil, err
	}
	r.adopt()
	if action == "list" {
		return &result{text: r.listTabs()}, nil
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
		_ = t.Page.BringToFront()
		title, _ := t.Page.Title()
		return &result{text: fmt.Sprintf("Tab %d is now the current tab: %s\nTitle: %s\nbrowser_snapshot() shows it; refs from its earlier snapshots still work.", idx, t.Page.URL(), title)}, nil
	}
	url := t.Page.URL()
	_ = t.Page.Close()
	r.eng.ForgetPage(t.Page)
	r.dropTab(t)
	var b strings.Builder
	fmt.Fprintf(&b, "Closed tab %d (%s); its refs are stale.\n", idx, url)
	if r.tab == nil && len(r.tabs) > 0 {
		r.tab = r.tabs[len(r.tabs)-1]
	}
	if len(r.tabs) == 0 {
		b.WriteString("No tab is open; the next browser call opens a new one.")
	} else {
		b.WriteString(r.listTabs())
	}
	return &result{text: b.String()}, nil
}

// listTabs renders the role's tabs, marking the current one.
func (r *role) listTabs() string {
	var b strings.Builder
	b.WriteString("Tabs:\n")
	for i, t := range r.tabs {
		title, _ := t.Page.Title()
		cur := ""
		if t == r.tab {
			cur = " (current)"
		}
		fmt.Fprintf(&b, "- %d%s: %s — %s\n", i, cur, t.Page.URL(), title)
	}
	return strings.TrimRight(b.String(), "\n")
}

func (s *Server) handleDialog(ctx context.Context, c *call, in dialogArgs) (*result, error) {
	r, unlock, err := c.lockRole()
	if err != nil {
		return nil, err
	}
	defer unlock()
	r.answers.Set(browser.DialogAnswer{Accept: in.Accept, PromptText: in.PromptText})
	how := "dismiss (Cancel)"
	if in.Accept {
		how = "accept (OK)"
		if in.PromptText != nil {
			how += fmt.Sprintf(" with %q for a prompt", *in.PromptText)
		}
	}
	return &result{text: fmt.Sprintf("The next dialog in role %s will be answered: %s. Now do the action that opens it; its result reports the dialog.", r.name, how)}, nil
}
