package browser

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/llmerr"
)

// Endpoint is a browser retrace does not launch itself: a Playwright
// browser server (ws:// or wss://, reached with BrowserType.Connect; it
// launches a browser for each connection) or a Chromium that serves the
// DevTools protocol (http:// or https://, reached with ConnectOverCDP).
type Endpoint struct {
	URL string
	// Headers go with the connection (a token, for one). They are never
	// logged or shown.
	Headers map[string]string
	// UseDefaultContext, for a CDP endpoint, gives the default role the
	// browser's own default context (its profile, sign-ins and open tabs:
	// the user's browser, --cdp-endpoint) instead of a new one; it is
	// never closed, and neither are the tabs the user had.
	UseDefaultContext bool
}

// EndpointKind says which protocol an endpoint speaks.
type EndpointKind string

// The kinds of endpoint.
const (
	KindLocal      EndpointKind = "local"
	KindPlaywright EndpointKind = "playwright"
	KindCDP        EndpointKind = "cdp"
)

// Kind is the endpoint's protocol, from its scheme.
func (e Endpoint) Kind() EndpointKind {
	switch {
	case e.URL == "":
		return KindLocal
	case strings.HasPrefix(e.URL, "ws://"), strings.HasPrefix(e.URL, "wss://"):
		return KindPlaywright
	}
	return KindCDP
}

// String is the endpoint's URL without what may be a secret: user
// information and the query (a token in ?token=...) are left out.
func (e Endpoint) String() string {
	if e.URL == "" {
		return "local Chromium"
	}
	return Redact(e.URL)
}

// OnThisMachine reports whether the endpoint's browser runs on this
// machine: the local Chromium, or an endpoint on a loopback address. Only
// such a browser can reach a proxy on this machine's loopback.
func (e Endpoint) OnThisMachine() bool {
	if e.URL == "" {
		return true
	}
	u, err := url.Parse(e.URL)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.IsLoopback()
}

// Redact returns raw without its user information and query.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an endpoint URL that does not parse)"
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "…"
	}
	u.Fragment = ""
	return u.String()
}

// ParseEndpoint checks raw as an endpoint URL: ws(s):// for a Playwright
// browser server, http(s):// for a CDP endpoint, with a host.
func ParseEndpoint(raw string, headers map[string]string) (Endpoint, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return Endpoint{}, fmt.Errorf("%s does not parse as a URL", Redact(raw))
	}
	switch u.Scheme {
	case "ws", "wss", "http", "https":
	default:
		return Endpoint{}, fmt.Errorf("%s: want ws:// or wss:// (a Playwright browser server) or http:// or https:// (a CDP endpoint)", Redact(raw))
	}
	if u.Host == "" {
		return Endpoint{}, fmt.Errorf("%s has no host", Redact(raw))
	}
	return Endpoint{URL: u.String(), Headers: headers}, nil
}

// Seat is one session's place among the manager's sources. Every context
// made with it (ContextOptions.Seat) lives on the same source; when that
// source cannot be reached, the seat moves to another and the contexts
// left on the old one are lost. Release it when the session ends.
type Seat struct {
	m   *Manager
	src *source // under m.placeMu; nil until placed
	out bool    // released
}

// NewSeat returns a seat for a new session; it is placed when its first
// context is made.
func (m *Manager) NewSeat() *Seat { return &Seat{m: m} }

// Release gives the seat's place back.
func (s *Seat) Release() {
	s.m.placeMu.Lock()
	defer s.m.placeMu.Unlock()
	if s.src != nil && !s.out {
		s.src.seats--
	}
	s.src, s.out = nil, true
}

// Where says where the seat's session runs, for a status line: the
// endpoint (redacted), its kind and how many sessions it holds.
func (s *Seat) Where() string {
	s.m.placeMu.Lock()
	defer s.m.placeMu.Unlock()
	if s.src == nil {
		if len(s.m.sources) == 1 {
			return s.m.sources[0].describe() + "; not started for this session yet"
		}
		return fmt.Sprintf("not placed yet: the first page goes to the healthy one of %d browser endpoints with the fewest sessions", len(s.m.sources))
	}
	return s.src.describe()
}

