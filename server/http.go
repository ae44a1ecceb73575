package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of HTTPOptions and of the http.Server made by NewHTTPServer.
const (
	DefaultMaxSessions    = 16
	DefaultMaxBodyBytes   = 1 << 20
	DefaultBodyTimeout    = 30 * time.Second
	DefaultSessionTimeout = 30 * time.Minute
	// MinAuthTokenLength is the shortest --auth-token accepted: a bearer
	// token on a network must resist guessing.
	MinAuthTokenLength = 16
)

// HTTPOptions configures the protections of the Streamable HTTP transport.
// Check reports what is wrong with them; HTTPHandler expects options that
// passed it and skips entries it cannot read (never widening access).
type HTTPOptions struct {
	// BindHost is the address the listener is bound to (--host). It decides
	// which Host headers are accepted: loopback names on a loopback address;
	// that address itself on another specific one; loopback names and any IP
	// literal on a wildcard address ("", 0.0.0.0, ::), where the machine's
	// names cannot be known. Empty is the wildcard, as for net.Listen.
	BindHost string
	// AllowedHosts are further Host header values to accept, each a name
	// (any port) or name:port; "*" accepts any Host (no DNS-rebinding
	// protection; for a reverse proxy that checks it).
	AllowedHosts []string
	// AllowedOrigins are browser origins (scheme://host[:port]) accepted
	// besides loopback ones; they also get CORS headers, so a browser client
	// served from them can connect. A request without Origin always passes.
	AllowedOrigins []string
	// AuthToken, when set, is the bearer token every request must carry.
	AuthToken string
	// InsecureNoAuth lets a non-loopback BindHost serve without AuthToken.
	InsecureNoAuth bool
	// MaxSessions caps live MCP sessions; 0 means no cap. A request that
	// would open one more gets 503.
	MaxSessions int
	// MaxBodyBytes caps a request body (413 beyond); 0 means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// BodyTimeout bounds reading one request body; 0 means
	// DefaultBodyTimeout. Responses, which may be long-lived event streams,
	// are never cut.
	BodyTimeout time.Duration
	// SessionTimeout closes a session idle this long; 0 means
	// DefaultSessionTimeout.
	SessionTimeout time.Duration
}

// ExposureError is Check's error for a non-loopback address served
// without a token.
type ExposureError struct {
	// BindHost is the address that other machines can reach.
	BindHost string
}

func (e *ExposureError) Error() string {
	host := e.BindHost
	if host == "" {
		host = `""`
	}
	return fmt.Sprintf("--host %s can be reached from other machines, and whoever reaches it drives the browser: "+
		"set a token with --auth-token or RETRACE_AUTH_TOKEN (clients then send \"Authorization: Bearer <token>\"; "+
		"make one with: openssl rand -hex 32), or pass --insecure-no-auth on a trusted network", host)
}

// Check reports the first problem of o: a non-loopback BindHost without a
// token (an *ExposureError), a token too short or with characters a header
// cannot carry, an origin or host that cannot be read, a negative number.
// Error messages never contain the token.
func (o HTTPOptions) Check() error {
	if o.AuthToken != "" {
		if len(o.AuthToken) < MinAuthTokenLength {
			return fmt.Errorf("--auth-token is too short to resist guessing: use at least %d characters (for example: openssl rand -hex 32)", MinAuthTokenLength)
		}
		for _, r := range o.AuthToken {
			if r <= ' ' || r > '~' {
				return errors.New("--auth-token may only hold printable ASCII without spaces, which an Authorization header carries as is")
			}
		}
	}
	if o.AuthToken == "" && !o.InsecureNoAuth && bindKindOf(o.BindHost) != bindLoopback {
		return &ExposureError{BindHost: o.BindHost}
	}
	for _, a := range o.AllowedOrigins {
		if _, err := normalizeOrigin(a); err != nil {
			return fmt.Errorf("--allowed-http-origins: %q: %v", a, err)
		}
	}
	for _, h := range o.AllowedHosts {
		if h != "*" && (h == "" || strings.ContainsAny(h, "/ @")) {
			return fmt.Errorf("--allowed-hosts: %q: want a host name, host:port or *", h)
		}
	}
	if o.MaxSessions < 0 {
		return errors.New("--max-sessions must be 0 (no cap) or a positive number of sessions")
	}
	if o.MaxBodyBytes < 0 || o.BodyTimeout < 0 || o.SessionTimeout < 0 {
		return errors.New("HTTP limits must not be negative")
	}
	return nil
}

