package server

import (
	"net/netip"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/retrace-dev/retrace/llmerr"
)

// fuzzFileDir is the one directory file: URLs may load from in
// FuzzOriginCheck. It does not exist, so no symlink leads into it and a
// path is inside it exactly when it is so lexically.
const fuzzFileDir = "/retrace-fuzz-files"

// FuzzNormalizeURL normalises arbitrary strings as browser_navigate's url.
// normalizeURL never panics; a URL it accepts has no spaces and the scheme
// http, https, about, data or file, and an http(s) one parses with a host;
// a refusal is an INVALID_PARAMS plan about the string given.
func FuzzNormalizeURL(f *testing.F) {
	for _, s := range fuzzURLSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := normalizeURL(raw)
		if err != nil {
			e, ok := llmerr.As(err)
			if !ok || e.Code != llmerr.InvalidParams || e.URL != raw || e.Cause == "" || e.Text(llmerr.StyleRecovery) == "" {
				t.Fatalf("normalizeURL(%q) = %v, want an INVALID_PARAMS plan", raw, err)
			}
			return
		}
		if u == "" || strings.ContainsAny(u, " \t\n") {
			t.Fatalf("normalizeURL(%q) = %q", raw, u)
		}
		scheme, _, _ := strings.Cut(u, ":")
		switch strings.ToLower(scheme) {
		case "about", "data", "file":
		case "http", "https":
			p, err := url.Parse(u)
			if err != nil || p.Host == "" {
				t.Fatalf("normalizeURL(%q) = %q, which does not parse with a host: %v", raw, u, err)
			}
		default:
			t.Fatalf("normalizeURL(%q) = %q, with the scheme %q", raw, u, scheme)
		}
	})
}

// FuzzOriginCheck applies policies made of arbitrary --allowed-origins and
// --blocked-origins lists, with and without --allow-file-urls, to arbitrary
// URLs, as given and as normalizeURL writes them. check never panics and
// never allows: a scheme other than http, https, ws, wss, about:blank,
// data (and data only without an allow list) and file; a file: URL without
// --allow-file-urls, or outside the allowed directory with it; a host a
// block-list entry names; a host the allow list, when there is one, does
// not name; a link-local or metadata address written as an IP literal,
// unless the allow list names it.
func FuzzOriginCheck(f *testing.F) {
	for _, s := range fuzzURLSeeds {
		f.Add(s, "", "", false)
	}
	for _, s := range []struct {
		raw, allowed, blocked string
		files                 bool
	}{
		{"http://169.254.169.254/latest/meta-data/", "169.254.169.254", "", false},
		{"http://169.254.169.254/latest/meta-data/", "http://169.254.169.254", "", false},
		{"http://169.254.169.254:80/", "http://169.254.169.254", "", false},
		{"https://example.com/", "example.com", "example.com", false},
		{"https://example.com:8443/", "https://example.com:8443", "", false},
		{"https://EXAMPLE.com/", "https://example.com/;localhost", "", false},
		{"wss://example.com/socket", "", "https://example.com", false},
		{"data:text/html,hi", "example.com", "", false},
		{"file:///retrace-fuzz-files/page.html", "", "", true},
		{"file:///retrace-fuzz-files/../etc/passwd", "", "", true},
		{"file:///retrace-fuzz-files-other/x", "", "", true},
		{"FILE:///retrace-fuzz-files/a", "", "", false},
		{"file:retrace-fuzz-files/a", "", "", true},
		{"http://[fe80::1]/", "[fe80::1]", "", false},
		{"http://[::ffff:169.254.1.1]/", ",;, ", "", false},
	} {
		f.Add(s.raw, s.allowed, s.blocked, s.files)
	}
	f.Fuzz(func(t *testing.T, raw, allowed, blocked string, files bool) {
		p := OriginPolicy{Allowed: ParseOrigins(allowed), Blocked: ParseOrigins(blocked), AllowFileURLs: files,
			FileDirs: []string{fuzzFileDir}}
		fuzzCheck(t, p, raw)
		if u, err := normalizeURL(raw); err == nil {
			fuzzCheck(t, p, u)
		}
	})
}

