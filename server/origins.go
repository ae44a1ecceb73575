package server

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/llmerr"
)

// OriginPolicy limits what the browser may load. By default only http(s)
// pages and about:blank load, and never a link-local or cloud-metadata
// address. --allowed-origins and --blocked-origins narrow it further: an
// entry is an origin (https://example.com:8443) or a host (example.com,
// which covers every scheme and port). The block list is checked first; an
// empty allow list allows everything else.
type OriginPolicy struct {
	Allowed []string
	Blocked []string
	// AllowFileURLs lets file: URLs load (--allow-file-urls), only inside
	// FileDirs.
	AllowFileURLs bool
	FileDirs      []string
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

// check returns why raw may not be loaded, or "" when it may.
func (p OriginPolicy) check(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "it does not parse as a URL"
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "ws", "wss":
		return p.checkHost(u)
	case "about":
		if strings.EqualFold(raw, "about:blank") {
			return ""
		}
		return "only about:blank loads of the about: pages"
	case "data":
		if len(p.Allowed) > 0 {
			return "data: URLs do not load under --allowed-origins (they belong to no origin the list can name)"
		}
		return ""
	case "file":
		return p.checkFile(u)
	}
	return fmt.Sprintf("the scheme %s: is not allowed (only http, https and about:blank load)", u.Scheme)
}

// checkHost applies the lists and the link-local rule to a network URL.
func (p OriginPolicy) checkHost(u *url.URL) string {
	for _, b := range p.Blocked {
		if originMatches(b, u) {
			return "--blocked-origins lists " + b
		}
	}
	named := slices.ContainsFunc(p.Allowed, func(a string) bool { return originMatches(a, u) })
	if !named && isLinkLocal(u.Hostname()) {
		return u.Hostname() + " is a link-local or cloud-metadata address; it loads only when --allowed-origins names it"
	}
	if len(p.Allowed) > 0 && !named {
		return "--allowed-origins does not list it (allowed: " + strings.Join(p.Allowed, ", ") + ")"
	}
	return ""
}

// checkFile lets a file: URL load only with --allow-file-urls, and then
// only inside the allowed directories (symlinks resolved).
func (p OriginPolicy) checkFile(u *url.URL) string {
	if !p.AllowFileURLs {
		return "file: URLs do not load unless the server runs with --allow-file-urls"
	}
	path := filepath.Clean(u.Path)
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	for _, d := range p.FileDirs {
		if rel, err := filepath.Rel(d, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return ""
		}
	}
	return "file: URLs load only inside --allowed-dirs (" + strings.Join(p.FileDirs, ", ") + ")"
}

// linkLocal are the address ranges a page has no business reaching: the
// link-local ranges, where clouds serve instance metadata and credentials.
var linkLocal = []netip.Prefix{
	netip.MustParsePrefix("169.254.0.0/16"),
	netip.MustParsePrefix("fe80::/10"),
	netip.MustParsePrefix("fd00:ec2::254/128"),
}

// isLinkLocal reports whether host is a link-local or metadata address, or
// a name clouds give their metadata service.
func isLinkLocal(host string) bool {
	host = strings.Trim(strings.ToLower(host), "[]")
	if host == "metadata.google.internal" || host == "metadata" {
		return true
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	return addrLinkLocal(a)
}

func addrLinkLocal(a netip.Addr) bool {
	// A zone (fe80::1%eth0) would make every range test false.
	a = a.Unmap().WithZone("")
	return slices.ContainsFunc(linkLocal, func(p netip.Prefix) bool { return p.Contains(a) })
}

func originMatches(entry string, u *url.URL) bool {
	if strings.Contains(entry, "://") {
		e, err := url.Parse(entry)
		return err == nil && strings.EqualFold(e.Scheme, u.Scheme) && strings.EqualFold(hostPort(e), hostPort(u))
	}
	return strings.EqualFold(entry, u.Hostname()) || strings.EqualFold(entry, u.Host)
}

// hostPort is u's host with its port, the scheme's default port left out.
func hostPort(u *url.URL) string {
	port := u.Port()
	switch {
	case port == "":
		return u.Hostname()
	case port == "80" && (u.Scheme == "http" || u.Scheme == "ws"),
		port == "443" && (u.Scheme == "https" || u.Scheme == "wss"):
		return u.Hostname()
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// blockedError explains a URL the policy forbids: one asked for, or one a
// page went to (redirect, script, popup) when from is set.
func (p OriginPolicy) blockedError(tool, target, why string) *llmerr.Error {
	e := &llmerr.Error{Code: llmerr.OriginBlocked, Tool: tool, URL: target,
		Message: fmt.Sprintf("%s is outside what this server may load.", target),
		Cause:   why}
	if len(p.Allowed) > 0 && !strings.Contains(p.Allowed[0], "*") {
		first := p.Allowed[0]
		if !strings.Contains(first, "://") {
			first = "https://" + first
		}
		e.Actions = []llmerr.Action{llmerr.Call("browser_navigate", "go to a page the policy allows", llmerr.A("url", first+"/"))}
	}
	e.Note = "Retrying will fail the same way: the policy is set by whoever started the server (" + policyFlag(why) + ")."
	return e
}

// policyFlag names the flag that would change a refusal.
func policyFlag(why string) string {
	switch {
	case strings.Contains(why, "--allow-file-urls"), strings.Contains(why, "file:"):
		return "--allow-file-urls, --allowed-dirs"
	case strings.Contains(why, "--blocked-origins"):
		return "--blocked-origins"
	}
	return "--allowed-origins"
}

// install makes the context abort every request the policy forbids, so
// iframes, scripts and links to blocked origins never load either; the
// network guard catches what routes do not see (redirect hops, WebSockets).
// A refused navigation is told to noted, so the action's result can say
// where the page tried to go.
func (p OriginPolicy) install(bctx playwright.BrowserContext, noted func(url, why string, main bool)) error {
	return bctx.Route("**/*", func(r playwright.Route) {
		req := r.Request()
		if why := p.check(req.URL()); why != "" {
			if req.IsNavigationRequest() {
				f := req.Frame()
				noted(req.URL(), why, f != nil && f.ParentFrame() == nil)
			}
			_ = r.Abort("blockedbyclient")
			return
		}
		_ = r.Continue()
	})
}