// NewHTTPServer returns the http.Server that serves h: headers must arrive
// within 10 s and fit in 64 KiB, and idle keep-alive connections close
// after 2 minutes. There is no WriteTimeout: it bounds the whole response,
// and a Streamable HTTP response is an event stream that lasts as long as a
// tool call, or the session for a GET. There is no ReadTimeout either:
// HTTPHandler bounds each request body itself (HTTPOptions.BodyTimeout).
func NewHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
}

// HTTPHandler serves Streamable HTTP; each HTTP session gets its own state.
// Before the SDK's handler sees a request, it checks, in order: the Host
// header (403), the Origin header (403), the bearer token (401), the body
// size (413), and for a request that would open a session, the session
// cap (503 with a JSON-RPC error).
func (s *Server) HTTPHandler(o HTTPOptions) http.Handler {
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.BodyTimeout == 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	if o.SessionTimeout == 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	h := &httpGuard{
		log:     s.log,
		hosts:   newHostPolicy(o.BindHost, o.AllowedHosts),
		origins: map[string]bool{},
		maxBody: o.MaxBodyBytes,
		bodyTTL: o.BodyTimeout,
		abort:   s.abortSession,
		next: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
			&mcp.StreamableHTTPOptions{Logger: s.log, SessionTimeout: o.SessionTimeout,
				MaxRequestBodyBytes: o.MaxBodyBytes,
				// The Host check here covers the SDK's, which only knows
				// loopback names and would refuse --allowed-hosts.
				DisableLocalhostProtection: true}),
	}
	h.cap = &sessionCap{max: o.MaxSessions, srv: s.mcp, opening: map[*mcp.ServerSession]*reservation{}}
	if o.MaxSessions > 0 {
		s.mcp.AddReceivingMiddleware(h.cap.middleware)
	}
	for _, a := range o.AllowedOrigins {
		if n, err := normalizeOrigin(a); err == nil {
			h.origins[n] = true
		}
	}
	if o.AuthToken != "" {
		sum := sha256.Sum256([]byte(o.AuthToken))
		h.tokenSum = &sum
	}
	return h
}

// httpGuard is the middleware of HTTPHandler.
type httpGuard struct {
	log     *slog.Logger
	hosts   hostPolicy
	origins map[string]bool // normalized; these also get CORS headers
	// tokenSum is the SHA-256 of the token: comparing digests takes the same
	// time whatever the length of what the client sent.
	tokenSum *[sha256.Size]byte
	maxBody  int64
	bodyTTL  time.Duration
	cap      *sessionCap
	// abort closes a session's browser contexts under its calls.
	abort func(id string)
	next  http.Handler
}

// corsAllowHeaders are the request headers a browser client of the
// Streamable HTTP transport sends.
const corsAllowHeaders = "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID"

func (g *httpGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.hosts.allows(r) {
		g.refuse(w, r, http.StatusForbidden, fmt.Sprintf("Forbidden: Host %q is not an address of this server (add it with --allowed-hosts)", r.Host))
		return
	}
	origins := r.Header.Values("Origin")
	listed := false
	if len(origins) > 1 {
		g.refuse(w, r, http.StatusForbidden, "Forbidden: more than one Origin header")
		return
	}
	if len(origins) == 1 {
		n, err := normalizeOrigin(origins[0])
		listed = err == nil && g.origins[n]
		if !listed && (err != nil || !isLoopbackOrigin(n)) {
			g.refuse(w, r, http.StatusForbidden, fmt.Sprintf("Forbidden: Origin %q may not call this server (add it with --allowed-http-origins)", origins[0]))
			return
		}
	}
	if listed {
		hdr := w.Header()
		hdr.Set("Access-Control-Allow-Origin", origins[0])
		hdr.Add("Vary", "Origin")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			// A preflight carries no credentials; it only learns what the
			// real request may send.
			hdr.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
			hdr.Set("Access-Control-Allow-Headers", corsAllowHeaders)
			hdr.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		hdr.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate")
	}
	if g.tokenSum != nil {
		if ok, given := g.authorized(r); !ok {
			challenge := `Bearer realm="retrace"`
			if given {
				challenge += `, error="invalid_token"`
			}
			w.Header().Set("WWW-Authenticate", challenge)
			g.refuse(w, r, http.StatusUnauthorized, "Unauthorized: send \"Authorization: Bearer <token>\" with the token retrace was started with (--auth-token or RETRACE_AUTH_TOKEN)")
			return
		}
	}
	if r.ContentLength > g.maxBody {
		g.refuse(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("Request Entity Too Large: the body is %d bytes, at most %d are read", r.ContentLength, g.maxBody))
		return
	}
	if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
		r.Body = g.bounded(w, r.Body)
	}
	if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" && g.cap.max > 0 {
		res, ok := g.cap.admit()
		if !ok {
			g.refuseSession(w, r)
			return
		}
		// An initialize settles the reservation as it succeeds. Any other
		// request (a probe, a ping) never initializes its session: its answer
		// settles it, before the client can send its next request.
		defer g.cap.settle(res)
		w = &settlingWriter{ResponseWriter: w, settle: func() { g.cap.settle(res) }}
		r = r.WithContext(context.WithValue(r.Context(), reservationKey{}, res))
	}
	if id := r.Header.Get("Mcp-Session-Id"); r.Method == http.MethodDelete && id != "" {
		// The SDK ends a session only once its calls return; one stuck on
		// a page would hold the DELETE for its whole timeout.
		g.abort(id)
	}
	g.next.ServeHTTP(w, r)
}