// fuzzCheck checks one decision of p against the rules above.
func fuzzCheck(t *testing.T, p OriginPolicy, raw string) {
	t.Helper()
	why := p.check(raw)
	if strings.HasPrefix(strings.ToLower(raw), "file:") && !p.AllowFileURLs && why == "" {
		t.Fatalf("check(%q) allowed a file: URL without --allow-file-urls", raw)
	}
	if why != "" {
		if e := p.blockedError("browser_navigate", raw, why); e.Text(llmerr.StyleRecovery) == "" {
			t.Fatalf("check(%q): empty plan", raw)
		}
		return
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("check(%q) allowed a URL that does not parse: %v", raw, err)
	}
	named := func(list []string) bool {
		return slices.ContainsFunc(list, func(e string) bool { return originMatches(e, u) })
	}
	switch scheme := strings.ToLower(u.Scheme); scheme {
	case "http", "https", "ws", "wss":
		if named(p.Blocked) {
			t.Fatalf("check(%q) allowed a URL --blocked-origins %q names", raw, p.Blocked)
		}
		if len(p.Allowed) > 0 && !named(p.Allowed) {
			t.Fatalf("check(%q) allowed a URL --allowed-origins %q does not name", raw, p.Allowed)
		}
		if fuzzLinkLocal(u.Hostname()) && !named(p.Allowed) {
			t.Fatalf("check(%q) allowed the link-local host %q, which --allowed-origins %q does not name", raw, u.Hostname(), p.Allowed)
		}
	case "about":
		if !strings.EqualFold(raw, "about:blank") {
			t.Fatalf("check(%q) allowed an about: page other than about:blank", raw)
		}
	case "data":
		if len(p.Allowed) > 0 {
			t.Fatalf("check(%q) allowed a data: URL under --allowed-origins %q", raw, p.Allowed)
		}
	case "file":
		if !p.AllowFileURLs {
			t.Fatalf("check(%q) allowed a file: URL without --allow-file-urls", raw)
		}
		if path := filepath.Clean(u.Path); path != fuzzFileDir && !strings.HasPrefix(path, fuzzFileDir+"/") {
			t.Fatalf("check(%q) allowed the file %q outside %s", raw, path, fuzzFileDir)
		}
	default:
		t.Fatalf("check(%q) allowed the scheme %q", raw, scheme)
	}
}

// fuzzLinkLocal reports whether host is an IP literal in a link-local range
// or the AWS IPv6 metadata address, by the standard library's definition
// rather than origins.go's list.
func fuzzLinkLocal(host string) bool {
	a, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err != nil {
		return false
	}
	a = a.Unmap().WithZone("")
	return a.IsLinkLocalUnicast() || a.WithZone("") == netip.MustParseAddr("fd00:ec2::254")
}

// fuzzURLSeeds are what models write for a URL, and what they should not.
var fuzzURLSeeds = []string{
	"https://example.com/", "example.com", "localhost:3000", "127.0.0.1:8080/path?q=1#h", "[::1]:8080",
	"http://localhost", "about:blank", "ABOUT:BLANK", "about:config", "data:text/html,<h1>hi</h1>",
	"file:///etc/passwd", "file:/etc/passwd", "FILE://localhost/etc/passwd", "javascript:alert(1)",
	"mailto:a@example.com", "tel:+1234", "chrome://settings", "view-source:https://example.com",
	"ftp://example.com/", "ws://example.com/", "http://169.254.169.254/latest/meta-data/", "169.254.169.254",
	"http://[fe80::1%25eth0]/", "http://[::ffff:169.254.169.254]/", "http://metadata.google.internal/",
	"http://[fd00:ec2::254]/", "http:///path", "https://", "", "   ", "exa mple.com", "http://exa\tmple.com",
	"//example.com", "http://user:pass@example.com:99999/", "http://%zz/", "\x00", "\xff\xfe",
	"http://example.com\r\n", "a:1", "a:b", "example.com:80:80",
}
