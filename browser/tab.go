package browser

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/playwright-community/playwright-go"
)

// DialogPolicy says how JavaScript dialogs are answered.
type DialogPolicy string

// The dialog policies. beforeunload is always accepted, so a page can never
// trap the agent.
const (
	DialogAccept  DialogPolicy = "accept"
	DialogDismiss DialogPolicy = "dismiss"
)

// DialogEvent is one dialog the page opened and how it was answered.
type DialogEvent struct {
	Type     string // alert, confirm, prompt, beforeunload
	Message  string
	Accepted bool
	Answer   *string // the text a prompt was accepted with
	AsSet    bool    // answered as browser_handle_dialog said, not by the policy
}

// String renders the event for a log line, its message quoted.
func (d DialogEvent) String() string { return d.Format(strconv.Quote) }

// Format renders the event for a tool result, its message written by
// message (quoted, or fenced as the page's words).
func (d DialogEvent) Format(message func(string) string) string {
	how := "dismissed"
	if d.Accepted {
		how = "accepted"
		if d.Answer != nil {
			how += fmt.Sprintf(" with %q", *d.Answer)
		}
	}
	by := " (by the --dialog policy; browser_handle_dialog sets the next answer)"
	if d.AsSet {
		by = " (as set by browser_handle_dialog)"
	}
	if d.Type == "beforeunload" {
		by = " (leaving a page is always allowed)"
	}
	return fmt.Sprintf("%s dialog %s was %s%s", d.Type, message(d.Message), how, by)
}

// Tab is one page with the events retrace watches: dialogs, navigations of
// the main frame, requests in flight, crashes and closing. Event handlers run
// on playwright-go's dispatch goroutine, so they only record facts here and
// never call Playwright (which would deadlock).
type Tab struct {
	Page playwright.Page
	// Answers, when set, may hold the agent's answer to the next dialog.
	Answers *DialogAnswers
	// Stuck is set while the page is known not to answer (its main
	// thread never yields), so reads of it wait only briefly.
	Stuck atomic.Bool

	mu        sync.Mutex
	policy    DialogPolicy
	dialogs   []DialogEvent
	downloads []playwright.Download
	navSeq    int    // main-frame navigations committed
	lastURL   string // the main frame's URL at its last navigation
	navReq    int    // main-frame navigation requests started
	// docs counts the main frame's DOMContentLoaded events; loaded is what
	// docs was at the last load event, so the page has loaded while they
	// are equal.
	docs, loaded int
	reqSeq       int // requests started
	inflight     map[playwright.Request]int
	crashed      bool
	closed       bool
	wake         chan struct{} // closed and replaced on every event
	// gone is closed when the page crashes or closes.
	gone     chan struct{}
	goneOnce sync.Once
	watch    sync.Once

	journal journal // console and network history
}

// NewTab starts watching page.
// answers, when not nil, may hold the agent's answer to the next dialog.
func NewTab(page playwright.Page, policy DialogPolicy, answers *DialogAnswers) *Tab {
	t := NewTabUnwatched(page, policy, answers)
	t.Watch()
	return t
}

// NewTabUnwatched is NewTab without Watch: it makes no Playwright call, so
// it may run on the dispatch goroutine.
func NewTabUnwatched(page playwright.Page, policy DialogPolicy, answers *DialogAnswers) *Tab {
	return &Tab{Page: page, policy: policy, Answers: answers, inflight: map[playwright.Request]int{}, wake: make(chan struct{}), gone: make(chan struct{})}
}

// Watch subscribes to the page's events, once; callers that come while
// the first subscribes wait for it. Subscribing sends messages to the
// driver, and on a browser reached through a Playwright server each waits
// for an answer, which the dispatch goroutine delivers: there it must run
// on another goroutine.
func (t *Tab) Watch() { t.watch.Do(t.subscribe) }

func (t *Tab) subscribe() {
	page := t.Page
	page.OnDialog(t.onDialog)
	// Saved by whoever takes them: saving is a Playwright call.
	page.OnDownload(func(d playwright.Download) { t.update(func() { t.downloads = append(t.downloads, d) }) })
	t.observe(page)
	page.OnFrameNavigated(func(f playwright.Frame) {
		if f.ParentFrame() == nil {
			u := f.URL()
			t.update(func() { t.navSeq++; t.lastURL = u })
		}
	})
	page.OnRequest(func(r playwright.Request) {
		nav := r.IsNavigationRequest() && r.Frame() == page.MainFrame()
		t.update(func() {
			t.reqSeq++
			t.inflight[r] = t.reqSeq
			if nav {
				t.navReq++
			}
		})
	})
	done := func(r playwright.Request) { t.update(func() { delete(t.inflight, r) }) }
	page.OnRequestFinished(done)
	page.OnRequestFailed(done)
	page.OnDOMContentLoaded(func(playwright.Page) { t.update(func() { t.docs++ }) })
	page.OnLoad(func(playwright.Page) { t.update(func() { t.loaded = t.docs }) })
	page.OnCrash(func(playwright.Page) { t.update(func() { t.crashed = true }); t.markGone() })
	page.OnClose(func(playwright.Page) { t.update(func() { t.closed = true }); t.markGone() })
}