// describe names a source and its load. Call with placeMu held.
func (src *source) describe() string {
	kind := map[EndpointKind]string{KindLocal: "launched by retrace", KindPlaywright: "Playwright browser server",
		KindCDP: "CDP endpoint"}[src.ep.Kind()]
	d := fmt.Sprintf("%s (%s; %d live session", src.ep, kind, src.seats)
	if src.seats != 1 {
		d += "s"
	}
	if n := len(src.m.sources); n > 1 {
		d += fmt.Sprintf(" of this process, endpoint %d of %d", slices.Index(src.m.sources, src)+1, n)
	}
	return d + ")"
}

// EndpointStatus is one source's state, for status reports.
type EndpointStatus struct {
	Endpoint string // redacted
	Kind     EndpointKind
	Sessions int
	// Down is set while placement avoids the endpoint: its last connect
	// failed or its connection was lost. It is tried again after
	// RetryAfter.
	Down       bool
	RetryAfter time.Duration
}

// Status reports every source.
func (m *Manager) Status() []EndpointStatus {
	m.placeMu.Lock()
	defer m.placeMu.Unlock()
	now := time.Now()
	var out []EndpointStatus
	for _, src := range m.sources {
		st := EndpointStatus{Endpoint: src.ep.String(), Kind: src.ep.Kind(), Sessions: src.seats}
		if src.downUntil.After(now) {
			st.Down, st.RetryAfter = true, src.downUntil.Sub(now).Round(time.Second)
		}
		out = append(out, st)
	}
	return out
}

// place returns the source for seat's next context, moving the seat if its
// source is down or already tried by this call. The choice is the source
// with the fewest seats among those up, else the one that comes back
// first among those down: a call always tries before it fails. Nil when
// every source was tried.
func (m *Manager) place(seat *Seat, tried map[*source]bool) *source {
	m.placeMu.Lock()
	defer m.placeMu.Unlock()
	now := time.Now()
	down := func(src *source) bool { return src.downUntil.After(now) }
	if cur := seat.src; cur != nil && !tried[cur] && !down(cur) {
		return cur
	}
	var best *source
	for _, src := range m.sources {
		if tried[src] {
			continue
		}
		switch {
		case best == nil:
			best = src
		case down(best) && !down(src):
			best = src
		case down(best) == down(src) && !down(src) && src.seats < best.seats:
			best = src
		case down(best) && down(src) && src.downUntil.Before(best.downUntil):
			best = src
		}
	}
	if best == nil {
		return nil
	}
	if seat.out {
		// A call that outlived its session's end: it gets a browser, but
		// the session counts nowhere.
		return best
	}
	if seat.src != best {
		if seat.src != nil {
			seat.src.seats--
			m.opts.Logger.Info("session moved to another browser endpoint", "from", seat.src.ep.String(), "to", best.ep.String())
		}
		seat.src = best
		best.seats++
	}
	return best
}

// markDown keeps placement off src for a while after it could not be
// reached or its connection was lost: 2 s, doubling with each failure in
// a row, at most a minute. Its sessions move on their next new context,
// and new ones go elsewhere, while another endpoint is up.
func (m *Manager) markDown(src *source, err error) {
	m.placeMu.Lock()
	defer m.placeMu.Unlock()
	src.fails++
	wait := min(2*time.Second<<min(src.fails-1, 5), time.Minute)
	src.downUntil = time.Now().Add(wait)
	m.opts.Logger.Warn("browser endpoint unreachable; placing sessions elsewhere", "endpoint", src.ep.String(),
		"retry_in", wait.String(), "err", llmerr.FirstLine(err.Error()))
}

// markUp records that src answered.
func (m *Manager) markUp(src *source) {
	m.placeMu.Lock()
	defer m.placeMu.Unlock()
	src.fails, src.downUntil = 0, time.Time{}
}

// connectError is a failure to reach an endpoint: refused, timed out,
// closed, or the wrong version.
type connectError struct{ e *llmerr.Error }

func (c *connectError) Error() string { return c.e.Error() }
func (c *connectError) Unwrap() error { return c.e }

func isConnectError(err error) bool {
	var ce *connectError
	return errors.As(err, &ce)
}