// authorized reports whether r carries the token, and whether it carried
// any bearer token at all.
func (g *httpGuard) authorized(r *http.Request) (ok, given bool) {
	scheme, tok, found := strings.Cut(r.Header.Get("Authorization"), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return false, false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	return subtle.ConstantTimeCompare(sum[:], g.tokenSum[:]) == 1, true
}

// bounded caps body at maxBody and gives it bodyTTL to arrive, as a read
// deadline on the connection. net/http lifts that deadline when the body
// has been read to its end (it starts its background read then), so the
// response that follows may stream for as long as it needs.
func (g *httpGuard) bounded(w http.ResponseWriter, body io.ReadCloser) io.ReadCloser {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(g.bodyTTL))
	return http.MaxBytesReader(w, body, g.maxBody)
}

// refuse writes a short plain-text reason and logs the refusal, never with
// the request's credentials.
func (g *httpGuard) refuse(w http.ResponseWriter, r *http.Request, status int, reason string) {
	g.log.Warn("HTTP request refused", "status", status, "method", r.Method, "remote", r.RemoteAddr, "reason", reason)
	http.Error(w, reason, status)
}

// sessionLimitCode is the JSON-RPC error code of a refused session, in the
// range JSON-RPC leaves to servers.
const sessionLimitCode = -32000

// refuseSession answers a request that would open a session beyond the cap
// with 503 and a JSON-RPC error carrying the request's id when it has one.
func (g *httpGuard) refuseSession(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	if r.Body != nil {
		data, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(bytes.TrimSpace(data), &req)
	}
	id := json.RawMessage("null")
	if len(req.ID) > 0 {
		id = req.ID
	}
	msg := fmt.Sprintf("retrace is at its session limit (%d live sessions, --max-sessions): retry later, or end an idle session (HTTP DELETE with its Mcp-Session-Id header)", g.cap.max)
	g.log.Warn("HTTP session refused", "remote", r.RemoteAddr, "max_sessions", g.cap.max)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": sessionLimitCode, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write(body)
}

// sessionCap counts the live sessions: the initialized sessions of the MCP
// server's own list, which the SDK updates when a session is deleted, times
// out or fails to initialize, plus the requests admitted to open one whose
// session does not count yet. A reservation is settled by the initialize
// that makes its session count, or by the answer of a request that opened
// none; while the initialize runs, its session counts through the
// reservation only. So no session is counted twice, nor missed.
type sessionCap struct {
	max int
	srv *mcp.Server

	mu      sync.Mutex
	pending int
	opening map[*mcp.ServerSession]*reservation // initializes running
}

// reservation is one admitted request's place. It travels in the request's
// context, which the SDK keeps for the session's method handlers.
type reservation struct {
	cap     *sessionCap
	settled bool // guarded by cap.mu
}

type reservationKey struct{}

// admit reserves a place for one more session, if there is one.
func (c *sessionCap) admit() (*reservation, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.pending
	for ss := range c.srv.Sessions() {
		if r, ok := c.opening[ss]; ok && !r.settled {
			continue // counted in pending
		}
		if ss.InitializeParams() != nil {
			n++
		}
	}
	if n >= c.max {
		return nil, false
	}
	c.pending++
	return &reservation{cap: c}, true
}

// settle ends a reservation, once.
func (c *sessionCap) settle(r *reservation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.settleLocked(r)
}

func (c *sessionCap) settleLocked(r *reservation) {
	if !r.settled {
		r.settled = true
		c.pending--
	}
}

