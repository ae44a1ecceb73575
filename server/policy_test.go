package server

import (
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/retrace-dev/retrace/llmerr"
)

var probeKeys atomic.Int64

// probe is a URL on the other fixture origin that counts its hits, so a
// test can show a request the policy forbids never reached the server.
func probe(scheme string) (key, u string) {
	key = fmt.Sprintf("p%d", probeKeys.Add(1))
	other, _ := url.Parse(fx.OtherURL)
	return key, scheme + "://" + other.Host + "/probe/" + key
}

// Local files never load by default, by any path: asked for, in a new tab,
// through a redirect, from a page's script, a frame or a popup.
func TestFileURLsAreRefused(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	for _, tool := range []struct {
		name string
		args map[string]any
	}{
		{"browser_navigate", map[string]any{"url": "file:///etc/passwd"}},
		{"browser_tabs", map[string]any{"action": "new", "url": "file:///etc/passwd"}},
	} {
		r := c.fail(tool.name, tool.args, llmerr.OriginBlocked)
		mustContain(t, r.Text, "file: URLs do not load unless the server runs with --allow-file-urls")
	}
	// What a page can do on its own: the browser refuses file: from a web
	// page, and nothing of the file reaches a result.
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	for _, script := range []string{
		`() => { location.href = 'file:///etc/passwd'; }`,
		`() => { window.open('file:///etc/passwd'); }`,
		`() => { const f = document.createElement('iframe'); f.src = 'file:///etc/passwd'; document.body.append(f); }`,
		`() => { location.href = '/redirect?to=' + encodeURIComponent('file:///etc/passwd'); }`,
	} {
		r := c.call("browser_evaluate", map[string]any{"function": script})
		snap := c.call("browser_snapshot", nil)
		for _, out := range []string{r.Text, snap.Text} {
			if strings.Contains(out, "root:x:0:0") {
				t.Fatalf("%s: the file's content reached a result:\n%s", script, out)
			}
		}
		c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	}
	// data: pages load without a list, not under one.
	c.ok("browser_navigate", map[string]any{"url": "data:text/html,<h1>Inline</h1>"})
	listed := connect(t, Config{Origins: OriginPolicy{Allowed: []string{fx.URL}}})
	r := listed.fail("browser_navigate", map[string]any{"url": "data:text/html,<h1>Inline</h1>"}, llmerr.OriginBlocked)
	mustContain(t, r.Text, "data: URLs do not load under --allowed-origins")
}

// Link-local and cloud-metadata addresses need an explicit allow, asked for
// or reached through a redirect.
func TestMetadataAddressesAreRefused(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	r := c.fail("browser_navigate", map[string]any{"url": "http://169.254.169.254/latest/meta-data/"}, llmerr.OriginBlocked)
	mustContain(t, r.Text, "169.254.169.254 is a link-local or cloud-metadata address")
	r = c.fail("browser_navigate", map[string]any{"url": fx.URL + "/redirect?to=" + url.QueryEscape("http://169.254.169.254/latest/meta-data/")}, llmerr.OriginBlocked)
	mustContain(t, r.Text, "The page went to http://169.254.169.254/latest/meta-data/", "the tab is back on about:blank",
		"reached by a redirect or by the page itself")
	// What the error says is what the tab shows.
	mustContain(t, c.ok("browser_snapshot", nil), "URL: about:blank")
}

// With an allow list, nothing reaches an origin the list does not name, by
// any path: a redirect hop, the page's script, a popup, a frame, fetch,
// XHR, beacon, a WebSocket, a service worker.
func TestAllowListHoldsOnEveryPath(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{Origins: OriginPolicy{Allowed: []string{fx.URL}}})

	// A redirect from an allowed page to another origin.
	key, target := probe("http")
	r := c.fail("browser_navigate", map[string]any{"url": fx.URL + "/redirect?to=" + url.QueryEscape(target)}, llmerr.OriginBlocked)
	mustContain(t, r.Text, "The page went to", "--allowed-origins does not list it", "the tab is back on about:blank")
	t.Logf("a redirect out of the allow list:\n%s", r.Text)
	if n := fx.Hits(key); n != 0 {
		t.Errorf("the redirect's target was reached %d times", n)
	}

	// The page's own navigation.
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	key, target = probe("http")
	r = c.fail("browser_evaluate", map[string]any{"function": fmt.Sprintf(`() => { location.href = %q; }`, target)}, llmerr.OriginBlocked)
	mustContain(t, r.Text, "The page went to")

	// Requests a page makes without moving: each must not reach the other
	// origin. A request to the allowed origin after them is the barrier:
	// once it has arrived, the others would have too.
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	var keys []string
	for _, make := range []func(u string) string{
		func(u string) string { return fmt.Sprintf(`fetch(%q).catch(() => {})`, u) },
		func(u string) string {
			return fmt.Sprintf(`new Promise((done) => { const x = new XMLHttpRequest(); x.onloadend = done; x.open('GET', %q); x.send(); })`, u)
		},
		func(u string) string { return fmt.Sprintf(`Promise.resolve(navigator.sendBeacon(%q, 'x'))`, u) },
		func(u string) string { return fmt.Sprintf(`(() => { window.open(%q); })()`, u) },
		func(u string) string {
			return fmt.Sprintf(`new Promise((done) => { const f = document.createElement('iframe'); f.src = %q; f.onload = done; f.onerror = done; document.body.append(f); setTimeout(done, 2000); })`, u)
		},
	} {
		k, u := probe("http")
		keys = append(keys, k)
		c.call("browser_evaluate", map[string]any{"function": "() => " + make(u)})
	}
	k, u := probe("ws")
	keys = append(keys, k)
	c.call("browser_evaluate", map[string]any{"function": fmt.Sprintf(
		`() => new Promise((done) => { const ws = new WebSocket(%q); ws.onerror = done; ws.onclose = done; ws.onopen = done; setTimeout(done, 2000); })`, u)})
	sw := c.call("browser_evaluate", map[string]any{"function": `() => navigator.serviceWorker.register('/sw.js').then(() => 'registered', (e) => 'refused: ' + e.name)`})
	mustContain(t, sw.Text, "refused")
	barrier := fmt.Sprintf("p%d", probeKeys.Add(1))
	c.ok("browser_evaluate", map[string]any{"function": fmt.Sprintf(`() => fetch(%q).then((r) => r.status)`, fx.URL+"/probe/"+barrier)})
	if fx.Hits(barrier) != 1 {
		t.Fatalf("the barrier request did not arrive")
	}
	for i, k := range keys {
		if n := fx.Hits(k); n != 0 {
			t.Errorf("path %d reached the origin the list does not name (%d requests)", i, n)
		}
	}
}

// A block list holds on the same paths, and the allowed origin still works.
func TestBlockListHoldsThroughRedirects(t *testing.T) {
	t.Parallel()
	other, _ := url.Parse(fx.OtherURL)
	c := connect(t, Config{Origins: OriginPolicy{Blocked: []string{other.Hostname()}}})
	key, target := probe("http")
	r := c.fail("browser_navigate", map[string]any{"url": fx.URL + "/redirect?to=" + url.QueryEscape(target)}, llmerr.OriginBlocked)
	mustContain(t, r.Text, "--blocked-origins lists "+other.Hostname())
	if n := fx.Hits(key); n != 0 {
		t.Errorf("the blocked origin was reached %d times", n)
	}
	mustContain(t, c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")}), "Title: <page-content>Sign in</page-content>")
}