// unreachable is the error of a call for which no endpoint could be
// reached: the one error when there was one, else BROWSER_UNREACHABLE
// naming every endpoint's failure. A version mismatch stays
// SETUP_REQUIRED: no retry fixes it.
func (m *Manager) unreachable(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	var causes []string
	setup := 0
	for _, err := range errs {
		if e, ok := llmerr.As(err); ok {
			if e.Code == llmerr.SetupRequired {
				setup++
			}
			causes = append(causes, fmt.Sprint(e.Details["endpoint"])+": "+e.Cause)
		}
	}
	if setup == len(errs) {
		return errs[0]
	}
	return &llmerr.Error{Code: llmerr.BrowserUnreachable, Err: errors.Join(errs...),
		Message: fmt.Sprintf("None of the %d browser endpoints could be reached.", len(errs)),
		Cause:   strings.Join(causes, "; "),
		Note:    "Each is tried again on the next call; one that comes back is used again.",
	}
}

// connect reaches src's endpoint with the driver.
func (src *source) connect() (playwright.Browser, error) {
	m := src.m
	timeout := float64(m.opts.ConnectTimeout.Milliseconds())
	var b playwright.Browser
	var err error
	if src.ep.Kind() == KindPlaywright {
		headers := launchHeader(src.ep, m.opts)
		b, err = src.drv.pw.Chromium.Connect(src.ep.URL, playwright.BrowserTypeConnectOptions{
			Headers: headers, Timeout: playwright.Float(timeout)})
	} else {
		b, err = src.drv.pw.Chromium.ConnectOverCDP(src.ep.URL, playwright.BrowserTypeConnectOverCDPOptions{
			Headers: src.ep.Headers, Timeout: playwright.Float(timeout)})
	}
	if err != nil {
		return nil, src.connectFailed(err)
	}
	b.OnDisconnected(func(b playwright.Browser) {
		// On the dispatch goroutine: record only, never call Playwright.
		if _, ours := src.closedByUs.LoadAndDelete(b); !ours {
			m.markDown(src, errors.New("the connection closed"))
		}
	})
	return b, nil
}

// launchHeader adds to a Playwright server's headers the launch options
// retrace would use itself (headless, the quiet flags), unless the URL or
// the headers already give some: a browser server launches a browser for
// each connection, with what the client asks. The executable is the
// server's own choice: it ignores a client's path.
func launchHeader(ep Endpoint, o Options) map[string]string {
	h := map[string]string{}
	for k, v := range ep.Headers {
		h[k] = v
	}
	if u, err := url.Parse(ep.URL); err == nil && u.Query().Has("launch-options") {
		return h
	}
	for k := range h {
		if strings.EqualFold(k, "x-playwright-launch-options") {
			return h
		}
	}
	lo, _ := json.Marshal(map[string]any{"headless": o.Headless, "args": append(slices.Clone(baseArgs), o.Args...)})
	h["x-playwright-launch-options"] = string(lo)
	return h
}

var versionMismatch = regexp.MustCompile(`server version: v?([0-9.]+)[\s\S]*client version: v?([0-9.]+)`)

// connectFailed turns a failed connect into an error naming the endpoint:
// SETUP_REQUIRED for a version mismatch, which only a person can fix, and
// BROWSER_UNREACHABLE otherwise.
func (src *source) connectFailed(err error) error {
	where := src.ep.String()
	if m := versionMismatch.FindStringSubmatch(err.Error()); m != nil {
		return &connectError{&llmerr.Error{Code: llmerr.SetupRequired, Err: err,
			Message: fmt.Sprintf("The Playwright browser server at %s runs Playwright %s; retrace's driver is %s, and the two must match.", where, m[1], DriverVersion),
			Cause:   fmt.Sprintf("Playwright version mismatch: server %s, client (retrace's driver) %s", m[1], DriverVersion),
			Note:    fmt.Sprintf("A person must run the browser server with Playwright %s (npx playwright@%s run-server), or point --browser-endpoint at one that does. Retrying will fail the same way until then.", DriverVersion, DriverVersion),
			Details: map[string]any{"endpoint": where, "server_version": m[1], "driver_version": DriverVersion}}}
	}
	cause := llmerr.FirstLine(err.Error())
	// Playwright quotes the URL it failed on, query and all.
	cause = strings.ReplaceAll(cause, src.ep.URL, where)
	return &connectError{&llmerr.Error{Code: llmerr.BrowserUnreachable, Err: err,
		Message: fmt.Sprintf("The browser endpoint %s could not be reached.", where),
		Cause:   cause,
		Note:    "It is tried again on the next call; one that comes back is used again.",
		Details: map[string]any{"endpoint": where}}}
}
