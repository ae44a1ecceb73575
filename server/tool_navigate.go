package server

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/llmerr"
)

// The tools that load documents in the current tab: navigate, back,
// forward, reload.

type navigateArgs struct {
	URL string `json:"url" jsonschema:"The URL to load; a bare host like example.com gets https://"`
	snapshotArg
	roleArg
}

type historyArgs struct {
	snapshotArg
	roleArg
}

func (s *Server) addNavigateTools() {
	addTool(s, withOutput(def("browser_navigate", "Navigate to a URL", destructive|openWorld, "Load a URL in the current tab; returns its final URL, status and title."), "page"), s.navigate)
	addTool(s, def("browser_navigate_back", "Go back", harmless|openWorld, "Go back in the current tab's history."), s.goBack)
	addTool(s, def("browser_navigate_forward", "Go forward", harmless|openWorld, "Go forward in the current tab's history."), s.goForward)
	addTool(s, def("browser_reload", "Reload", destructive|openWorld, "Reload the current page. Its refs become stale."), s.reload)
}

func (s *Server) navigate(ctx context.Context, c *call, in navigateArgs) (*response, error) {
	target, err := s.checkURL(c.tool, in.URL)
	if err != nil {
		return nil, err
	}
	return s.run(ctx, c, c.navigateOp(target))
}

// navigateOp is the op of browser_navigate to target: also the load of
// browser_compare_roles in each role, so its plans and checks are the same.
func (c *call) navigateOp(target string) op {
	return op{
		retry: c.step(llmerr.A("url", target)),
		tab: func(r *role) (*browser.Tab, error) {
			r.resume = target
			tab, err := r.ensureTab()
			if e, ok := llmerr.As(err); ok && e.Code == llmerr.PageCrashed {
				// Navigating is the way out of a crash: go on in a fresh page.
				return r.ensureTab()
			}
			return tab, err
		},
		do: func(a *acting) error {
			if err := a.load(target, "Navigated to"); err != nil {
				return err
			}
			a.testCode("await page.goto(%s);", jsString(target))
			return nil
		},
	}
}

// checkURL normalizes a URL an agent gave and checks it against the
// origin policy.
func (s *Server) checkURL(tool, raw string) (string, error) {
	target, err := normalizeURL(raw)
	if err != nil {
		return "", err
	}
	if why := s.cfg.Origins.check(target); why != "" {
		return "", s.cfg.Origins.blockedError(tool, target, why)
	}
	return target, nil
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
		return "", bad("javascript: URLs are not navigations; browser_evaluate runs a script in the page")
	}
	if scheme, rest, ok := strings.Cut(u, ":"); ok && !strings.Contains(u, "://") && isScheme(scheme) &&
		(knownSchemes[strings.ToLower(scheme)] || rest == "" || rest[0] < '0' || rest[0] > '9') {
		// mailto:, tel:, chrome: and the like: a scheme, not a host with a
		// port.
		return "", bad(fmt.Sprintf("the scheme %q is not supported (use http or https)", strings.ToLower(scheme)))
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
		return "", bad(fmt.Sprintf("the scheme %q is not supported (use http or https)", p.Scheme))
	}
	out := p.String()
	if _, err := url.Parse(out); err != nil {
		// What net/url writes back must read back: a host with stray
		// escapes does not.
		return "", bad("it does not parse: " + err.Error())
	}
	return out, nil
}

// knownSchemes are schemes a model may write without "//" that are never a
// host with a port.
var knownSchemes = map[string]bool{"tel": true, "sms": true, "mailto": true, "callto": true, "chrome": true,
	"view-source": true, "blob": true, "ftp": true, "ws": true, "wss": true}

// isScheme reports whether s is shaped like a URL scheme.
func isScheme(s string) bool {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')
	}) < 0
}

func (s *Server) goBack(ctx context.Context, c *call, _ historyArgs) (*response, error) {
	return s.history(ctx, c, "back", "Went back to", func(p playwright.Page, o float64) (playwright.Response, error) {
		return p.GoBack(playwright.PageGoBackOptions{WaitUntil: playwright.WaitUntilStateDomcontentloaded, Timeout: &o})
	})
}

func (s *Server) goForward(ctx context.Context, c *call, _ historyArgs) (*response, error) {
	return s.history(ctx, c, "forward", "Went forward to", func(p playwright.Page, o float64) (playwright.Response, error) {
		return p.GoForward(playwright.PageGoForwardOptions{WaitUntil: playwright.WaitUntilStateDomcontentloaded, Timeout: &o})
	})
}

func (s *Server) reload(ctx context.Context, c *call, _ historyArgs) (*response, error) {
	return s.history(ctx, c, "", "Reloaded", func(p playwright.Page, o float64) (playwright.Response, error) {
		return p.Reload(playwright.PageReloadOptions{WaitUntil: playwright.WaitUntilStateDomcontentloaded, Timeout: &o})
	})
}

// history moves the current tab through its history in direction dir
// ("back", "forward"; "" reloads) and reports where it landed, like
// browser_navigate.
func (s *Server) history(ctx context.Context, c *call, dir, verb string, move func(playwright.Page, float64) (playwright.Response, error)) (*response, error) {
	o := op{retry: c.step()}
	if dir == "" {
		o.hint = hintStaleRefs
	}
	o.do = func(a *acting) error {
		from := a.tab.Page.URL()
		nav := s.cfg.NavigationTimeout
		if a.tab.Stuck.Load() && !answers(a.tab) {
			// Chromium would ask the stuck page before leaving it. A reload
			// loads its address in a fresh tab; its history stays with it.
			if dir != "" {
				return busyPage(c.tool, from, fmt.Errorf("the page does not answer"))
			}
			return a.load(from, verb)
		}
		resp, err := move(a.tab.Page, float64(nav.Milliseconds()))
		if err != nil {
			return llmerr.Classify(err, llmerr.Situation{Tool: c.tool, URL: from, Timeout: nav, Navigating: true})
		}
		if dir != "" && a.tab.Page.URL() == from && (resp == nil || a.tab.Mark() == a.mark) {
			// Playwright answers "no such entry" with no response and no move.
			a.res.addDid("There is no page to go %s to in this tab's history; still on %s.", dir, from)
			a.res.hint = "browser_navigate(url=...) opens another page."
			return nil
		}
		a.landed = &pageChange{kind: landed, verb: verb, status: statusOf(resp)}
		return nil
	}
	return s.run(ctx, c, o)
}
