package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpServer serves a fresh Server through HTTPHandler(o) and NewHTTPServer
// on a real loopback listener.
func httpServer(t *testing.T, cfg Config, o HTTPOptions) (*Server, string) {
	t.Helper()
	srv := New(cfg, browsers)
	if o.BindHost == "" {
		o.BindHost = "127.0.0.1"
	}
	ts := httptest.NewUnstartedServer(nil)
	ts.Config = NewHTTPServer(srv.HTTPHandler(o))
	ts.Start()
	// Registered first, so it runs last: clients close their streams before.
	t.Cleanup(func() {
		for ss := range srv.MCP().Sessions() {
			ss.Close()
		}
		ts.Close()
		srv.Close()
	})
	return srv, ts.URL + "/mcp"
}

// headers is a RoundTripper that adds headers to every request of a go-sdk
// client.
type headers map[string]string

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// sdkConnect connects a go-sdk client with Streamable HTTP, sending hdr.
func sdkConnect(t *testing.T, endpoint string, hdr headers) (*mcp.ClientSession, error) {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "0"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint,
			HTTPClient: &http.Client{Transport: hdr}, MaxRetries: -1}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

const initializeBody = `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

// send makes one raw request and returns its status, headers and body.
func send(t *testing.T, method, endpoint, body string, hdr headers) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, endpoint, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(data)
}

// rawSession opens an MCP session with raw requests and returns its id.
func rawSession(t *testing.T, endpoint string, hdr headers) string {
	t.Helper()
	code, h, body := send(t, "POST", endpoint, initializeBody, hdr)
	id := h.Get("Mcp-Session-Id")
	if code != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %q\n%s", code, id, body)
	}
	withID := headers{"Mcp-Session-Id": id}
	for k, v := range hdr {
		withID[k] = v
	}
	if code, _, body := send(t, "POST", endpoint, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, withID); code != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d\n%s", code, body)
	}
	return id
}

const currentRoleCall = `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_current_role","arguments":{}}}`

// toolStates is how many sessions have run a tool: a session's state is
// made by its first tool call.
func toolStates(srv *Server) int {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return len(srv.sessions)
}

func liveSessions(srv *Server) int {
	n := 0
	for range srv.MCP().Sessions() {
		n++
	}
	return n
}

func TestHTTPOrigin(t *testing.T) {
	t.Parallel()
	srv, endpoint := httpServer(t, Config{}, HTTPOptions{AllowedOrigins: []string{"https://app.example/"}})
	for _, tc := range []struct {
		origin string
		want   int
	}{
		{"", http.StatusOK},
		{"http://localhost:5173", http.StatusOK},
		{"http://127.0.0.1:9", http.StatusOK},
		{"https://[::1]:8443", http.StatusOK},
		{"HTTPS://APP.example:443", http.StatusOK},
		{"http://evil.example", http.StatusForbidden},
		{"https://app.example:8443", http.StatusForbidden},
		{"http://localhost.evil.example", http.StatusForbidden},
		{"null", http.StatusForbidden},
		{"file://", http.StatusForbidden},
	} {
		before := liveSessions(srv)
		hdr := headers{}
		if tc.origin != "" {
			hdr["Origin"] = tc.origin
		}
		code, _, body := send(t, "POST", endpoint, initializeBody, hdr)
		if code != tc.want {
			t.Errorf("Origin %q: got %d, want %d\n%s", tc.origin, code, tc.want, body)
		}
		if code == http.StatusForbidden {
			if !strings.Contains(body, "--allowed-http-origins") {
				t.Errorf("Origin %q: the refusal does not say how to allow it: %q", tc.origin, body)
			}
			if liveSessions(srv) != before {
				t.Errorf("Origin %q: a refused request opened a session", tc.origin)
			}
		}
	}
}