// middleware settles the reservation of the request that opened a session
// when its initialize succeeds.
func (c *sessionCap) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		r, _ := ctx.Value(reservationKey{}).(*reservation)
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if method != "initialize" || r == nil || r.cap != c || ss == nil {
			return next(ctx, method, req)
		}
		c.mu.Lock()
		c.opening[ss] = r
		c.mu.Unlock()
		res, err := next(ctx, method, req)
		c.mu.Lock()
		delete(c.opening, ss)
		if ss.InitializeParams() != nil {
			c.settleLocked(r)
		}
		c.mu.Unlock()
		return res, err
	}
}

// settlingWriter settles a reservation when the answer starts.
type settlingWriter struct {
	http.ResponseWriter
	settle func()
}

func (w *settlingWriter) WriteHeader(code int) {
	w.settle()
	w.ResponseWriter.WriteHeader(code)
}

func (w *settlingWriter) Write(p []byte) (int, error) {
	w.settle()
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection, to flush event
// streams.
func (w *settlingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// bindKind says what kind of address the listener is bound to.
type bindKind int

const (
	bindLoopback bindKind = iota
	bindSpecific
	bindWildcard
)

func bindKindOf(host string) bindKind {
	host = strings.Trim(strings.ToLower(host), "[]")
	if host == "" {
		return bindWildcard
	}
	if host == "localhost" {
		return bindLoopback
	}
	ip, err := netip.ParseAddr(host)
	switch {
	case err != nil:
		return bindSpecific // a name: only itself, and what it resolved to
	case ip.IsUnspecified():
		return bindWildcard
	case ip.IsLoopback():
		return bindLoopback
	}
	return bindSpecific
}

// hostPolicy decides which Host headers are accepted, against DNS
// rebinding: a page of an attacker's domain that resolves to this server
// reaches it with the attacker's name as Host. An IP literal or a loopback
// name as Host cannot come from such a page.
type hostPolicy struct {
	kind    bindKind
	bind    string // lower case, without brackets
	any     bool
	allowed map[string]bool // name or name:port, lower case
}

func newHostPolicy(bindHost string, allowed []string) hostPolicy {
	p := hostPolicy{kind: bindKindOf(bindHost), bind: strings.Trim(strings.ToLower(bindHost), "[]"), allowed: map[string]bool{}}
	for _, a := range allowed {
		if a = strings.TrimSpace(a); a == "*" {
			p.any = true
		} else if host, port := splitHostHeader(a); host != "" && port != "" {
			p.allowed[net.JoinHostPort(host, port)] = true
		} else if host != "" {
			p.allowed[host] = true
		}
	}
	return p
}

func (p hostPolicy) allows(r *http.Request) bool {
	if p.any {
		return true
	}
	host, port := splitHostHeader(r.Host)
	if host == "" {
		return false
	}
	if p.allowed[host] || (port != "" && p.allowed[net.JoinHostPort(host, port)]) {
		return true
	}
	ip, ipErr := netip.ParseAddr(host)
	switch p.kind {
	case bindLoopback:
		return host == "localhost" || (ipErr == nil && ip.IsLoopback())
	case bindWildcard:
		return host == "localhost" || ipErr == nil
	}
	if host == p.bind {
		return true
	}
	if bind, err := netip.ParseAddr(p.bind); err == nil && ipErr == nil && bind.Unmap() == ip.Unmap() {
		return true
	}
	// Bound by name: the address the connection arrived on is what it
	// resolved to.
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && ipErr == nil {
		if ap, err := netip.ParseAddrPort(local.String()); err == nil && ap.Addr().Unmap() == ip.Unmap() {
			return true
		}
	}
	return false
}

// splitHostHeader returns the host of a Host header, lower case, without
// brackets or a trailing dot, and its port.
func splitHostHeader(h string) (host, port string) {
	host = h
	if hh, pp, err := net.SplitHostPort(h); err == nil {
		host, port = hh, pp
	}
	host = strings.TrimSuffix(strings.Trim(strings.ToLower(host), "[]"), ".")
	if strings.ContainsAny(host, "/@ ") {
		return "", ""
	}
	return host, port
}

// normalizeOrigin returns an origin as scheme://host[:port], lower case and
// without the scheme's default port, or why it is not one.
func normalizeOrigin(s string) (string, error) {
	u, err := url.Parse(strings.TrimSuffix(strings.TrimSpace(s), "/"))
	if err != nil {
		return "", errors.New("not a URL")
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", errors.New("want http:// or https:// followed by a host")
	}
	if u.Host == "" || u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" {
		return "", errors.New("want scheme://host[:port], nothing more")
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		return scheme + "://" + host + ":" + port, nil
	}
	return scheme + "://" + host, nil
}

// isLoopbackOrigin reports whether a normalized origin is served from this
// machine's loopback interface (localhost, 127.0.0.0/8, [::1]), any port.
func isLoopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