// URL is the page's URL. A page whose browser went away may answer
// about:blank or nothing; then it is where the page last navigated to.
func (t *Tab) URL() string {
	u := t.Page.URL()
	if u != "" && u != "about:blank" {
		return u
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lastURL != "" {
		return t.lastURL
	}
	return u
}

func (t *Tab) update(f func()) {
	t.mu.Lock()
	f()
	close(t.wake)
	t.wake = make(chan struct{})
	t.mu.Unlock()
}

// DialogAnswers holds the answer an agent set for the next dialog of any of
// a role's tabs (browser_handle_dialog); without one the policy answers.
type DialogAnswers struct {
	mu   sync.Mutex
	next *DialogAnswer
}

// DialogAnswer is how to answer one dialog.
type DialogAnswer struct {
	Accept     bool
	PromptText *string // for prompt dialogs; nil keeps the page's default
}

// Set makes a the answer to the next dialog.
func (d *DialogAnswers) Set(a DialogAnswer) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.next = &a
}

// Pending returns the answer waiting for the next dialog, if any.
func (d *DialogAnswers) Pending() *DialogAnswer {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.next
}

func (d *DialogAnswers) take() *DialogAnswer {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	a := d.next
	d.next = nil
	return a
}

func (t *Tab) onDialog(d playwright.Dialog) {
	accept := t.policy == DialogAccept || d.Type() == "beforeunload"
	text := d.DefaultValue()
	set := false
	if d.Type() != "beforeunload" {
		if a := t.Answers.take(); a != nil {
			accept, set = a.Accept, true
			if a.PromptText != nil {
				text = *a.PromptText
			}
		}
	}
	ev := DialogEvent{Type: d.Type(), Message: d.Message(), Accepted: accept, AsSet: set}
	if accept && d.Type() == "prompt" {
		ev.Answer = &text
	}
	t.update(func() { t.dialogs = append(t.dialogs, ev) })
	// Answering is a Playwright call: never on the dispatch goroutine.
	go func() {
		if accept {
			_ = d.Accept(text)
		} else {
			_ = d.Dismiss()
		}
	}()
}

// TakeDownloads returns the downloads the page started since the last
// call; each must be saved (or cancelled) by the caller.
func (t *Tab) TakeDownloads() []playwright.Download {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.downloads
	t.downloads = nil
	return d
}

// TakeDialogs returns the dialogs seen since the last call.
func (t *Tab) TakeDialogs() []DialogEvent {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.dialogs
	t.dialogs = nil
	return d
}

// Crashed reports whether the page crashed.
func (t *Tab) Crashed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.crashed
}

// Closed reports whether the page was closed.
func (t *Tab) Closed() bool {
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	// Not Page.IsClosed: playwright-go writes that flag on its dispatch
	// goroutine without a lock. A closed page leaves its context's list
	// under the context's lock, and before Watch sees it close.
	return closed || !slices.Contains(t.Page.Context().Pages(), t.Page)
}

func (t *Tab) markGone() { t.goneOnce.Do(func() { close(t.gone) }) }

// Gone returns a channel closed when the page crashes or closes: a call
// waiting on the page can stop waiting then.
func (t *Tab) Gone() <-chan struct{} { return t.gone }

// Loaded reports whether the main frame's current document fired its load
// event (or never fired DOMContentLoaded under watch, as a blank page).
func (t *Tab) Loaded() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.loaded == t.docs
}

// WaitLoaded waits, at most limit, for the load event of the current
// document, or until enough says waiting is not worth it. It reports
// whether the page loaded.
func (t *Tab) WaitLoaded(ctx context.Context, limit time.Duration, enough func() bool) bool {
	t.waitUntil(ctx, limit, func() bool { return t.Loaded() || enough() })
	return t.Loaded()
}

// Mark is a point in the tab's event history, taken before an action so the
// settle step knows what the action started.
type Mark struct {
	navSeq, navReq, reqSeq int
}

// Mark returns the current point in the event history.
func (t *Tab) Mark() Mark {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Mark{navSeq: t.navSeq, navReq: t.navReq, reqSeq: t.reqSeq}
}

// Pending returns the URLs of the requests started since m that are still
// running, oldest first.
func (t *Tab) Pending(m Mark) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	type p struct {
		seq int
		url string
	}
	var ps []p
	for r, seq := range t.inflight {
		// Browser-internal loads (the PDF viewer's chrome-extension://
		// files) are not the page's.
		if u := r.URL(); seq > m.reqSeq && (strings.HasPrefix(u, "http:") || strings.HasPrefix(u, "https:")) {
			ps = append(ps, p{seq, u})
		}
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].seq < ps[j].seq })
	urls := make([]string, len(ps))
	for i, x := range ps {
		urls[i] = x.url
	}
	return urls
}

// state returns, under the lock, what happened since m and the channel that
// will be closed on the next event.
func (t *Tab) since(m Mark) (navRequested, navCommitted bool, pending int, wake <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, seq := range t.inflight {
		if seq > m.reqSeq {
			pending++
		}
	}
	return t.navReq > m.navReq, t.navSeq > m.navSeq, pending, t.wake
}