// A request from a foreign origin reaches no tool, in a session that
// exists; the same call from a loopback origin runs.
func TestHTTPEvilOriginRunsNoTool(t *testing.T) {
	t.Parallel()
	srv, endpoint := httpServer(t, Config{}, HTTPOptions{})
	id := rawSession(t, endpoint, nil)
	code, _, body := send(t, "POST", endpoint, currentRoleCall, headers{"Mcp-Session-Id": id, "Origin": "http://evil.example"})
	if code != http.StatusForbidden || strings.Contains(body, "Current role") {
		t.Fatalf("evil Origin: got %d\n%s", code, body)
	}
	if n := toolStates(srv); n != 0 {
		t.Fatalf("a tool ran for a refused request (%d session states)", n)
	}
	if _, err := sdkConnect(t, endpoint, headers{"Origin": "http://evil.example"}); err == nil {
		t.Fatal("a go-sdk client with a foreign Origin connected")
	}
	code, _, body = send(t, "POST", endpoint, currentRoleCall, headers{"Mcp-Session-Id": id, "Origin": "http://localhost:6274"})
	if code != http.StatusOK || !strings.Contains(body, "Current role") {
		t.Fatalf("loopback Origin: got %d\n%s", code, body)
	}
}

// A listed origin connects with the go-sdk client and gets CORS headers,
// on the preflight (which carries no token) and on the answers.
func TestHTTPAllowedOriginCORS(t *testing.T) {
	t.Parallel()
	const origin, token = "https://inspector.example", "0123456789abcdef-token"
	_, endpoint := httpServer(t, Config{}, HTTPOptions{AllowedOrigins: []string{origin}, AuthToken: token})
	code, h, _ := send(t, "OPTIONS", endpoint, "", headers{"Origin": origin, "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "authorization, content-type, mcp-session-id"})
	if code != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != origin ||
		!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Mcp-Session-Id") {
		t.Errorf("preflight: %d %v", code, h)
	}
	cs, err := sdkConnect(t, endpoint, headers{"Origin": origin, "Authorization": "Bearer " + token})
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_current_role"})
	if err != nil || res.IsError {
		t.Fatalf("get_current_role: %v %v", err, res)
	}
	_, h, _ = send(t, "POST", endpoint, initializeBody, headers{"Origin": origin, "Authorization": "Bearer " + token})
	if h.Get("Access-Control-Allow-Origin") != origin || !strings.Contains(h.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") {
		t.Errorf("answer to a listed origin without CORS headers: %v", h)
	}
	// A loopback origin passes but is not given CORS: a page of another
	// local server cannot read the answers.
	_, h, _ = send(t, "POST", endpoint, initializeBody, headers{"Origin": "http://localhost:3000", "Authorization": "Bearer " + token})
	if h.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("a loopback origin got CORS headers: %v", h)
	}
}

