package server

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/llmerr"
)

// The tools of --caps network: one request whole, answers stubbed by URL
// pattern, and the network's speed. Stubs and conditions belong to a role:
// they outlive browser_close (the next context gets them again) and every
// result of the role lists them, so an agent does not forget a stub it
// set three pages ago.

type requestArgs struct {
	ID      int  `json:"id" jsonschema:"The request's number, as browser_network_requests lists it (#12)"`
	Secrets bool `json:"secrets,omitempty" jsonschema:"Show Authorization, Cookie and Set-Cookie values (hidden by default)"`
	roleArg
}

type routeArgs struct {
	Pattern     string            `json:"pattern" jsonschema:"URL glob (**/api/orders*) or /regex/"`
	Method      string            `json:"method,omitempty" jsonschema:"Only this HTTP method (default: any)"`
	Status      int               `json:"status,omitempty" jsonschema:"Status of the answer (default 200)"`
	Body        string            `json:"body,omitempty" jsonschema:"Body of the answer"`
	ContentType string            `json:"contentType,omitempty" jsonschema:"Content-Type of the answer (default: application/json when body is JSON, else text/plain)"`
	Headers     map[string]string `json:"headers,omitempty" jsonschema:"More response headers"`
	Abort       string            `json:"abort,omitempty" jsonschema:"Fail the request instead: failed, aborted, timedout, connectionrefused, connectionreset, internetdisconnected, namenotresolved, accessdenied, blockedbyclient"`
	roleArg
}

type unrouteArgs struct {
	Pattern string `json:"pattern,omitempty" jsonschema:"The pattern given to browser_route (default: every stub)"`
	roleArg
}

type conditionsArgs struct {
	Offline bool   `json:"offline,omitempty" jsonschema:"No network at all"`
	Preset  string `json:"preset,omitempty" jsonschema:"Speed: slow-3g, fast-3g (slow-4g), fast-4g, or none (default)"`
	roleArg
}

// ownsNetworkLines are the tools whose own result says what the role's
// stubs and conditions are: no line repeats it.
var ownsNetworkLines = map[string]bool{"browser_route": true, "browser_unroute": true, "browser_network_conditions": true}

func (s *Server) addNetworkTools() {
	addTool(s, def("browser_network_request", "One network request", readOnly, "One request of browser_network_requests whole: headers, bodies, timing."), s.networkRequest)
	addTool(s, def("browser_route", "Stub requests", 0, "Answer requests whose URL matches pattern with a status and body, or fail them (abort), in this role until browser_unroute."), s.route)
	addTool(s, def("browser_unroute", "Remove stubs", 0, "Remove a stub of browser_route, or all of them."), s.unroute)
	addTool(s, def("browser_network_conditions", "Network conditions", 0, "Emulate offline or a slow network (slow-3g, fast-3g, fast-4g) in this role; preset none restores it."), s.networkConditions)
}

// Bounds of what browser_network_request shows.
const (
	maxBodyShown = 4000 // characters of a text body
	maxHeaders   = 60
)

// secretHeaders are hidden unless the call asks for them.
var secretHeaders = map[string]bool{"authorization": true, "proxy-authorization": true, "cookie": true, "set-cookie": true}

