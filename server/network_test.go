package server

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/retrace-dev/retrace/llmerr"
)

// requestID returns the number browser_network_requests gives the last
// request whose line contains what.
func requestID(t *testing.T, list, what string) int {
	t.Helper()
	id := 0
	for _, line := range strings.Split(list, "\n") {
		if m := regexp.MustCompile(`^#(\d+) `).FindStringSubmatch(line); m != nil && strings.Contains(line, what) {
			id, _ = strconv.Atoi(m[1])
		}
	}
	if id == 0 {
		t.Fatalf("no numbered request with %q:\n%s", what, list)
	}
	return id
}

func TestNetworkToolsNeedTheirCap(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	for _, name := range []string{"browser_network_request", "browser_route", "browser_unroute", "browser_network_conditions"} {
		if c.listedArgs()[name] != nil {
			t.Errorf("%s is listed without --caps network", name)
		}
	}
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_api.html")})
	if list := c.ok("browser_network_requests", map[string]any{"filter": "_api"}); strings.Contains(list, "#1 ") {
		t.Errorf("requests are numbered without --caps network:\n%s", list)
	}
	all := connect(t, Config{Caps: []string{"all"}})
	for _, name := range []string{"browser_network_request", "browser_route", "browser_unroute", "browser_network_conditions", "browser_pdf_save"} {
		if all.listedArgs()[name] == nil {
			t.Errorf("%s is not listed with --caps all", name)
		}
	}
}

func TestNetworkRequestDetails(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{Caps: []string{"network"}})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_api.html")})
	snap := c.ok("browser_snapshot", nil)
	c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Send address"`)})
	c.ok("browser_wait_for", map[string]any{"text": "shipping 422"})
	list := c.ok("browser_network_requests", nil)
	id := requestID(t, list, "POST "+fx.URL+"/eval/api/shipping → 422")

	res := c.ok("browser_network_request", map[string]any{"id": id})
	mustContain(t, res, "#"+strconv.Itoa(id)+" POST "+fx.URL+"/eval/api/shipping → 422",
		"Timing: ", "waiting for the first byte",
		"Request headers (", "content-type: application/json",
		"authorization: (hidden, 19 characters)", "[1 secret value hidden; secrets=true shows them]",
		"Request body (", `{"street":"","delivery":"express"}`,
		"Response headers (", "Response body (", "Check the highlighted fields.")
	if strings.Contains(res, "s3cret-token") {
		t.Errorf("the Authorization header was shown without secrets=true:\n%s", res)
	}
	// The site's words are fenced like a snapshot's.
	if !strings.Contains(res, "<page-content>") {
		t.Errorf("bodies are not fenced:\n%s", res)
	}
	mustContain(t, c.ok("browser_network_request", map[string]any{"id": id, "secrets": true}), "authorization: Bearer s3cret-token")

	// The document itself: HTML is text; its body is the page's source.
	doc := requestID(t, c.ok("browser_network_requests", map[string]any{"filter": "_api.html"}), "_api.html")
	mustContain(t, c.ok("browser_network_request", map[string]any{"id": doc}), "Response body (", "text/html", "async function fares()")

	// A number this tab never gave is an error that lists what there is.
	r := c.fail("browser_network_request", map[string]any{"id": 9999}, llmerr.InvalidParams)
	mustContain(t, r.Text, "There is no request #9999 in the current tab.", "browser_network_requests()")
	c.fail("browser_network_request", map[string]any{}, llmerr.InvalidParams)
	c.fail("browser_network_request", map[string]any{"id": "three"}, llmerr.InvalidParams)
}

func TestRouteStubsAndUnroute(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{Caps: []string{"network"}})
	// A stub set before any page: the context that opens gets it.
	res := c.ok("browser_route", map[string]any{"pattern": "**/eval/api/fares*", "status": 503, "body": `{"error":"fares are down"}`})
	mustContain(t, res, "Stubbed **/eval/api/fares* → 503.", `browser_unroute(pattern="**/eval/api/fares*")`)
	nav := c.ok("browser_navigate", map[string]any{"url": fx.Page("_api.html")})
	// Every result of the role lists the stub while it is set.
	mustContain(t, nav, "Stubbed requests (browser_unroute removes): **/eval/api/fares* → 503 (0 answered)")
	snap := c.ok("browser_snapshot", nil)
	load := refOf(t, snap, `button "Load fares"`)
	c.ok("browser_click", map[string]any{"ref": load})
	res = c.ok("browser_wait_for", map[string]any{"text": "fares 503"})
	mustContain(t, res, `fares are down`, "**/eval/api/fares* → 503 (1 answered)")
	id := requestID(t, c.ok("browser_network_requests", nil), "/eval/api/fares")
	mustContain(t, c.ok("browser_network_request", map[string]any{"id": id}),
		`Answered by the stub of browser_route(pattern="**/eval/api/fares*"), not by the site.`, "application/json")

	// The stub outlives browser_close: the role keeps it.
	c.ok("browser_close", nil)
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_api.html")})
	snap = c.ok("browser_snapshot", nil)
	c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Load fares"`)})
	c.ok("browser_wait_for", map[string]any{"text": "fares 503"})

	// The same pattern again replaces the answer: here, a failure.
	res = c.ok("browser_route", map[string]any{"pattern": "**/eval/api/fares*", "abort": "connectionrefused"})
	mustContain(t, res, "Replaced the stub of **/eval/api/fares*", "→ fails (connectionrefused)")
	c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Load fares"`)})
	c.ok("browser_wait_for", map[string]any{"text": "fares failed"})
	mustContain(t, c.ok("browser_network_requests", map[string]any{"filter": "fares"}), "FAILED net::ERR_CONNECTION_REFUSED")

	// A method filter leaves other methods to the site; a regex works as a
	// pattern.
	c.ok("browser_route", map[string]any{"pattern": "/eval/api/ship/", "method": "GET", "status": 500})
	c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Send address"`)})
	c.ok("browser_wait_for", map[string]any{"text": "shipping 422"})

	// Unroute, and the site answers again; the results stop listing stubs.
	mustContain(t, c.ok("browser_unroute", map[string]any{"pattern": "**/eval/api/fares*"}), "Removed the stub of **/eval/api/fares*")
	r := c.fail("browser_unroute", map[string]any{"pattern": "**/nothing"}, llmerr.InvalidParams)
	mustContain(t, r.Text, `this role's stubs are "/eval/api/ship/"`)
	mustContain(t, c.ok("browser_unroute", nil), "Removed 1 stub")
	c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Load fares"`)})
	res = c.ok("browser_wait_for", map[string]any{"text": "fares 200"})
	if strings.Contains(res, "Stubbed requests") {
		t.Errorf("a result lists stubs after browser_unroute:\n%s", res)
	}

	// Bad stubs say what to write.
	for _, args := range []map[string]any{
		{"pattern": ""},
		{"pattern": "/([/"},
		{"pattern": "**/x", "abort": "exploded"},
		{"pattern": "**/x", "abort": "failed", "status": 500},
		{"pattern": "**/x", "status": 999},
	} {
		c.fail("browser_route", args, llmerr.InvalidParams)
	}
}