func TestHTTPHostHeader(t *testing.T) {
	t.Parallel()
	type check struct {
		host string
		ok   bool
	}
	for _, tc := range []struct {
		bind    string
		allowed []string
		local   string // the address the connection arrived on
		checks  []check
	}{
		{bind: "127.0.0.1", local: "127.0.0.1:8931", checks: []check{
			{"127.0.0.1:8931", true}, {"localhost:8931", true}, {"LOCALHOST", true}, {"[::1]:8931", true}, {"127.0.0.2", true},
			{"evil.example:8931", false}, {"192.168.1.5:8931", false}, {"localhost.evil.example", false}, {"", false}}},
		{bind: "localhost", allowed: []string{"proxy.internal", "tunnel.example:443"}, local: "127.0.0.1:8931", checks: []check{
			{"localhost", true}, {"proxy.internal:8931", true}, {"Proxy.Internal.", true},
			{"tunnel.example:443", true}, {"tunnel.example", false}, {"evil.example", false}}},
		{bind: "192.168.1.5", local: "192.168.1.5:8931", checks: []check{
			{"192.168.1.5:8931", true}, {"192.168.1.5", true},
			{"192.168.1.6:8931", false}, {"localhost:8931", false}, {"evil.example:8931", false}}},
		{bind: "fd00::5", local: "[fd00::5]:8931", checks: []check{
			{"[fd00::5]:8931", true}, {"[FD00:0::5]", true}, {"[fd00::6]:8931", false}}},
		{bind: "retrace.lan", local: "10.0.0.7:8931", checks: []check{
			{"retrace.lan:8931", true}, {"10.0.0.7:8931", true}, {"10.0.0.8:8931", false}, {"evil.example", false}}},
		{bind: "0.0.0.0", allowed: []string{"retrace.lan"}, local: "10.0.0.7:8931", checks: []check{
			{"10.0.0.7:8931", true}, {"172.17.0.1:8931", true}, {"[fe80::1]:8931", true}, {"localhost:8931", true},
			{"retrace.lan:8931", true}, {"evil.example:8931", false}, {"other.lan", false}}},
		{bind: "::", local: "[::1]:8931", checks: []check{{"[::1]:8931", true}, {"evil.example", false}}},
		{bind: "0.0.0.0", allowed: []string{"*"}, local: "10.0.0.7:8931", checks: []check{{"evil.example", true}}},
	} {
		p := newHostPolicy(tc.bind, tc.allowed)
		local, err := net.ResolveTCPAddr("tcp", tc.local)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range tc.checks {
			r := httptest.NewRequest("POST", "/mcp", nil)
			r.Host = c.host
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.Addr(local)))
			if got := p.allows(r); got != c.ok {
				t.Errorf("bound to %s (allowed %v): Host %q allowed=%v, want %v", tc.bind, tc.allowed, c.host, got, c.ok)
			}
		}
	}

	// End to end: a name that resolves to the loopback address (DNS
	// rebinding) is refused and runs nothing.
	srv, endpoint := httpServer(t, Config{}, HTTPOptions{})
	code, _, body := send(t, "POST", endpoint, initializeBody, headers{"Host": "evil.example:8931"})
	if code != http.StatusForbidden || !strings.Contains(body, "--allowed-hosts") {
		t.Errorf("wrong Host: got %d %q", code, body)
	}
	if n := liveSessions(srv); n != 0 {
		t.Errorf("a request with a wrong Host opened a session")
	}
	if code, _, body := send(t, "POST", endpoint, initializeBody, headers{"Host": "localhost"}); code != http.StatusOK {
		t.Errorf("Host localhost: got %d %q", code, body)
	}
}

func TestHTTPAuthToken(t *testing.T) {
	t.Parallel()
	const token = "s3cr3t-token-0123456789"
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	_, endpoint := httpServer(t, Config{Logger: logger}, HTTPOptions{AuthToken: token})

	for _, tc := range []struct {
		auth      string
		want      int
		challenge string
	}{
		{"", http.StatusUnauthorized, `Bearer realm="retrace"`},
		{"Basic " + token, http.StatusUnauthorized, `Bearer realm="retrace"`},
		{"Bearer " + token + "x", http.StatusUnauthorized, `error="invalid_token"`},
		{"Bearer " + token[:len(token)-1], http.StatusUnauthorized, `error="invalid_token"`},
		{"Bearer " + token, http.StatusOK, ""},
		{"bearer " + token, http.StatusOK, ""},
	} {
		hdr := headers{}
		if tc.auth != "" {
			hdr["Authorization"] = tc.auth
		}
		code, h, body := send(t, "POST", endpoint, initializeBody, hdr)
		if code != tc.want || !strings.Contains(h.Get("WWW-Authenticate"), tc.challenge) {
			t.Errorf("Authorization %q: got %d, WWW-Authenticate %q, want %d and %q", tc.auth, code, h.Get("WWW-Authenticate"), tc.want, tc.challenge)
		}
		if strings.Contains(body, token) {
			t.Errorf("the answer carries the token: %q", body)
		}
	}
	if _, err := sdkConnect(t, endpoint, headers{}); err == nil {
		t.Error("a go-sdk client without the token connected")
	}
	cs, err := sdkConnect(t, endpoint, headers{"Authorization": "Bearer " + token})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_current_role"}); err != nil || res.IsError {
		t.Fatalf("get_current_role with the token: %v %v", err, res)
	}
	if strings.Contains(logs.String(), token) {
		t.Errorf("the logs carry the token:\n%s", logs.String())
	}
}