func (s *Server) networkRequest(ctx context.Context, c *call, in requestArgs) (*response, error) {
	r, tab, unlock, err := c.lockTab()
	if err != nil {
		return nil, err
	}
	defer unlock()
	e, ok := tab.Request(in.ID)
	if !ok {
		all, _ := tab.Requests()
		cause := "this tab has made no request yet"
		if n := len(all); n > 0 {
			cause = fmt.Sprintf("this tab keeps requests #%d to #%d (a tab's numbers start again in another tab)", all[0].ID, all[n-1].ID)
		}
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool, URL: tab.Page.URL(),
			Message: fmt.Sprintf("There is no request #%d in the current tab.", in.ID), Cause: cause,
			Actions: []llmerr.Action{llmerr.Call("browser_network_requests", "list the requests with their numbers")}}
	}
	req := e.Request()
	wait := s.cfg.ActionTimeout
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s\n", e.ID, e.String())
	if how := r.stubbedBy(req); how != "" {
		fmt.Fprintf(&b, "Answered by %s, not by the site.\n", how)
	}
	if t := req.Timing(); t != nil && t.ResponseStart > 0 {
		b.WriteString(timingLine(t) + "\n")
	}
	headers := func(title string, h map[string]string, err error) {
		if err != nil {
			fmt.Fprintf(&b, "%s: not available (%s)\n", title, llmerr.FirstLine(err.Error()))
			return
		}
		lines, hidden := headerLines(h, in.Secrets)
		fmt.Fprintf(&b, "%s (%d):\n", title, len(h))
		b.WriteString(strings.Join(fenceBlock(lines), "\n") + "\n")
		if hidden > 0 {
			fmt.Fprintf(&b, "[%d secret value%s hidden; secrets=true shows them]\n", hidden, plural(hidden, "s"))
		}
	}
	type headersResult struct {
		h   map[string]string
		err error
	}
	rh, ok := bounded(wait, func() headersResult { h, err := req.AllHeaders(); return headersResult{h, err} })
	if !ok {
		rh.err = fmt.Errorf("the browser did not answer within %s", wait)
	}
	headers("Request headers", rh.h, rh.err)
	if post, err := req.PostDataBuffer(); err == nil && len(post) > 0 {
		b.WriteString(bodySection("Request body", rh.h["content-type"], post))
	}
	if e.Failed != "" {
		fmt.Fprintf(&b, "No response: %s.\n", e.Failed)
		return textResponse(strings.TrimRight(b.String(), "\n")), nil
	}
	type respResult struct {
		resp playwright.Response
		err  error
	}
	rr, ok := bounded(wait, func() respResult { resp, err := req.Response(); return respResult{resp, err} })
	switch {
	case !ok:
		b.WriteString("Response: not available yet (the browser did not answer in time); call again.\n")
	case rr.err != nil:
		fmt.Fprintf(&b, "Response: not available (%s).\n", llmerr.FirstLine(rr.err.Error()))
	case rr.resp == nil:
		b.WriteString("Response: none yet; the request is still running.\n")
	default:
		resp := rr.resp
		hs, ok := bounded(wait, func() headersResult { h, err := resp.AllHeaders(); return headersResult{h, err} })
		if !ok {
			hs.err = fmt.Errorf("the browser did not answer within %s", wait)
		}
		headers("Response headers", hs.h, hs.err)
		type bodyResult struct {
			b   []byte
			err error
		}
		body, ok := bounded(min(wait, 2*time.Second), func() bodyResult { b, err := resp.Body(); return bodyResult{b, err} })
		switch {
		case !ok:
			// Chromium ends a response when the page takes its body; a
			// script that reads only the status leaves it open.
			b.WriteString("Response body: not available: the response has not finished (the page may not have read its body yet); call again later.\n")
		case body.err != nil:
			fmt.Fprintf(&b, "Response body: not available (%s).\n", bodyUnavailable(body.err))
		default:
			b.WriteString(bodySection("Response body", hs.h["content-type"], body.b))
		}
	}
	return textResponse(strings.TrimRight(b.String(), "\n")), nil
}

// timingLine renders a request's timing: each phase Chromium measured, in
// milliseconds from the request's start (-1 where a phase did not happen).
func timingLine(t *playwright.RequestTiming) string {
	var parts []string
	phase := func(name string, from, to float64) {
		if from >= 0 && to >= from {
			parts = append(parts, fmt.Sprintf("%s %.0f ms", name, to-from))
		}
	}
	phase("DNS", t.DomainLookupStart, t.DomainLookupEnd)
	phase("connect", t.ConnectStart, t.ConnectEnd)
	phase("waiting for the first byte", max(t.RequestStart, 0), t.ResponseStart)
	if t.ResponseEnd >= t.ResponseStart {
		phase("download", t.ResponseStart, t.ResponseEnd)
		parts = append(parts, fmt.Sprintf("total %.0f ms", t.ResponseEnd))
	}
	return "Timing: " + strings.Join(parts, ", ")
}