func TestNetworkConditions(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{Caps: []string{"network"}})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_api.html")})
	snap := c.ok("browser_snapshot", nil)
	load := refOf(t, snap, `button "Load fares"`)

	mustContain(t, c.ok("browser_network_conditions", map[string]any{"offline": true}), "The role is offline")
	c.ok("browser_click", map[string]any{"ref": load})
	res := c.ok("browser_wait_for", map[string]any{"text": "fares failed"})
	mustContain(t, res, "Network conditions: offline")
	mustContain(t, c.ok("browser_network_requests", map[string]any{"filter": "fares"}), "ERR_INTERNET_DISCONNECTED")

	// Slow 3G adds two seconds to each request (DevTools' figure): the
	// page measures its own fetch.
	mustContain(t, c.ok("browser_network_conditions", map[string]any{"preset": "slow-3g"}), "The role's network is slow-3g: 2000 ms added")
	c.ok("browser_click", map[string]any{"ref": load})
	res = c.ok("browser_wait_for", map[string]any{"text": "fares 200"})
	m := regexp.MustCompile(`fares 200 in (\d+) ms`).FindStringSubmatch(res)
	if m == nil {
		t.Fatalf("no fetch time in:\n%s", res)
	}
	if ms, _ := strconv.Atoi(m[1]); ms < 1900 {
		t.Errorf("a slow-3g fetch took %d ms; the preset adds 2000 ms of latency", ms)
	}
	mustContain(t, res, "Network conditions: slow-3g")

	// The conditions are the role's: a fresh browser gets them from its
	// first page on.
	c.ok("browser_close", nil)
	mustContain(t, c.ok("browser_navigate", map[string]any{"url": fx.Page("_api.html")}), "Network conditions: slow-3g")
	load = refOf(t, c.ok("browser_snapshot", nil), `button "Load fares"`)
	c.ok("browser_click", map[string]any{"ref": load})
	res = c.ok("browser_wait_for", map[string]any{"text": "fares 200"})
	if m := regexp.MustCompile(`fares 200 in (\d+) ms`).FindStringSubmatch(res); m == nil {
		t.Fatalf("no fetch time in:\n%s", res)
	} else if ms, _ := strconv.Atoi(m[1]); ms < 1900 {
		t.Errorf("after browser_close, a slow-3g fetch took %d ms", ms)
	}

	mustContain(t, c.ok("browser_network_conditions", map[string]any{"preset": "none"}), "back to normal")
	c.ok("browser_click", map[string]any{"ref": load})
	res = c.ok("browser_wait_for", map[string]any{"text": "fares 200"})
	if m := regexp.MustCompile(`fares 200 in (\d+) ms`).FindStringSubmatch(res); m != nil {
		if ms, _ := strconv.Atoi(m[1]); ms >= 1900 {
			t.Errorf("the fetch still took %d ms after preset none", ms)
		}
	}
	if strings.Contains(res, "Network conditions") {
		t.Errorf("results list network conditions after they were restored:\n%s", res)
	}
	c.fail("browser_network_conditions", map[string]any{"preset": "dial-up"}, llmerr.InvalidParams)
}

// TestRouteKeepsTheOriginPolicy: a stub does not answer for an origin the
// policy refuses.
func TestRouteKeepsTheOriginPolicy(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{Caps: []string{"network"}, Origins: OriginPolicy{Blocked: []string{"localhost"}}})
	// The stub lets any page read it, so only the policy can refuse it.
	c.ok("browser_route", map[string]any{"pattern": "**/secret*", "body": "stubbed", "headers": map[string]any{"access-control-allow-origin": "*"}})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_api.html")})
	port := fx.URL[strings.LastIndex(fx.URL, ":")+1:]
	res := c.ok("browser_evaluate", map[string]any{"function": `async () => { try { return await (await fetch('http://localhost:` + port + `/secret')).text(); } catch (e) { return 'refused'; } }`})
	mustContain(t, res, "refused")
	// The same stub answers for an allowed origin.
	mustContain(t, c.ok("browser_evaluate", map[string]any{"function": `async () => (await fetch('/secret')).text()`}), "stubbed")
}