func TestHTTPOptionsCheck(t *testing.T) {
	t.Parallel()
	const token = "0123456789abcdef"
	for _, tc := range []struct {
		o       HTTPOptions
		want    string // in the error; "" for none
		exposed bool
	}{
		{o: HTTPOptions{BindHost: "127.0.0.1"}},
		{o: HTTPOptions{BindHost: "localhost"}},
		{o: HTTPOptions{BindHost: "::1"}},
		{o: HTTPOptions{BindHost: "0.0.0.0"}, want: "--auth-token", exposed: true},
		{o: HTTPOptions{BindHost: ""}, want: "RETRACE_AUTH_TOKEN", exposed: true},
		{o: HTTPOptions{BindHost: "::"}, want: "--insecure-no-auth", exposed: true},
		{o: HTTPOptions{BindHost: "192.168.1.5"}, want: "--auth-token", exposed: true},
		{o: HTTPOptions{BindHost: "retrace.lan"}, want: "--auth-token", exposed: true},
		{o: HTTPOptions{BindHost: "0.0.0.0", InsecureNoAuth: true}},
		{o: HTTPOptions{BindHost: "0.0.0.0", AuthToken: token}},
		{o: HTTPOptions{BindHost: "0.0.0.0", AuthToken: "short-secret"}, want: "too short"},
		{o: HTTPOptions{BindHost: "127.0.0.1", AuthToken: "with space 0123456789"}, want: "printable ASCII"},
		{o: HTTPOptions{BindHost: "127.0.0.1", AllowedOrigins: []string{"app.example"}}, want: "--allowed-http-origins"},
		{o: HTTPOptions{BindHost: "127.0.0.1", AllowedOrigins: []string{"https://app.example/path"}}, want: "--allowed-http-origins"},
		{o: HTTPOptions{BindHost: "127.0.0.1", AllowedOrigins: []string{"https://app.example:8443"}, AllowedHosts: []string{"a.lan:80", "*"}}},
		{o: HTTPOptions{BindHost: "127.0.0.1", AllowedHosts: []string{"http://a.lan"}}, want: "--allowed-hosts"},
		{o: HTTPOptions{BindHost: "127.0.0.1", MaxSessions: -1}, want: "--max-sessions"},
	} {
		err := tc.o.Check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.o, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: got %v, want an error with %q", tc.o, err, tc.want)
		case err != nil && tc.o.AuthToken != "" && strings.Contains(err.Error(), tc.o.AuthToken):
			t.Errorf("the error carries the token: %v", err)
		}
		var exp *ExposureError
		if errors.As(err, &exp) != tc.exposed {
			t.Errorf("%+v: ExposureError %v, want %v", tc.o, err, tc.exposed)
		}
	}
}