// headerLines renders headers sorted by name, secrets hidden unless shown.
func headerLines(h map[string]string, secrets bool) ([]string, int) {
	names := slices.Sorted(maps.Keys(h))
	hidden := 0
	var lines []string
	for i, name := range names {
		if i == maxHeaders {
			lines = append(lines, fmt.Sprintf("… %d more", len(names)-maxHeaders))
			break
		}
		v := h[name]
		if secretHeaders[strings.ToLower(name)] && !secrets {
			v = fmt.Sprintf("(hidden, %d characters)", utf8.RuneCountInString(v))
			hidden++
		}
		lines = append(lines, name+": "+oneLineCut(v, 300))
	}
	return lines, hidden
}

// bodySection shows a body: text bounded and fenced (it is the site's),
// anything else summarised.
func bodySection(title, contentType string, body []byte) string {
	kind := contentType
	if kind == "" {
		kind = http.DetectContentType(body)
	}
	head := fmt.Sprintf("%s (%s, %s)", title, browser.HumanSize(int64(len(body))), oneLineCut(kind, 80))
	if !textual(kind, body) {
		return head + ": binary, not shown.\n"
	}
	text := strings.ToValidUTF8(string(body), "�")
	note := ""
	if r := []rune(text); len(r) > maxBodyShown {
		text = string(r[:maxBodyShown])
		note = fmt.Sprintf("[first %d of %d characters shown]\n", maxBodyShown, len(r))
	}
	return head + ":\n" + strings.Join(fenceBlock(strings.Split(text, "\n")), "\n") + "\n" + note
}

// textual reports whether a body of that content type reads as text.
func textual(contentType string, body []byte) bool {
	ct := strings.ToLower(contentType)
	for _, t := range []string{"text/", "json", "xml", "javascript", "ecmascript", "x-www-form-urlencoded", "graphql", "csv", "yaml"} {
		if strings.Contains(ct, t) {
			return true
		}
	}
	return utf8.Valid(body) && !slices.Contains(body, 0) && strings.HasPrefix(http.DetectContentType(body), "text/")
}

// bodyUnavailable says why Chromium has no body to give.
func bodyUnavailable(err error) string {
	low := strings.ToLower(err.Error())
	switch {
	case strings.Contains(low, "redirect"):
		return "a redirect has no body"
	case strings.Contains(low, "no resource with given identifier") || strings.Contains(low, "evicted"):
		return "the browser no longer keeps it; load the page again to see it"
	}
	return llmerr.FirstLine(err.Error())
}

// stub is an answer browser_route gave a role for requests matching its
// pattern.
type stub struct {
	args routeArgs
	// url is the pattern as Playwright takes it: a glob string, or a
	// compiled /regex/.
	url any
	// hits counts the requests it answered.
	hits atomic.Int64
	// reqs remembers the requests it answered, for browser_network_request.
	reqs sync.Map // playwright.Request → struct{}
}

// describe is the stub as results list it.
func (st *stub) describe() string {
	a := st.args
	what := fmt.Sprintf("→ %d", a.Status)
	if a.Abort != "" {
		what = "→ fails (" + a.Abort + ")"
	}
	m := ""
	if a.Method != "" {
		m = a.Method + " "
	}
	return fmt.Sprintf("%s%s %s (%d answered)", m, a.Pattern, what, st.hits.Load())
}

// abortReasons are the error codes Playwright's Route.Abort takes.
var abortReasons = []string{"aborted", "accessdenied", "addressunreachable", "blockedbyclient", "blockedbyresponse",
	"connectionaborted", "connectionclosed", "connectionfailed", "connectionrefused", "connectionreset",
	"internetdisconnected", "namenotresolved", "timedout", "failed"}

func (s *Server) route(ctx context.Context, c *call, in routeArgs) (*response, error) {
	in.Pattern = strings.TrimSpace(in.Pattern)
	in.Method = strings.ToUpper(strings.TrimSpace(in.Method))
	in.Abort = strings.ToLower(strings.TrimSpace(in.Abort))
	bad := func(msg, cause string, fix llmerr.Action) error {
		return &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool, Message: msg, Cause: cause, Actions: []llmerr.Action{fix}}
	}
	example := llmerr.Call(c.tool, "for example", llmerr.A("pattern", "**/api/orders*"), llmerr.A("status", 500), llmerr.A("body", `{"error":"down"}`))
	if in.Pattern == "" {
		return nil, bad("pattern is empty.", "a stub answers the requests whose URL matches its pattern", example)
	}
	st := &stub{args: in, url: in.Pattern}
	if len(in.Pattern) > 2 && strings.HasPrefix(in.Pattern, "/") && strings.HasSuffix(in.Pattern, "/") {
		re, err := regexp.Compile(in.Pattern[1 : len(in.Pattern)-1])
		if err != nil {
			return nil, bad(fmt.Sprintf("pattern %s is not a valid regular expression: %v.", in.Pattern, err),
				"the /.../ form is a regular expression; anything else is a glob", example)
		}
		st.url = re
	}
	if in.Abort != "" {
		if !slices.Contains(abortReasons, in.Abort) {
			return nil, bad(fmt.Sprintf("%q is not a reason a request can fail with.", in.Abort),
				"abort is one of "+strings.Join(abortReasons, ", "),
				llmerr.Call(c.tool, "fail it as a refused connection", llmerr.A("pattern", in.Pattern), llmerr.A("abort", "connectionrefused")))
		}
		if in.Status != 0 || in.Body != "" {
			return nil, bad("abort cannot be given with status or body.", "a request either fails or is answered",
				llmerr.Call(c.tool, "answer it instead", llmerr.A("pattern", in.Pattern), llmerr.A("status", max(in.Status, 200))))
		}
	} else if in.Status == 0 {
		st.args.Status = 200
	}
	if st.args.Status != 0 && (st.args.Status < 100 || st.args.Status > 599) {
		return nil, bad(fmt.Sprintf("%d is not an HTTP status.", in.Status), "status is 100 to 599", example)
	}
	r, unlock, err := c.lockRole()
	if err != nil {
		return nil, err
	}
	defer unlock()
	// The same pattern again replaces the stub: what an agent means when it
	// changes its mind about the answer.
	replaced := r.dropStub(in.Pattern)
	if r.bctx != nil {
		if err := r.installStub(r.bctx, st); err != nil {
			return nil, llmerr.Classify(err, llmerr.Situation{Tool: c.tool})
		}
	}
	r.netMu.Lock()
	r.stubs = append(r.stubs, st)
	r.netMu.Unlock()
	verb := "Stubbed"
	if replaced {
		verb = "Replaced the stub of"
	}
	res := textResponse(fmt.Sprintf("%s %s. It applies to every tab of this role, now and after browser_close, until browser_unroute(pattern=%q).",
		verb, strings.TrimSuffix(st.describe(), " (0 answered)"), in.Pattern))
	return res, nil
}

// installStub routes the requests of st's pattern in bctx to st.
func (r *role) installStub(bctx playwright.BrowserContext, st *stub) error {
	policy := r.srv.cfg.Origins
	return bctx.Route(st.url, func(rt playwright.Route) {
		req := rt.Request()
		a := st.args
		if (a.Method != "" && req.Method() != a.Method) || policy.check(req.URL()) != "" {
			// A stub answers no request the origin policy refuses: the
			// policy's route fails it, as without the stub.
			_ = rt.Fallback()
			return
		}
		st.hits.Add(1)
		st.reqs.Store(req, struct{}{})
		if a.Abort != "" {
			_ = rt.Abort(a.Abort)
			return
		}
		headers := map[string]string{}
		maps.Copy(headers, a.Headers)
		ct := a.ContentType
		if ct == "" {
			ct = "text/plain; charset=utf-8"
			if b := strings.TrimSpace(a.Body); strings.HasPrefix(b, "{") || strings.HasPrefix(b, "[") {
				ct = "application/json"
			}
		}
		_ = rt.Fulfill(playwright.RouteFulfillOptions{Status: playwright.Int(a.Status), Body: a.Body, ContentType: playwright.String(ct), Headers: headers})
	})
}

// dropStub removes the stub of pattern from the role and its context, and
// reports whether there was one.
func (r *role) dropStub(pattern string) bool {
	i := slices.IndexFunc(r.stubs, func(st *stub) bool { return st.args.Pattern == pattern })
	if i < 0 {
		return false
	}
	if r.bctx != nil {
		_ = r.bctx.Unroute(r.stubs[i].url)
	}
	r.netMu.Lock()
	r.stubs = slices.Delete(r.stubs, i, i+1)
	r.netMu.Unlock()
	return true
}

// stubbedBy names the stub that answered req, or "".
func (r *role) stubbedBy(req playwright.Request) string {
	r.netMu.Lock()
	defer r.netMu.Unlock()
	for _, st := range r.stubs {
		if _, ok := st.reqs.Load(req); ok {
			return "the stub of browser_route(pattern=" + fmt.Sprintf("%q", st.args.Pattern) + ")"
		}
	}
	return ""
}

func (s *Server) unroute(ctx context.Context, c *call, in unrouteArgs) (*response, error) {
	r, unlock, err := c.lockRole()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if in.Pattern == "" {
		n := len(r.stubs)
		for len(r.stubs) > 0 {
			r.dropStub(r.stubs[0].args.Pattern)
		}
		if n == 0 {
			return textResponse("There were no stubs."), nil
		}
		return textResponse(fmt.Sprintf("Removed %d stub%s: requests reach the site again.", n, plural(n, "s"))), nil
	}
	if !r.dropStub(in.Pattern) {
		var have []string
		for _, st := range r.stubs {
			have = append(have, fmt.Sprintf("%q", st.args.Pattern))
		}
		cause := "this role has no stubs"
		if len(have) > 0 {
			cause = "this role's stubs are " + strings.Join(have, ", ")
		}
		actions := []llmerr.Action{llmerr.Call(c.tool, "remove every stub", llmerr.A("pattern", ""))}
		if len(r.stubs) > 0 {
			actions = append([]llmerr.Action{llmerr.Call(c.tool, "remove a stub by its own pattern", llmerr.A("pattern", r.stubs[0].args.Pattern))}, actions...)
		}
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool,
			Message: fmt.Sprintf("No stub has the pattern %q.", in.Pattern), Cause: cause, Actions: actions}
	}
	return textResponse(fmt.Sprintf("Removed the stub of %s: its requests reach the site again.", in.Pattern)), nil
}

// netPreset is a network speed Chromium's DevTools offers, in its figures:
// latency added to each request, throughput in bytes per second.
type netPreset struct {
	latency          float64
	download, upload float64
}

var netPresets = map[string]netPreset{
	"slow-3g": {latency: 2000, download: 500 * 1000 / 8 * 0.8, upload: 500 * 1000 / 8 * 0.8},
	"fast-3g": {latency: 562.5, download: 1.6 * 1000 * 1000 / 8 * 0.9, upload: 750 * 1000 / 8 * 0.9},
	// Newer DevTools call Fast 3G's figures Slow 4G.
	"slow-4g": {latency: 562.5, download: 1.6 * 1000 * 1000 / 8 * 0.9, upload: 750 * 1000 / 8 * 0.9},
	"fast-4g": {latency: 165, download: 9 * 1000 * 1000 / 8 * 0.9, upload: 1.5 * 1000 * 1000 / 8 * 0.9},
}

// netConditions is what browser_network_conditions set for a role.
type netConditions struct {
	offline bool
	preset  string
}

