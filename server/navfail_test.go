package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/retrace-dev/retrace/browser"
)

// TestNavigationAfterAFailedOne: after a load that failed (a refused
// connection, a name that does not resolve, a certificate the browser does
// not trust), the next browser_navigate to a good page simply works, and
// the failed load's plan names a call. Ten rounds, as the issue asks.
func TestNavigationAfterAFailedOne(t *testing.T) {
	t.Parallel()
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "<title>Self-signed</title><p>hello</p>")
	}))
	defer tlsSrv.Close()
	c := connect(t, Config{})
	good := fx.Page("form.html")
	bad := []struct{ url, code string }{
		{fx.DeadURL + "/", "ERR_CONNECTION_REFUSED"},
		{"http://no-such-host.invalid/", "ERR_NAME_NOT_RESOLVED"},
		{tlsSrv.URL + "/", "ERR_CERT_AUTHORITY_INVALID"},
	}
	for i := range 10 {
		b := bad[i%len(bad)]
		r := c.call("browser_navigate", map[string]any{"url": b.url})
		if !r.IsError {
			t.Fatalf("run %d: %s loaded:\n%s", i, b.url, r.Text)
		}
		mustContain(t, r.Text, b.code)
		if b.code == "ERR_CERT_AUTHORITY_INVALID" {
			mustContain(t, r.Text, "--ignore-https-errors")
		}
		mustContain(t, r.Text, "1. browser_navigate(")
		c.checkPlan("browser_navigate", r)
		out := c.ok("browser_navigate", map[string]any{"url": good})
		mustContain(t, out, "Navigated to "+good, "Title: <page-content>Sign in</page-content>")
		if containsAny(out, "Another navigation", "kept navigating", "Still loading") {
			t.Errorf("run %d: the load after %s was disturbed:\n%s", i, b.code, out)
		}
	}
}

// With IgnoreHTTPSErrors (--ignore-https-errors), a self-signed test server
// loads; without it, the same URL is the certificate error above.
func TestIgnoreHTTPSErrors(t *testing.T) {
	t.Parallel()
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "<title>Self-signed</title><button>Pay</button>")
	}))
	defer tlsSrv.Close()
	c := connectServer(t, New(Config{}, ownManager(t, browser.Options{IgnoreHTTPSErrors: true})))
	out := c.ok("browser_navigate", map[string]any{"url": tlsSrv.URL + "/"})
	mustContain(t, out, "(HTTP 200)", "Title: <page-content>Self-signed</page-content>")
	mustContain(t, c.ok("browser_snapshot", nil), `button "Pay"`)
}

// --device emulates a Playwright device: its viewport, user agent and
// touch reach the page (a page with no viewport meta lays out 980 px wide,
// as on the phone: screen.width is the device's).
func TestDeviceEmulation(t *testing.T) {
	t.Parallel()
	c := connectServer(t, New(Config{}, ownManager(t, browser.Options{Device: "iPhone 15"})))
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	out := c.ok("browser_evaluate", map[string]any{"function": "() => [screen.width, navigator.userAgent.includes('iPhone'), navigator.maxTouchPoints > 0].join(' ')"})
	mustContain(t, out, `"393 true true"`)
}

// With an upstream proxy (--proxy-server), the guard sends requests on
// through it: a name only the proxy knows loads; a host on the bypass
// list goes direct (and, unknown to DNS, fails as it would without a
// proxy); loopback always goes direct.
func TestUpstreamProxy(t *testing.T) {
	t.Parallel()
	target, _ := url.Parse(fx.URL)
	var mu sync.Mutex
	var seen []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.String())
		mu.Unlock()
		if r.Method == http.MethodConnect || r.URL.Hostname() != "shop.test" {
			http.Error(w, "this test proxy knows shop.test only", http.StatusBadGateway)
			return
		}
		// shop.test is the fixture, as only this proxy knows.
		(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(target); pr.Out.Host = target.Host }}).ServeHTTP(w, r)
	}))
	defer proxy.Close()
	pu, _ := url.Parse(proxy.URL)
	c := connect(t, Config{Upstream: Upstream{URL: pu, Bypass: []string{"*.direct.test"}}})
	out := c.ok("browser_navigate", map[string]any{"url": "http://shop.test/form.html"})
	mustContain(t, out, "Title: <page-content>Sign in</page-content>")
	r := c.call("browser_navigate", map[string]any{"url": "http://www.direct.test/"})
	if !r.IsError || !strings.Contains(r.Text, "ERR_NAME_NOT_RESOLVED") {
		t.Errorf("a bypassed host went through the proxy, or did not fail as unknown to DNS:\n%s", r.Text)
	}
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	mu.Lock()
	defer mu.Unlock()
	for _, s := range seen {
		if strings.Contains(s, "direct.test") || strings.Contains(s, "127.0.0.1") {
			t.Errorf("the proxy saw %q, which should have gone direct", s)
		}
	}
	if len(seen) == 0 || !strings.Contains(strings.Join(seen, " "), "GET http://shop.test/form.html") {
		t.Errorf("the proxy did not carry the load of shop.test: %q", seen)
	}
}

// --user-data-dir: the default role works in the profile's own context,
// so a cookie set in one server's life is there in the next one's, and a
// Chromium that dies is started again.
func TestUserDataDirPersists(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := func(check func(c *client, p *browser.Profile)) {
		p, err := browser.StartProfile(browser.Options{Headless: true, DriverLog: testLog{t}}, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		m := browser.NewManager(browser.Options{Endpoints: []browser.Endpoint{{URL: p.URL, UseDefaultContext: true}},
			ActionTimeout: 3 * time.Second, NavigationTimeout: 10 * time.Second, DriverLog: testLog{t}})
		defer m.Close()
		check(connectServer(t, New(Config{}, m)), p)
	}
	run(func(c *client, _ *browser.Profile) {
		c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
		c.ok("browser_evaluate", map[string]any{"function": "() => { document.cookie = 'kept=yes; max-age=3600; path=/'; }"})
	})
	run(func(c *client, p *browser.Profile) {
		c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
		mustContain(t, c.ok("browser_evaluate", map[string]any{"function": "() => document.cookie"}), "kept=yes")
		// Killed, the profile's Chromium is started again, and the plan
		// of the call that met its death works.
		_ = syscall.Kill(-p.PID(), syscall.SIGKILL)
		r := c.call("browser_navigate", map[string]any{"url": fx.Page("form.html")})
		if !r.IsError {
			t.Logf("the first call after the kill worked")
		} else {
			t.Logf("the first call after the kill: %s", r.code())
		}
		for i := 0; r.IsError && i < 5; i++ {
			time.Sleep(500 * time.Millisecond)
			r = c.call("browser_navigate", map[string]any{"url": fx.Page("form.html")})
		}
		if r.IsError {
			t.Fatalf("after Chromium was killed, navigating still fails:\n%s", r.Text)
		}
		mustContain(t, r.Text, "Title: <page-content>Sign in</page-content>")
	})
}
