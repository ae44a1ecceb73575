package server

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/llmerr"
)

// OriginPolicy limits the origins the browser may load (--allowed-origins,
// --blocked-origins). An entry is an origin (https://example.com:8443) or a
// host (example.com, which covers every scheme and port). The block list is
// checked first; an empty allow list allows everything else.
type OriginPolicy struct {
	Allowed []string
	Blocked []string
}

// ParseOrigins splits a semicolon- or comma-separated list.
func ParseOrigins(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == ',' }) {
		if f = strings.TrimRight(strings.TrimSpace(f), "/"); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func (p OriginPolicy) active() bool { return len(p.Allowed) > 0 || len(p.Blocked) > 0 }

// check returns why raw may not be loaded, or "" when it may. Non-network
// URLs (about:, data:) are always allowed.
func (p OriginPolicy) check(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "ws" && u.Scheme != "wss") {
		return ""
	}
	for _, b := range p.Blocked {
		if originMatches(b, u) {
			return "--blocked-origins lists " + b
		}
	}
	if len(p.Allowed) == 0 {
		return ""
	}
	for _, a := range p.Allowed {
		if originMatches(a, u) {
			return ""
		}
	}
	return "--allowed-origins does not list it (allowed: " + strings.Join(p.Allowed, ", ") + ")"
}

func originMatches(entry string, u *url.URL) bool {
	if strings.Contains(entry, "://") {
		e, err := url.Parse(entry)
		return err == nil && strings.EqualFold(e.Scheme, u.Scheme) && strings.EqualFold(e.Host, u.Host)
	}
	return strings.EqualFold(entry, u.Hostname()) || strings.EqualFold(entry, u.Host)
}

// blockedError explains a navigation the policy forbids.
func (p OriginPolicy) blockedError(tool, target, why string) *llmerr.Error {
	e := &llmerr.Error{Code: llmerr.OriginBlocked, Tool: tool, URL: target,
		Message: fmt.Sprintf("%s is outside the origins this server may load.", target),
		Cause:   why}
	if len(p.Allowed) > 0 && !strings.Contains(p.Allowed[0], "*") {
		first := p.Allowed[0]
		if !strings.Contains(first, "://") {
			first = "https://" + first
		}
		e.Actions = []llmerr.Action{llmerr.Call("browser_navigate", "go to a page the policy allows", llmerr.A("url", first+"/"))}
	}
	e.Note = "Retrying will fail the same way: the origin policy is set by whoever started the server."
	return e
}

// install makes the context abort every request the policy forbids, so
// iframes, scripts and links to blocked origins never load either.
func (p OriginPolicy) install(bctx playwright.BrowserContext) error {
	if !p.active() {
		return nil
	}
	return bctx.Route("**/*", func(r playwright.Route) {
		if p.check(r.Request().URL()) != "" {
			_ = r.Abort("blockedbyclient")
			return
		}
		_ = r.Continue()
	})
}