func (s *Server) networkConditions(ctx context.Context, c *call, in conditionsArgs) (*response, error) {
	preset := strings.ToLower(strings.TrimSpace(in.Preset))
	if preset == "none" {
		preset = ""
	}
	if _, ok := netPresets[preset]; preset != "" && !ok {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool,
			Message: fmt.Sprintf("%q is not a network preset.", in.Preset), Cause: "preset is slow-3g, fast-3g, slow-4g, fast-4g or none",
			Actions: []llmerr.Action{llmerr.Call(c.tool, "a slow mobile network", llmerr.A("preset", "slow-3g"))}}
	}
	r, unlock, err := c.lockRole()
	if err != nil {
		return nil, err
	}
	defer unlock()
	r.netCond.Store(&netConditions{offline: in.Offline, preset: preset})
	if r.bctx != nil {
		if err := r.bctx.SetOffline(in.Offline); err != nil {
			return nil, llmerr.Classify(err, llmerr.Situation{Tool: c.tool})
		}
		for _, t := range r.tabs {
			if err := r.throttle(t.Page); err != nil {
				return nil, llmerr.Classify(err, llmerr.Situation{Tool: c.tool, URL: t.URL()})
			}
		}
	}
	switch {
	case in.Offline:
		return textResponse("The role is offline: every request fails with net::ERR_INTERNET_DISCONNECTED until browser_network_conditions(offline=false)."), nil
	case preset != "":
		p := netPresets[preset]
		return textResponse(fmt.Sprintf("The role's network is %s: %.0f ms added to each request, %s/s down, %s/s up, until browser_network_conditions(preset=\"none\").",
			preset, p.latency, browser.HumanSize(int64(p.download)), browser.HumanSize(int64(p.upload)))), nil
	}
	return textResponse("The role's network is back to normal."), nil
}

// throttle applies the role's network speed to page through a DevTools
// session kept for the page's life (the emulation ends with the session).
// It makes Playwright calls: never from an event handler, and never with
// cdpMu held where an event handler could wait for it.
func (r *role) throttle(page playwright.Page) error {
	cond := r.netCond.Load()
	preset := ""
	if cond != nil {
		preset = cond.preset
	}
	r.cdpMu.Lock()
	defer r.cdpMu.Unlock()
	cdp := r.cdp[page]
	if cdp == nil {
		if preset == "" {
			return nil
		}
		var err error
		if cdp, err = page.Context().NewCDPSession(page); err != nil {
			return err
		}
		if r.cdp == nil {
			r.cdp = map[playwright.Page]playwright.CDPSession{}
		}
		r.cdp[page] = cdp
	}
	p := netPresets[preset]
	params := map[string]any{"offline": cond != nil && cond.offline, "latency": p.latency, "downloadThroughput": p.download, "uploadThroughput": p.upload}
	if preset == "" {
		params["latency"], params["downloadThroughput"], params["uploadThroughput"] = 0, -1, -1
	}
	_, err := cdp.Send("Network.emulateNetworkConditions", params)
	return err
}

// applyNetwork gives a new context the role's stubs and offline state.
func (r *role) applyNetwork(bctx playwright.BrowserContext) error {
	r.cdpMu.Lock()
	r.cdp = nil
	r.cdpMu.Unlock()
	for _, st := range r.stubs {
		if err := r.installStub(bctx, st); err != nil {
			return err
		}
	}
	if cond := r.netCond.Load(); cond != nil && cond.offline {
		return bctx.SetOffline(true)
	}
	return nil
}

// networkLines are what the role's results say of its stubs and network
// conditions while any is set.
func (r *role) networkLines() []string {
	r.netMu.Lock()
	defer r.netMu.Unlock()
	var out []string
	if len(r.stubs) > 0 {
		parts := make([]string, len(r.stubs))
		for i, st := range r.stubs {
			parts[i] = st.describe()
		}
		out = append(out, "Stubbed requests (browser_unroute removes): "+strings.Join(parts, "; "))
	}
	if cond := r.netCond.Load(); cond != nil && (cond.offline || cond.preset != "") {
		what := cond.preset
		if cond.offline {
			what = "offline"
		}
		out = append(out, "Network conditions: "+what+" (browser_network_conditions(preset=\"none\") restores them)")
	}
	return out
}