// The cap refuses the session beyond it while the others live, and admits
// one again once a session is deleted.
func TestHTTPSessionCap(t *testing.T) {
	t.Parallel()
	_, endpoint := httpServer(t, Config{}, HTTPOptions{MaxSessions: 2})
	if _, err := sdkConnect(t, endpoint, nil); err != nil {
		t.Fatal(err)
	}
	raw := rawSession(t, endpoint, nil)

	if _, err := sdkConnect(t, endpoint, nil); err == nil {
		t.Fatal("a third session opened with --max-sessions 2")
	}
	code, h, body := send(t, "POST", endpoint, initializeBody, nil)
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &msg); err != nil || code != http.StatusServiceUnavailable ||
		h.Get("Content-Type") != "application/json" || string(msg.ID) != "7" || msg.Error.Code != sessionLimitCode ||
		!strings.Contains(msg.Error.Message, "session limit") || !strings.Contains(msg.Error.Message, "DELETE") {
		t.Fatalf("beyond the cap: %d %v\n%s", code, err, body)
	}
	// Requests of live sessions still pass.
	if code, _, body := send(t, "POST", endpoint, currentRoleCall, headers{"Mcp-Session-Id": raw}); code != http.StatusOK {
		t.Fatalf("a live session's call at the cap: %d\n%s", code, body)
	}

	if code, _, body := send(t, "DELETE", endpoint, "", headers{"Mcp-Session-Id": raw}); code != http.StatusNoContent {
		t.Fatalf("DELETE: %d\n%s", code, body)
	}
	if _, err := sdkConnect(t, endpoint, nil); err != nil {
		t.Fatalf("no session opened after one was deleted: %v", err)
	}
}

// Sessions that expire (SessionTimeout) free their place.
func TestHTTPSessionCapAfterExpiry(t *testing.T) {
	t.Parallel()
	_, endpoint := httpServer(t, Config{}, HTTPOptions{MaxSessions: 1, SessionTimeout: 200 * time.Millisecond})
	rawSession(t, endpoint, nil)
	if code, _, _ := send(t, "POST", endpoint, initializeBody, nil); code != http.StatusServiceUnavailable {
		t.Fatalf("second session with --max-sessions 1: %d", code)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, _, _ := send(t, "POST", endpoint, initializeBody, nil)
		if code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the expired session still holds its place: %d", code)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Concurrent initializes never open more sessions than the cap.
func TestHTTPSessionCapConcurrent(t *testing.T) {
	t.Parallel()
	const max = 3
	srv, endpoint := httpServer(t, Config{}, HTTPOptions{MaxSessions: max})
	var wg sync.WaitGroup
	codes := make(chan int, 12)
	for range cap(codes) {
		wg.Go(func() {
			code, _, _ := send(t, "POST", endpoint, initializeBody, nil)
			codes <- code
		})
	}
	wg.Wait()
	close(codes)
	ok := 0
	for c := range codes {
		switch c {
		case http.StatusOK:
			ok++
		case http.StatusServiceUnavailable:
		default:
			t.Errorf("unexpected status %d", c)
		}
	}
	// Every place is taken once the burst is over: none was lost to a
	// reservation that was not released.
	if ok != max || liveSessions(srv) != max {
		t.Errorf("%d sessions opened (%d live), want %d", ok, liveSessions(srv), max)
	}
}

func TestHTTPBodyLimits(t *testing.T) {
	t.Parallel()
	_, endpoint := httpServer(t, Config{}, HTTPOptions{MaxBodyBytes: 1024, BodyTimeout: 200 * time.Millisecond})
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2000) + `"}}`
	if code, _, body := send(t, "POST", endpoint, big, nil); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a 2 kB body with a 1 kB limit: %d\n%s", code, body)
	}

	// A body that never finishes arriving is cut off.
	addr := strings.TrimSuffix(strings.TrimPrefix(endpoint, "http://"), "/mcp")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 500\r\n\r\n{\"jsonrpc\":", addr)
	start := time.Now()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("a slow body held the connection for 5 s")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("a slow body was cut off after %v", d)
	}
}

// A tool call that lasts longer than the body timeout still answers: the
// body deadline ends with the body, not with the response stream.
func TestHTTPLongCallOutlivesBodyTimeout(t *testing.T) {
	t.Parallel()
	_, endpoint := httpServer(t, Config{}, HTTPOptions{BodyTimeout: 100 * time.Millisecond})
	cs, err := sdkConnect(t, endpoint, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "browser_wait_for", Arguments: map[string]any{"time": 0.6}})
	if err != nil || res.IsError {
		t.Fatalf("a 0.6 s call with a 0.1 s body timeout: %v %v", err, res)
	}
}

// The server's own timeouts leave event streams alone.
func TestNewHTTPServerTimeouts(t *testing.T) {
	t.Parallel()
	hs := NewHTTPServer(http.NotFoundHandler())
	if hs.WriteTimeout != 0 || hs.ReadTimeout != 0 {
		t.Errorf("WriteTimeout %v, ReadTimeout %v: either would cut long event streams", hs.WriteTimeout, hs.ReadTimeout)
	}
	if hs.ReadHeaderTimeout <= 0 || hs.IdleTimeout <= 0 || hs.MaxHeaderBytes <= 0 {
		t.Errorf("unbounded: ReadHeaderTimeout %v, IdleTimeout %v, MaxHeaderBytes %d", hs.ReadHeaderTimeout, hs.IdleTimeout, hs.MaxHeaderBytes)
	}
}

// A DELETE of a session whose call is stuck on a frozen page answers at
// once and frees the session's pages, without waiting for the call.
func TestHTTPDeleteStuckSession(t *testing.T) {
	t.Parallel()
	srv, endpoint := httpServer(t, Config{ActionTimeout: 30 * time.Second, NavigationTimeout: 30 * time.Second}, HTTPOptions{})
	cs, err := sdkConnect(t, endpoint, nil)
	if err != nil {
		t.Fatal(err)
	}
	call := func(name string, args map[string]any) (*mcp.CallToolResult, error) {
		return cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	}
	if _, err := call("browser_navigate", map[string]any{"url": fx.Page("busy.html")}); err != nil {
		t.Fatal(err)
	}
	st := srv.sessionForTest()
	r := st.peek(defaultRole)
	r.mu.Lock()
	page := r.tab.Page
	r.mu.Unlock()
	stuck := make(chan struct{})
	go func() {
		defer close(stuck)
		_, _ = call("browser_evaluate", map[string]any{"function": "() => { while (true) {} }"})
	}()
	// The call holds the role once its lock is taken.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if !r.mu.TryLock() {
			break
		}
		r.mu.Mutex.Unlock()
		if time.Now().After(deadline) {
			t.Fatal("the evaluate never took the role's lock")
		}
		runtime.Gosched()
	}
	start := time.Now()
	code, _, body := send(t, "DELETE", endpoint, "", headers{"Mcp-Session-Id": cs.ID()})
	answered := time.Since(start)
	if code != http.StatusNoContent || answered > 2*time.Second {
		t.Fatalf("DELETE of a session with a stuck call: %d after %v\n%s", code, answered, body)
	}
	deadline := time.Now().Add(2 * time.Second)
	for !page.IsClosed() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if !page.IsClosed() {
		t.Fatal("the deleted session's page is still open 2 s after the DELETE")
	}
	t.Logf("DELETE answered in %v; the page was closed %v after it was sent", answered.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	select {
	case <-stuck:
	case <-time.After(10 * time.Second):
		t.Error("the stuck call did not end after its session was deleted")
	}
}

// With an instance name, every session ID starts with it, so a reverse
// proxy can route the session back to this process.
func TestHTTPSessionIDsCarryTheInstance(t *testing.T) {
	t.Parallel()
	_, endpoint := httpServer(t, Config{Instance: "node_2"}, HTTPOptions{})
	for range 3 {
		if id := rawSession(t, endpoint, nil); !strings.HasPrefix(id, "node_2-") || len(id) < len("node_2-")+20 {
			t.Fatalf("session ID %q does not start with the instance name and a random part", id)
		}
	}
	for _, bad := range []string{"a-b", "x y", strings.Repeat("a", 33), "é"} {
		if CheckInstance(bad) == nil {
			t.Errorf("CheckInstance(%q) accepted it", bad)
		}
	}
	if err := CheckInstance("eu1.node_07"); err != nil {
		t.Errorf("CheckInstance refused a good name: %v", err)
	}
}
