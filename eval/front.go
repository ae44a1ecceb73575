package eval

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/retrace-dev/retrace/fixture"
)

// eventRoutes are the fixture's routes that write its event log: the
// beacon of eval pages and the auth scenarios' payment. A fixture route
// that logs events must be named here, or its runs never see their goal.
var eventRoutes = []string{"/eval/event", "/eval/pay"}

// slowOnce is the fixture's route whose first request for a page hangs.
const slowOnce = "/eval/slow-once/"

// eventLog hands out the fixture's one event log to the fronts of an
// evaluation: the requests that write it go one at a time, and what each
// adds belongs to the run whose front forwarded it.
type eventLog struct {
	mu         sync.Mutex
	fx         *fixture.Server
	attributed int // events handed to a front
	base       int // events logged before the evaluation
}

func newEventLog(fx *fixture.Server) *eventLog {
	return &eventLog{fx: fx, base: len(fx.Events())}
}

// unattributed returns how many events the fixture logged, since the
// evaluation began, outside the routes the fronts guard.
func (l *eventLog) unattributed() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.fx.Events()) - l.base - l.attributed
}

// front is one run's pair of origins in front of the fixture (its main
// origin on 127.0.0.1, its second on localhost, as the fixture's own). It
// forwards every request, so runs going at once each see only their own
// pages' events and their own slow first loads, though the fixture keeps
// one event log and one slow-once memory for all.
type front struct {
	URL      string
	OtherURL string

	log      *eventLog
	addrs    []string // where it listens
	srvs     []*http.Server
	closing  chan struct{}
	replacer *strings.Replacer

	mu     sync.Mutex
	events []string
	slow   map[string]bool // slow-once pages already hung once
}

// newFront starts a front on two fresh loopback ports, or on the
// addresses of a front closed before (at): the same origins for a new run,
// which starts with no events and no slow first load spent.
func newFront(log *eventLog, at ...string) (*front, error) {
	fx := log.fx
	f := &front{log: log, closing: make(chan struct{}), slow: map[string]bool{}}
	var lns []net.Listener
	for i := range 2 {
		addr := "127.0.0.1:0"
		if len(at) == 2 {
			addr = at[i]
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, err
		}
		lns = append(lns, ln)
	}
	f.addrs = []string{lns[0].Addr().String(), lns[1].Addr().String()}
	f.URL = "http://" + lns[0].Addr().String()
	f.OtherURL = fmt.Sprintf("http://localhost:%d", lns[1].Addr().(*net.TCPAddr).Port)
	// Pages name the fixture's origins (a cross-origin frame): they must
	// name this run's instead, or the frame's events would bypass it.
	f.replacer = strings.NewReplacer(fx.URL, f.URL, fx.OtherURL, f.OtherURL)
	for i, target := range []string{fx.URL, fx.OtherURL} {
		u, err := url.Parse(target)
		if err != nil {
			return nil, err
		}
		hs := &http.Server{Handler: f.handler(u), ReadHeaderTimeout: 5 * time.Second}
		f.srvs = append(f.srvs, hs)
		go hs.Serve(lns[i])
	}
	return f, nil
}

// Events returns the events this run's pages reported.
func (f *front) Events() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.events)
}

// Close stops the front; a first load still hanging gives up.
func (f *front) Close() {
	close(f.closing)
	for _, hs := range f.srvs {
		hs.Close()
	}
}

func (f *front) handler(target *url.URL) http.Handler {
	proxy := &httputil.ReverseProxy{
		Rewrite:        func(r *httputil.ProxyRequest) { r.SetURL(target) },
		ModifyResponse: f.rewrite,
		// A request the browser gave up on is part of the faults, not news.
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) { w.WriteHeader(http.StatusBadGateway) },
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if page, ok := strings.CutPrefix(r.URL.Path, slowOnce); ok {
			// As the fixture does, but remembered per run.
			f.mu.Lock()
			first := !f.slow[page]
			f.slow[page] = true
			f.mu.Unlock()
			if first {
				select {
				case <-r.Context().Done():
				case <-f.closing:
				}
				return
			}
			r.URL.Path, r.URL.RawPath = "/eval/"+page, ""
		}
		if !slices.Contains(eventRoutes, r.URL.Path) {
			proxy.ServeHTTP(w, r)
			return
		}
		f.log.mu.Lock()
		defer f.log.mu.Unlock()
		n := len(f.log.fx.Events())
		proxy.ServeHTTP(w, r)
		all := f.log.fx.Events()
		added := all[min(n, len(all)):]
		f.log.attributed += len(added)
		f.mu.Lock()
		f.events = append(f.events, added...)
		f.mu.Unlock()
	})
}

// rewrite puts this run's origins in place of the fixture's in a text
// response and its redirect.
func (f *front) rewrite(resp *http.Response) error {
	if loc := resp.Header.Get("Location"); loc != "" {
		resp.Header.Set("Location", f.replacer.Replace(loc))
	}
	ct := resp.Header.Get("Content-Type")
	if !strings.HasPrefix(ct, "text/") && !strings.Contains(ct, "javascript") {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	body = []byte(f.replacer.Replace(string(body)))
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return nil
}
