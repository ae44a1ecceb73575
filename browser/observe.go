package browser

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/playwright-community/playwright-go"
)

// Bounds of what a tab remembers of its console and network. A result
// shows less of one message than maxConsoleText, and a page that logs
// megabytes must not fill the memory.
const (
	maxConsole     = 500
	maxConsoleText = 4096
	maxRequests    = 1000
)

// ConsoleEntry is one console message or uncaught page error.
type ConsoleEntry struct {
	Level string // error, warning, info, debug
	Text  string
	Where string // url:line, when known
	// Nav counts the main-frame navigations before it (which page it
	// belongs to).
	Nav int
}

// RequestEntry is one network request and how it ended.
type RequestEntry struct {
	Method string
	URL    string
	Type   string // resource type: document, script, fetch, xhr, image...
	Status int    // 0 while running or when it failed
	Size   int64  // from Content-Length; -1 when unknown
	Failed string // the failure, like net::ERR_CONNECTION_REFUSED
	Nav    int
	// ID numbers the tab's requests from 1, in the order they started.
	ID  int
	req playwright.Request
}

// Request is the Playwright request behind the entry, for its headers,
// bodies and timing.
func (r RequestEntry) Request() playwright.Request { return r.req }

// Done reports whether the request ended (answered or failed).
func (r RequestEntry) Done() bool { return r.Status != 0 || r.Failed != "" }

// journal keeps a tab's console and network history, bounded. Its handlers
// run on Playwright's dispatch goroutine, so they only copy facts the event
// objects already hold and make no Playwright call.
type journal struct {
	mu       sync.Mutex
	console  []ConsoleEntry
	dropped  int // console entries dropped off the front
	requests []*RequestEntry
	reqDrop  int
	byReq    map[playwright.Request]*RequestEntry
	lastID   int
}

// consoleLevel maps a console message type to a level.
func consoleLevel(t string) string {
	switch t {
	case "error", "assert":
		return "error"
	case "warning":
		return "warning"
	case "debug", "trace":
		return "debug"
	}
	return "info"
}

// NetErrorHeader is the response header (lower case, as Playwright gives
// headers) on which a proxy in front of the browser names the network error
// that kept a request from its server.
const NetErrorHeader = "x-retrace-net-error"

func (t *Tab) observe(page playwright.Page) {
	j := &t.journal
	j.byReq = map[playwright.Request]*RequestEntry{}
	nav := func() int {
		t.mu.Lock()
		defer t.mu.Unlock()
		return t.navSeq
	}
	addConsole := func(e ConsoleEntry) {
		if len(e.Text) > maxConsoleText {
			e.Text = strings.ToValidUTF8(e.Text[:maxConsoleText], "") + "…"
		}
		j.mu.Lock()
		defer j.mu.Unlock()
		j.console = append(j.console, e)
		if len(j.console) > maxConsole {
			j.console = j.console[1:]
			j.dropped++
		}
	}
	page.OnConsole(func(m playwright.ConsoleMessage) {
		e := ConsoleEntry{Level: consoleLevel(m.Type()), Text: m.Text(), Nav: nav()}
		if l := m.Location(); l != nil && l.URL != "" {
			e.Where = l.URL + ":" + strconv.Itoa(l.LineNumber+1)
		}
		addConsole(e)
	})
	page.OnPageError(func(err error) {
		text := err.Error()
		var pe *playwright.Error
		if errors.As(err, &pe) {
			text = pe.Message
			if pe.Name != "" {
				text = pe.Name + ": " + pe.Message
			}
		}
		addConsole(ConsoleEntry{Level: "error", Text: "Uncaught " + text, Nav: nav()})
	})
	page.OnRequest(func(r playwright.Request) {
		e := &RequestEntry{Method: r.Method(), URL: r.URL(), Type: r.ResourceType(), Size: -1, Nav: nav(), req: r}
		j.mu.Lock()
		defer j.mu.Unlock()
		j.lastID++
		e.ID = j.lastID
		j.requests = append(j.requests, e)
		j.byReq[r] = e
		if len(j.requests) > maxRequests {
			delete(j.byReq, j.requests[0].req)
			j.requests = j.requests[1:]
			j.reqDrop++
		}
	})
	page.OnResponse(func(resp playwright.Response) {
		status, headers, req := resp.Status(), resp.Headers(), resp.Request()
		j.mu.Lock()
		defer j.mu.Unlock()
		if e := j.byReq[req]; e != nil {
			e.Status = status
			if n, err := strconv.ParseInt(headers["content-length"], 10, 64); err == nil {
				e.Size = n
			}
			if code := headers[NetErrorHeader]; code != "" && status == 502 {
				// The server's network guard could not reach the site: the
				// request failed as it would have without the guard.
				e.Status, e.Failed = 0, "net::"+code
			}
		}
	})
	page.OnRequestFailed(func(r playwright.Request) {
		why := "failed"
		if err := r.Failure(); err != nil {
			why = err.Error()
		}
		j.mu.Lock()
		defer j.mu.Unlock()
		if e := j.byReq[r]; e != nil && e.Failed == "" {
			// A failure the guard named stays: the browser's own word for
			// the same request is only its CORS consequence.
			e.Failed = why
		}
	})
}

// Console returns the console entries kept, oldest first, and how many
// older ones were dropped.
func (t *Tab) Console() ([]ConsoleEntry, int) {
	j := &t.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]ConsoleEntry(nil), j.console...), j.dropped
}

// Requests returns the requests kept, oldest first, and how many older
// ones were dropped.
func (t *Tab) Requests() ([]RequestEntry, int) {
	j := &t.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]RequestEntry, len(j.requests))
	for i, e := range j.requests {
		out[i] = *e
	}
	return out, j.reqDrop
}

// Request returns the kept request numbered id, and whether it is still
// kept (the journal drops the oldest past its bound).
func (t *Tab) Request(id int) (RequestEntry, bool) {
	j := &t.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, e := range j.requests {
		if e.ID == id {
			return *e, true
		}
	}
	return RequestEntry{}, false
}

// Navigations returns how many main-frame navigations the tab committed.
func (t *Tab) Navigations() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.navSeq
}

// String renders a request as one line.
func (r RequestEntry) String() string {
	s := fmt.Sprintf("%s %s", r.Method, r.URL)
	switch {
	case r.Failed != "":
		s += " → FAILED " + r.Failed
	case r.Status != 0:
		s += fmt.Sprintf(" → %d", r.Status)
	default:
		s += " → (no answer yet)"
	}
	s += " [" + r.Type
	if r.Size >= 0 {
		s += ", " + HumanSize(r.Size)
	}
	return s + "]"
}

// HumanSize writes a byte count the way results show sizes: B, KB, MB.
func HumanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
