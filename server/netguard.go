package server

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/retrace-dev/retrace/browser"
)

// guard is the network side of the origin policy: a forward proxy on
// 127.0.0.1 that each role's browser context sends every request through,
// loopback included. Request routes see only the first URL of a redirect
// chain and no WebSocket; the proxy sees every hop, every socket, every
// fetch of a worker, and the address a name resolves to, so a page can
// reach nothing the policy forbids, by any path.
type guard struct {
	policy OriginPolicy
	up     Upstream
	ln     net.Listener
	srv    *http.Server
	proxy  *httputil.ReverseProxy
	dialer net.Dialer

	mu      sync.Mutex
	refused []refusal
	failed  []refusal // requests that could not reach their server: why is the net:: code
}

// refusal is one request the guard turned away; main is set when a route
// knew it for a navigation of a tab's main frame.
type refusal struct {
	url, why string
	at       time.Time
	main     bool
}

// maxRefusals bounds what the guard remembers.
const maxRefusals = 32

// blockedHeader marks the guard's own refusals, so they are never taken for
// a site's answer; netErrorHeader carries, on the guard's 502, the network
// error Chromium would have reported without a proxy.
const (
	blockedHeader  = "X-Retrace-Blocked"
	netErrorHeader = browser.NetErrorHeader
)

// Upstream is the proxy the guard sends requests on to (--proxy-server):
// a network that reaches the web only through one. Loopback and the hosts
// of Bypass (--proxy-bypass) go direct.
type Upstream struct {
	URL    *url.URL
	Bypass []string
}

// direct reports whether host is reached without the upstream proxy.
func (u Upstream) direct(host string) bool {
	if u.URL == nil {
		return true
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsLoopback() {
		return true
	}
	for _, b := range u.Bypass {
		b = strings.ToLower(strings.TrimSpace(b))
		switch {
		case b == "":
		case b == "*" || b == host:
			return true
		case strings.HasPrefix(b, "*."), strings.HasPrefix(b, "."):
			if strings.HasSuffix(host, strings.TrimPrefix(b, "*")) {
				return true
			}
		}
	}
	return false
}

func startGuard(p OriginPolicy, up Upstream) (*guard, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the network guard: %w", err)
	}
	g := &guard{policy: p, up: up, ln: ln, dialer: net.Dialer{Timeout: 30 * time.Second}}
	tr := &http.Transport{DialContext: g.dial, ForceAttemptHTTP2: false, MaxIdleConns: 64,
		IdleConnTimeout: 30 * time.Second, TLSHandshakeTimeout: 15 * time.Second,
		Proxy: func(r *http.Request) (*url.URL, error) {
			if up.direct(r.URL.Hostname()) {
				return nil, nil
			}
			return up.URL, nil
		}}
	g.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = pr.In.URL
			pr.Out.Host = pr.In.Host
		},
		Transport:     tr,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			var b blockedError
			if errors.As(err, &b) {
				g.refuse(w, r.URL.String(), b.why)
				return
			}
			g.unreachable(w, r.URL.String(), err)
		},
	}
	g.srv = &http.Server{Handler: g, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = g.srv.Serve(ln) }()
	return g, nil
}

// URL is the proxy address for the browser context.
func (g *guard) URL() string { return "http://" + g.ln.Addr().String() }

func (g *guard) close() {
	_ = g.srv.Close()
	g.proxy.Transport.(*http.Transport).CloseIdleConnections()
}

// refusedSince returns what the guard turned away since t, oldest first.
func (g *guard) refusedSince(t time.Time) []refusal {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []refusal
	for _, r := range g.refused {
		if !r.at.Before(t) {
			out = append(out, r)
		}
	}
	return out
}

// note remembers a refusal: the guard's own, or a route's. It makes no
// Playwright call, so routes may call it on the dispatch goroutine.
func (g *guard) note(target, why string, main bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refused = append(g.refused, refusal{url: target, why: why, at: time.Now(), main: main})
	if len(g.refused) > maxRefusals {
		g.refused = g.refused[len(g.refused)-maxRefusals:]
	}
}

func (g *guard) refuse(w http.ResponseWriter, target, why string) {
	g.note(target, why, false)
	w.Header().Set(blockedHeader, "1")
	http.Error(w, "retrace did not load "+target+": "+why, http.StatusForbidden)
}

// unreachable answers a request whose server could not be reached with the
// network error Chromium would have named, and remembers it.
func (g *guard) unreachable(w http.ResponseWriter, target string, err error) {
	code := netErrorCode(err)
	g.mu.Lock()
	g.failed = append(g.failed, refusal{url: target, why: code, at: time.Now()})
	if len(g.failed) > maxRefusals {
		g.failed = g.failed[len(g.failed)-maxRefusals:]
	}
	g.mu.Unlock()
	w.Header().Set(netErrorHeader, code)
	http.Error(w, "net::"+code+": retrace could not reach "+target, http.StatusBadGateway)
}

// failedSince returns the network error of the newest request since t that
// could not reach its server, or "".
func (g *guard) failedSince(t time.Time) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := len(g.failed) - 1; i >= 0; i-- {
		if !g.failed[i].at.Before(t) {
			return g.failed[i].why
		}
	}
	return ""
}

// failureFor returns the network error of the newest request for target
// the guard could not deliver, or "".
func (g *guard) failureFor(target string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := len(g.failed) - 1; i >= 0; i-- {
		if g.failed[i].url == target {
			return g.failed[i].why
		}
	}
	return ""
}

// nameGuardFailures gives a cross-origin request the guard could not
// deliver its real network error: the browser only saw the guard's 502
// fail its CORS check, and says ERR_FAILED.
func (r *role) nameGuardFailures(entries []browser.RequestEntry) {
	if r.guard == nil {
		return
	}
	for i := range entries {
		if entries[i].Failed == "net::ERR_FAILED" {
			if code := r.guard.failureFor(entries[i].URL); code != "" {
				entries[i].Failed = "net::" + code
			}
		}
	}
}

