package server

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/llmerr"
)

type navigateArgs struct {
	URL      string   `json:"url" jsonschema:"The URL to load; a bare host like example.com gets https://"`
	Snapshot bool     `json:"snapshot,omitempty" jsonschema:"Also return a snapshot"`
	Role     roleName `json:"role,omitempty" jsonschema:"Role to act as (default: current)"`
}

type closeArgs struct {
	Role roleName `json:"role,omitempty" jsonschema:"Role to act as (default: current)"`
}

func (s *Server) addNavigateTools() {
	addTool(s, &mcp.Tool{
		Name:        "browser_navigate",
		Description: "Load a URL in the current tab. Returns the final URL, HTTP status and title.",
		Annotations: &mcp.ToolAnnotations{Title: "Navigate to a URL", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
	}, s.navigate)
	addTool(s, &mcp.Tool{
		Name:        "browser_close",
		Description: "Close the role's browser; its refs become stale. The next call opens a fresh one.",
		Annotations: &mcp.ToolAnnotations{Title: "Close the browser", DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, s.closeBrowser)
}

func ptr[T any](v T) *T { return &v }

func (s *Server) navigate(ctx context.Context, c *call, in navigateArgs) (*result, error) {
	target, err := normalizeURL(in.URL)
	if err != nil {
		return nil, err
	}
	if why := s.cfg.Origins.check(target); why != "" {
		return nil, s.cfg.Origins.blockedError(c.tool, target, why)
	}
	r, unlock, err := c.lockRole()
	if err != nil {
		return nil, err
	}
	defer unlock()
	tab, err := r.ensureTab()
	if e, ok := llmerr.As(err); ok && e.Code == llmerr.PageCrashed {
		// Navigating is the way out of a crash: go on in a fresh page.
		tab, err = r.ensureTab()
	}
	if err != nil {
		return nil, err
	}
	mark := tab.Mark()
	resp, err := tab.Page.Goto(target, playwright.PageGotoOptions{
		WaitUntil: playwright.WaitUntilStateDomcontentloaded,
		Timeout:   playwright.Float(float64(s.cfg.NavigationTimeout.Milliseconds())),
	})
	if err != nil {
		e := llmerr.Classify(err, llmerr.Situation{Tool: c.tool, URL: target,
			Timeout: s.cfg.NavigationTimeout, Navigating: true})
		// Whether anything of the target arrived is read from where the tab
		// is, not from commit events: the commit of the page before can land
		// after the mark.
		if e.Code == llmerr.NavigationTimeout && strings.TrimRight(tab.Page.URL(), "/") != strings.TrimRight(target, "/") {
			// The request is still open in the browser; left so, the
			// retry the plan offers would be aborted by it.
			stopLoading(r, tab)
			// Nothing arrived: the tab still shows what it showed, so a
			// snapshot has nothing to offer; a second try often works (a
			// server waking up, a cold cache).
			e.Cause = "the server sent nothing back in that time (the tab still shows the page before)"
			e.Actions = []llmerr.Action{
				llmerr.Call("browser_navigate", "retry once: a first load is often the slow one", llmerr.A("url", target)),
				llmerr.Call("browser_snapshot", "if it times out again, see what the tab shows"),
			}
		}
		return nil, e
	}
	res, err := s.navigated(ctx, r, tab, mark, resp, target, "Navigated to")
	return s.withSnapshot(c, r, res), err
}

// navigated settles the page after a navigation and reports where it
// landed: the final URL and status, the title, what is still loading and
// any dialog. requested is the URL asked for ("" when not known).
func (s *Server) navigated(ctx context.Context, r *role, tab *browser.Tab, mark browser.Mark, resp playwright.Response, requested, verb string) (*result, error) {
	r.log.Frames() // what was missing on the page left is no longer missing
	lim := browser.DefaultSettleLimits(s.cfg.NavigationTimeout)
	tab.Settle(ctx, mark, lim)
	if err := r.checkSignedOut(tab.Page.URL()); err != nil {
		return nil, err
	}
	var b strings.Builder
	final := tab.Page.URL()
	fmt.Fprintf(&b, "%s %s", verb, final)
	if resp != nil {
		fmt.Fprintf(&b, " (HTTP %d)", resp.Status())
	}
	b.WriteString("\n")
	if requested != "" && final != requested {
		fmt.Fprintf(&b, "Requested: %s\n", requested)
	}
	title, _ := tab.Page.Title()
	fmt.Fprintf(&b, "Title: %s\n", title)
	if pending := tab.Pending(mark); len(pending) > 0 {
		// Reported, not waited for: a frame or request that never ends
		// must not hold the agent.
		shown := pending[:min(3, len(pending))]
		fmt.Fprintf(&b, "Still loading (not waited for): %s", strings.Join(shown, ", "))
		if len(pending) > len(shown) {
			fmt.Fprintf(&b, " and %d more", len(pending)-len(shown))
		}
		b.WriteString("\n")
	}
	writeDialogs(&b, tab)
	b.WriteString("Next: browser_snapshot() to see the page and get refs.")
	return &result{text: b.String()}, nil
}

// normalizeURL accepts what a model is likely to write (example.com,
// localhost:3000) and rejects what a browser cannot load.
func normalizeURL(raw string) (string, error) {
	u := strings.TrimSpace(raw)
	bad := func(cause string) error {
		return &llmerr.Error{Code: llmerr.InvalidParams, Tool: "browser_navigate", URL: raw,
			Message: fmt.Sprintf("%q is not a URL the browser can load.", raw),
			Cause:   cause,
			Actions: []llmerr.Action{llmerr.Call("browser_navigate", "with a full URL", llmerr.A("url", "https://example.com/"))},
		}
	}
	if u == "" {
		return "", bad("the url is empty")
	}
	if strings.ContainsAny(u, " \t\n") {
		return "", bad("a URL cannot contain spaces; encode them as %20")
	}
	lower := strings.ToLower(u)
	if strings.HasPrefix(lower, "about:") || strings.HasPrefix(lower, "data:") {
		return u, nil
	}
	if strings.HasPrefix(lower, "javascript:") {
		return "", bad("javascript: URLs are not navigations; there is no tool to run scripts yet")
	}
	if !strings.Contains(u, "://") {
		scheme := "https://"
		host := u
		if i := strings.IndexAny(host, "/?#"); i >= 0 {
			host = host[:i]
		}
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if host == "localhost" || net.ParseIP(strings.Trim(host, "[]")) != nil {
			scheme = "http://"
		}
		u = scheme + u
	}
	p, err := url.Parse(u)
	if err != nil {
		return "", bad("it does not parse: " + err.Error())
	}
	switch p.Scheme {
	case "http", "https":
		if p.Host == "" {
			return "", bad("it has no host")
		}
	case "file":
	default:
		return "", bad(fmt.Sprintf("the scheme %q is not supported (use http, https or file)", p.Scheme))
	}
	return p.String(), nil
}

func (s *Server) closeBrowser(ctx context.Context, c *call, _ closeArgs) (*result, error) {
	r, unlock, err := c.lockRole()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if !r.closeLocked() {
		return &result{text: "The browser was not open. The next browser call opens a fresh one."}, nil
	}
	return &result{text: "Closed the browser. Refs issued so far are stale; the next browser call opens a fresh browser."}, nil
}

func writeDialogs(b *strings.Builder, tab *browser.Tab) {
	for _, d := range tab.TakeDialogs() {
		fmt.Fprintf(b, "Dialog: %s\n", d)
	}
}

// stopLoading stops the tab's pending navigation, as the browser's stop
// button does (Chromium's Page.stopLoading; Playwright has no call for it).
func stopLoading(r *role, tab *browser.Tab) {
	cdp, err := r.bctx.NewCDPSession(tab.Page)
	if err != nil {
		return
	}
	_, _ = cdp.Send("Page.stopLoading", nil)
	_ = cdp.Detach()
}