// netErrorCode names a dial or transport error as Chromium's net:: code.
func netErrorCode(err error) string {
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.As(err, &dns):
		if dns.IsTimeout {
			return "ERR_NAME_RESOLUTION_FAILED"
		}
		return "ERR_NAME_NOT_RESOLVED"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "ERR_CONNECTION_REFUSED"
	case errors.Is(err, syscall.ECONNRESET):
		return "ERR_CONNECTION_RESET"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "ERR_ADDRESS_UNREACHABLE"
	case errors.As(err, &op) && op.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return "ERR_CONNECTION_TIMED_OUT"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "ERR_EMPTY_RESPONSE"
	}
	return "ERR_CONNECTION_FAILED"
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		g.tunnel(w, r)
		return
	}
	if !r.URL.IsAbs() {
		http.Error(w, "retrace's network guard is a proxy for its own browser", http.StatusBadRequest)
		return
	}
	if why := g.policy.check(r.URL.String()); why != "" {
		g.refuse(w, r.URL.String(), why)
		return
	}
	g.proxy.ServeHTTP(w, r)
}

// tunnel serves a CONNECT (https, wss, and ws through the proxy): the host
// and port are checked as an origin of either scheme, then the bytes flow.
func (g *guard) tunnel(w http.ResponseWriter, r *http.Request) {
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		http.Error(w, "bad CONNECT target", http.StatusBadRequest)
		return
	}
	target := "https://" + r.Host
	why := g.policy.check(target)
	if why != "" && port != "443" {
		// ws:// to a custom port also arrives as CONNECT.
		if g.policy.check("http://"+r.Host) == "" {
			why = ""
		}
	}
	if why != "" {
		g.refuse(w, (&url.URL{Scheme: "https", Host: r.Host}).String(), why)
		return
	}
	var upstream net.Conn
	if g.up.direct(host) {
		upstream, err = g.dial(r.Context(), "tcp", net.JoinHostPort(host, port))
	} else {
		upstream, err = g.viaUpstream(r.Context(), net.JoinHostPort(host, port))
	}
	if err != nil {
		var b blockedError
		if errors.As(err, &b) {
			g.refuse(w, target, b.why)
			return
		}
		g.unreachable(w, target, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		upstream.Close()
		http.Error(w, "no tunnel", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		upstream.Close()
		return
	}
	_, _ = client.Write([]byte("HTTP/1.1 200 Connection Established\r\n\r\n"))
	go func() {
		// Bytes the browser sent after its CONNECT line are already read.
		if n := buf.Reader.Buffered(); n > 0 {
			pending, _ := buf.Reader.Peek(n)
			_, _ = upstream.Write(pending)
		}
		_, _ = io.Copy(upstream, client)
		upstream.Close()
	}()
	go func() {
		_, _ = io.Copy(client, upstream)
		client.Close()
	}()
}

// blockedError is a dial the policy forbids once the name is resolved.
type blockedError struct{ why string }

func (b blockedError) Error() string { return b.why }

// dial connects to addr, refusing a name that resolves to a link-local or
// metadata address the allow list does not name (a DNS answer can point a
// harmless-looking name there).
func (g *guard) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	named := g.policy.namesHost(host)
	var last error
	for _, ip := range ips {
		if addrLinkLocal(ip) && !named {
			last = blockedError{why: fmt.Sprintf("%s resolves to %s, a link-local or cloud-metadata address; it loads only when --allowed-origins names it", host, ip)}
			continue
		}
		c, err := g.dialer.DialContext(ctx, network, netip.AddrPortFrom(ip, parsePort(port)).String())
		if err == nil {
			return c, nil
		}
		last = err
	}
	if last == nil {
		last = fmt.Errorf("%s has no address", host)
	}
	return nil, last
}

// namesHost reports whether the allow list names host explicitly.
func (p OriginPolicy) namesHost(host string) bool {
	for _, a := range p.Allowed {
		if u, err := url.Parse(a); err == nil && u.Host != "" {
			if u.Hostname() == host {
				return true
			}
			continue
		}
		if a == host {
			return true
		}
	}
	return false
}

func parsePort(p string) uint16 {
	var n uint16
	for _, c := range p {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + uint16(c-'0')
	}
	return n
}

// viaUpstream opens a tunnel to addr through the upstream proxy (CONNECT),
// with its credentials when its URL has them.
func (g *guard) viaUpstream(ctx context.Context, addr string) (net.Conn, error) {
	u := g.up.URL
	proxyAddr := u.Host
	if u.Port() == "" {
		proxyAddr = net.JoinHostPort(u.Hostname(), "80")
	}
	c, err := g.dialer.DialContext(ctx, "tcp", proxyAddr)
	if err != nil {
		return nil, err
	}
	req := "CONNECT " + addr + " HTTP/1.1\r\nHost: " + addr + "\r\n"
	if u.User != nil {
		pass, _ := u.User.Password()
		req += "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass)) + "\r\n"
	}
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(c, req+"\r\n"); err != nil {
		c.Close()
		return nil, err
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		c.Close()
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		c.Close()
		return nil, fmt.Errorf("the proxy %s refused the tunnel to %s: %s", u.Redacted(), addr, resp.Status)
	}
	_ = c.SetDeadline(time.Time{})
	if br.Buffered() > 0 {
		// Bytes the proxy sent past its answer belong to the tunnel.
		return &bufferedConn{Conn: c, r: br}, nil
	}
	return c, nil
}

// bufferedConn reads what its reader buffered first.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }
