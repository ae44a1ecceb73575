package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/playwright-community/playwright-go"
	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/failurelog"
	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/refs"
	"github.com/retrace-dev/retrace/snapshot"
)

// role is one signed-in user: its own browser context, page, refs and
// snapshot engine. Calls in one role run one at a time (mu); different roles
// run in parallel.
type role struct {
	name string
	srv  *Server
	mu   callLock
	// seat is the session's place among the browser endpoints.
	seat *browser.Seat

	bctx playwright.BrowserContext
	// userPages, set when bctx is the user's own browser context
	// (--cdp-endpoint), are the tabs that were open when it was lent:
	// never closed by retrace.
	userPages map[playwright.Page]bool
	// refused is the last form the page refused, until its fields are
	// set again or its tab leaves the document (formcheck.go).
	refused *refusedForm
	// tab is the current tab: where tools act when a ref does not say
	// otherwise. tabs are the open tabs, in the order they opened.
	tab  *browser.Tab
	tabs []*browser.Tab
	// acted is the tab of the role's last action and its mark when the
	// action began: what it started may still be running (late.go).
	acted     *browser.Tab
	actedMark browser.Mark
	// pages holds every page the context opened (the role's own and popups),
	// wrapped as it appears: the context's page event runs on Playwright's
	// dispatch goroutine, where mu may be held by the action that opened it,
	// so it only records here (popMu) and tabs adopts them under mu.
	popMu   sync.Mutex
	pages   map[playwright.Page]*browser.Tab
	opened  []*browser.Tab
	newPage chan struct{} // closed and replaced when a page opens
	// popups counts the pages opened since the role's last call began;
	// stormClosed, those closed as they opened, past the limit.
	popups, stormClosed int
	answers             *browser.DialogAnswers
	// log records the role's partial failures (frames, auth); its entries
	// come back as warnings on the role's results.
	log failurelog.Log
	// authReported is set once a required role's auth failure was returned
	// as an error.
	authReported bool
	// signInRan is set while a call ran the role's sign-in recipe (at most
	// once per call); recipeOff, once the recipe failed in this session
	// (signin.go).
	signInRan, recipeOff bool
	// reg outlives browser_close, so old refs are reported as stale, never
	// reused.
	reg *refs.Registry
	eng *snapshot.Engine
	// guard is the proxy the context's requests go through (netguard.go).
	guard *guard
	// busy is set when a call found the context alive (checkContext);
	// metLoss is the context whose browser or driver died under such a
	// call, which failed with BROWSER_CLOSED.
	busy    bool
	metLoss playwright.BrowserContext
	// stubs are the answers browser_route set (netMu guards the list for
	// readers without mu); netCond, what browser_network_conditions set;
	// cdp, the DevTools session that holds a page's emulated speed
	// (tool_network.go).
	netMu   sync.Mutex
	stubs   []*stub
	netCond atomic.Pointer[netConditions]
	cdpMu   sync.Mutex // held across throttle: one session a page
	cdp     map[playwright.Page]playwright.CDPSession
	// rec is what the context records (tool_trace.go); tests, the actions
	// as test code (record.go).
	rec   tracing
	tests actionLog
	// notes are said once, on the role's next result (popMu): that the
	// browser was started again under it, for one.
	notes []string
	// live is bctx, for abort, which must not wait for mu (popMu).
	live playwright.BrowserContext
	// resume is the page the role should be on when its context must be
	// made again: the one it was on when its context closed, or the one a
	// navigate asks for. Plans of a failed start name it.
	resume string
	// viaServer is set while bctx lives in a browser reached through a
	// Playwright browser server (see wrap).
	viaServer bool
}

// callLock is the role's lock (mu). Unlocking it runs afterCall first, still
// under the lock: the role notes there whether its browser died under the
// call that is ending, whatever tool it was.
type callLock struct {
	sync.Mutex
	afterCall func()
}

// Unlock runs afterCall, then unlocks.
func (l *callLock) Unlock() {
	if l.afterCall != nil {
		l.afterCall()
	}
	l.Mutex.Unlock()
}

// afterCall runs as each of the role's calls ends, under its lock.
func (r *role) afterCall() {
	r.signInRan = false
	r.noteLoss()
	// The element handles the call resolved are done with: disposed, they
	// no longer pin their elements in the driver and in Chromium.
	r.eng.Release()
}

// noteLoss notes when a call that used the context ends with it lost: it
// met the death of its browser or driver, and failed with BROWSER_CLOSED
// (a call in flight fails at once), so the next call need not say it again.
func (r *role) noteLoss() {
	busy := r.busy
	r.busy = false
	if busy && r.bctx != nil && r.metLoss != r.bctx {
		if _, lost := r.srv.browsers.Lost(r.bctx); lost {
			r.metLoss = r.bctx
		}
	}
}

// checkContext drops the role's context when its browser or the driver
// died, and says so unless the call that met the death already did: the
// next call then starts a new context (and, through the manager, a new
// driver and browser). The registry stays, so old refs are stale, never
// reused. Call with mu held.
func (r *role) checkContext() error {
	if r.bctx == nil {
		return nil
	}
	what, lost := r.srv.browsers.Lost(r.bctx)
	if !lost {
		r.busy = true
		return nil
	}
	told := r.metLoss == r.bctx
	url := ""
	if t := r.tab; t != nil {
		url = t.URL()
	} else if n := len(r.tabs); n > 0 {
		url = r.tabs[n-1].URL()
	}
	r.closeLocked()
	if told {
		// The call that met the death said so; this one runs in a fresh
		// browser, and its result says that too.
		r.note(restartNote(what))
		return nil
	}
	return lostError(url, what)
}

// restartNote says that the role's next page is in a browser started again.
func restartNote(what browser.Process) string {
	gone := "Chromium closed"
	switch what {
	case browser.ProcessDriver:
		gone = "the Playwright driver stopped"
	case browser.ProcessEndpoint:
		gone = "the connection to the browser endpoint closed"
	}
	return "Note: " + gone + " since the call before last, so this runs in a browser started again: the role's earlier pages are gone and refs issued before are stale."
}

// note keeps s for the role's next result.
func (r *role) note(s string) {
	r.popMu.Lock()
	defer r.popMu.Unlock()
	r.notes = append(r.notes, s)
}

// takeNotes returns the notes kept for this result and forgets them.
func (r *role) takeNotes() []string {
	r.popMu.Lock()
	defer r.popMu.Unlock()
	n := r.notes
	r.notes = nil
	return n
}

// lostUnder is the error of a call under which the role's browser or
// driver died, or nil while they live. A tool that waits without asking
// Playwright (a pause), or that reads Playwright's failures as "not yet"
// (a polling loop), asks it before it reports. Call with mu held.
func (r *role) lostUnder(tool, url string) error {
	if r.bctx == nil {
		return nil
	}
	what, lost := r.srv.browsers.Lost(r.bctx)
	if !lost {
		return nil
	}
	e := lostError(url, what)
	e.Tool = tool
	e.Message = "The browser closed while " + tool + " ran; its pages and refs are gone."
	switch what {
	case browser.ProcessDriver:
		e.Message = "The browser's driver stopped while " + tool + " ran; the pages and refs of this role are gone."
	case browser.ProcessEndpoint:
		e.Message = "The connection to the browser endpoint closed while " + tool + " ran; the pages and refs of this role are gone."
	}
	return e
}

// ensureTab returns the role's current tab, creating the context and a page
// on first use or after the browser, context or page went away. When the
// current tab closed and others are open, the newest becomes current. Call
// with mu held.
func (r *role) ensureTab() (*browser.Tab, error) {
	if err := r.checkContext(); err != nil {
		return nil, err
	}
	if r.tab != nil && !r.tab.Closed() && !r.tab.Crashed() {
		return r.tab, nil
	}
	if r.tab != nil && r.tab.Crashed() {
		// Say it once, then the next call gets a fresh page.
		url := r.tab.URL()
		r.closeTab(r.tab)
		return nil, crashedError(url)
	}
	if r.bctx != nil {
		r.adopt()
		if n := len(r.tabs); n > 0 {
			r.tab = r.tabs[n-1]
			return r.tab, nil
		}
	}
	return r.newTab()
}

// newTab opens a page in the role's context (opening the context if needed)
// and makes it current.
func (r *role) newTab() (*browser.Tab, error) {
	if err := r.checkContext(); err != nil {
		return nil, err
	}
	if r.bctx == nil {
		if err := r.openContext(); err != nil {
			return nil, err
		}
		if r.tab != nil && !r.tab.Closed() {
			return r.tab, nil // the user's own tab, in a borrowed context
		}
	}
	page, err := r.openPage()
	if err != nil {
		// The context died with its browser; start over once.
		r.closeLocked()
		if err := r.openContext(); err != nil {
			return nil, err
		}
		if page, err = r.openPage(); err != nil {
			return nil, err
		}
	}
	t := r.wrap(page, true)
	r.adopt()
	r.tab = t
	if c := r.netCond.Load(); c != nil && c.preset != "" {
		// Slow from its first request on.
		if err := r.throttle(page); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// wrap returns page's tab, watching it from now on: before it returns when
// now is set, else from another goroutine. It runs on Playwright's dispatch
// goroutine for pages the context opens; there, on a browser reached
// through a Playwright server, subscribing to the page's events would wait
// for the dispatch goroutine itself (see browser.Tab.Watch), so the popup
// event passes now only for other browsers. popMu is never held across a
// Playwright call: the dispatch goroutine may be waiting for it.
func (r *role) wrap(page playwright.Page, now bool) *browser.Tab {
	r.popMu.Lock()
	t, ok := r.pages[page]
	if !ok {
		if r.pages == nil {
			r.pages = map[playwright.Page]*browser.Tab{}
		}
		t = browser.NewTabUnwatched(page, r.srv.cfg.DialogPolicy, r.answers)
		r.pages[page] = t
		r.opened = append(r.opened, t)
		if r.newPage != nil {
			close(r.newPage)
		}
		r.newPage = make(chan struct{})
	}
	r.popMu.Unlock()
	if now {
		t.Watch()
	} else {
		go t.Watch()
	}
	if c := r.netCond.Load(); !ok && c != nil && c.preset != "" {
		// A page the context opens is wrapped on the dispatch goroutine,
		// where no Playwright call may wait (ensureTab throttles its own
		// page before it loads anything).
		go func() { _ = r.throttle(page) }()
	}
	return t
}

// popup is the context's page event. Past maxNewTabs pages since the
// role's last call began, a page is closed as it opens: a popup storm
// cannot drown the role in tabs, whenever its pages arrive. It runs on
// Playwright's dispatch goroutine, so the close runs elsewhere.
func (r *role) popup(page playwright.Page) {
	r.popMu.Lock()
	storm := r.popups >= maxNewTabs && r.pages[page] == nil
	if storm {
		r.stormClosed++
	} else {
		r.popups++
	}
	r.popMu.Unlock()
	if storm {
		go func() { _ = page.Close() }()
		return
	}
	r.wrap(page, !r.viaServer)
}

// callBegins starts the count of pages opened under a call.
func (r *role) callBegins() {
	r.popMu.Lock()
	defer r.popMu.Unlock()
	r.popups = 0
}

// takeStormClosed returns how many pages popup closed since it was last
// asked.
func (r *role) takeStormClosed() int {
	r.popMu.Lock()
	defer r.popMu.Unlock()
	n := r.stormClosed
	r.stormClosed = 0
	return n
}

// pageOpened returns a channel closed when the context next opens a page.
func (r *role) pageOpened() <-chan struct{} {
	r.popMu.Lock()
	defer r.popMu.Unlock()
	if r.newPage == nil {
		r.newPage = make(chan struct{})
	}
	return r.newPage
}

// adopt moves the pages opened since the last call into tabs, and drops
// closed tabs. It returns the adopted tabs that are still open. Call with mu
// held.
func (r *role) adopt() []*browser.Tab {
	r.popMu.Lock()
	opened := r.opened
	r.opened = nil
	r.popMu.Unlock()
	// Pages that closed before anyone saw them are dropped with the rest.
	fresh := slices.DeleteFunc(opened, (*browser.Tab).Closed)
	r.tabs = slices.DeleteFunc(append(r.tabs, fresh...), (*browser.Tab).Closed)
	return fresh
}

// closeTab closes t's page and forgets it: its bridges and its place among
// the tabs; its refs become stale.
func (r *role) closeTab(t *browser.Tab) {
	// A page that does not answer may not answer its close either; the
	// browser drops it all the same.
	bounded(time.Second, func() error { return t.Page.Close() })
	r.eng.ForgetPage(t.Page)
	r.dropTab(t)
}

// replaceTab opens a fresh page in old's place among the tabs and closes
// old without waiting: a page whose main thread never yields cannot be
// navigated away from (Chromium asks it first) and may not answer a close,
// but the browser drops it. The context stays, and with it the role's
// sign-in. old's refs become stale. Call with mu held.
func (r *role) replaceTab(old *browser.Tab) (*browser.Tab, error) {
	page, err := r.openPage()
	if err != nil {
		return nil, err
	}
	t := r.wrap(page, true)
	r.adopt()
	if i, j := r.indexOf(old), r.indexOf(t); i >= 0 && j >= 0 {
		r.tabs[i] = t
		r.tabs = slices.Delete(r.tabs, j, j+1)
	}
	if r.tab == old || r.tab == nil {
		r.tab = t
	}
	r.eng.ForgetPage(old.Page)
	go func() { _ = old.Page.Close() }()
	return t, nil
}

// newTabWait bounds opening a tab. Right after renderers die (killed, out
// of memory), Chromium can hand a new page to a renderer it has not yet
// seen die, and Playwright's newPage, which takes no timeout, then waits
// for that page forever. A second try, once the death is known, opens.
var newTabWait = [...]time.Duration{5 * time.Second, 10 * time.Second}

// openPage opens a page in the role's context, trying again once when the
// browser does not open it in time; a page that opens late is closed.
func (r *role) openPage() (playwright.Page, error) {
	type opened struct {
		page playwright.Page
		err  error
	}
	bctx := r.bctx
	for _, wait := range newTabWait {
		ch := make(chan opened, 1)
		go func() {
			p, err := bctx.NewPage()
			ch <- opened{p, err}
		}()
		timer := time.NewTimer(wait)
		select {
		case o := <-ch:
			timer.Stop()
			return o.page, o.err
		case <-timer.C:
			go func() {
				if o := <-ch; o.page != nil {
					_ = o.page.Close()
				}
			}()
		}
	}
	return nil, fmt.Errorf("the browser opened no tab within %v", newTabWait[0]+newTabWait[1])
}

// dropTab forgets t; when it was current, no tab is current.
func (r *role) dropTab(t *browser.Tab) {
	if i := slices.Index(r.tabs, t); i >= 0 {
		r.tabs = slices.Delete(r.tabs, i, i+1)
	}
	if r.tab == t {
		r.tab = nil
	}
}

// tabOf returns the open tab showing page, or nil.
func (r *role) tabOf(page playwright.Page) *browser.Tab {
	r.popMu.Lock()
	defer r.popMu.Unlock()
	t := r.pages[page]
	if t == nil || t.Closed() {
		return nil
	}
	return t
}

// openContext creates the role's browser context with the snapshot bridge
// installed at every document start.
func (r *role) openContext() error {
	// A role with a sign-in recipe signs itself in when its auth file
	// cannot be used: a command writes the file before the context loads
	// it; a form signs in the context once it is open.
	pending, rc := r.recipeDue()
	if pending != "" && len(rc.SignIn.Command) > 0 {
		if err := r.autoSignIn(rc, r.fileTrigger(pending)); err != nil {
			return err
		}
		pending = ""
	}
	state, err := r.authState()
	if err != nil {
		return err
	}
	policy := r.srv.cfg.Origins
	g, err := startGuard(policy, r.srv.cfg.Upstream)
	if err != nil {
		return err
	}
	lists := len(policy.Allowed) > 0 || len(policy.Blocked) > 0
	videoDir := ""
	if r.srv.cfg.SaveVideo != nil {
		if videoDir, err = r.srv.outputDir(); err != nil {
			g.close()
			return err
		}
	}
	bctx, err := r.srv.browsers.NewContext(browser.ContextOptions{Seat: r.seat, StorageState: state, Proxy: g.URL(),
		VideoDir: videoDir, VideoSize: r.srv.cfg.SaveVideo,
		// A worker's fetches pass no route; the guard would stop them, but
		// under a list they are not worth the surprise.
		BlockServiceWorkers: lists,
		// The user's own browser (--cdp-endpoint) lends the default role
		// its context: its profile, sign-ins and tabs.
		Default: r.name == defaultRole})
	if err != nil {
		g.close()
		if e, ok := llmerr.As(err); ok && e.Code == llmerr.BrowserUnreachable && len(e.Actions) == 0 {
			url := r.resume
			if url == "" {
				url = "about:blank"
			}
			e.URL = url
			e.Actions = []llmerr.Action{
				llmerr.Call("browser_navigate", "tries every browser endpoint again; wait a few seconds first if all were refused just now", llmerr.A("url", url)),
				llmerr.Call("list_current_roles", "if it fails again: see which endpoints are down and when each is tried again"),
			}
		}
		return err
	}
	fail := func(err error) error {
		r.srv.browsers.ReleaseContext(bctx)
		g.close()
		return err
	}
	script := r.eng.InitScript()
	if err := bctx.AddInitScript(playwright.Script{Content: &script}); err != nil {
		return fail(err)
	}
	for _, s := range r.srv.cfg.InitScripts {
		if err := bctx.AddInitScript(playwright.Script{Content: &s}); err != nil {
			return fail(err)
		}
	}
	if lists {
		// Routes refuse at once, with an error the snapshot recognises as
		// blocked; the guard stops what routes do not see.
		if err := policy.install(bctx, g.note); err != nil {
			return fail(err)
		}
	}
	if err := r.applyNetwork(bctx); err != nil {
		return fail(err)
	}
	if err := r.startRecording(bctx); err != nil {
		return fail(err)
	}
	r.guard = g
	r.bctx = bctx
	r.viaServer = r.srv.browsers.ViaServer(bctx)
	r.popMu.Lock()
	r.live = bctx
	r.popMu.Unlock()
	r.mu.afterCall = r.afterCall
	r.busy = true // this call uses it from now on
	bctx.OnPage(r.popup)
	r.userPages = nil
	if r.srv.browsers.Borrowed(bctx) {
		// The user's tabs are the role's tabs, the newest current; they
		// are the user's, so browser_close leaves them open.
		r.userPages = map[playwright.Page]bool{}
		for _, p := range bctx.Pages() {
			r.userPages[p] = true
			t := r.wrap(p, true)
			r.tabs = append(r.tabs, t)
			r.tab = t
		}
	}
	if pending != "" {
		// The context stays open, signed out, if the recipe fails.
		return r.autoSignIn(rc, r.fileTrigger(pending))
	}
	if state != "" {
		if err := r.runLoginCheck(); err != nil {
			r.closeLocked()
			return err
		}
	}
	return nil
}

// warnings decides what the role's results should warn about: what its
// log holds that did not stop the call.
func (r *role) warnings() []failurelog.Entry {
	return failurelog.Decide(r.log.Entries()).Warnings
}

// open reports whether the role's browser context is open.
func (r *role) open() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bctx != nil
}

// closeLocked closes the role's context; its refs become stale. Call with mu
// held.
func (r *role) closeLocked() bool {
	if r.bctx == nil {
		return false
	}
	if r.tab != nil {
		r.resume = r.tab.URL()
	}
	if r.userPages != nil {
		// A borrowed context stays open with the user's tabs; the tabs
		// retrace opened in it close.
		for _, t := range r.tabs {
			if !r.userPages[t.Page] && !t.Closed() {
				_, _ = bounded(time.Second, func() error { return t.Page.Close() })
			}
		}
		r.userPages = nil
	}
	videos := r.stopRecording()
	r.srv.browsers.ReleaseContext(r.bctx)
	r.bctx = nil
	r.busy, r.metLoss = false, nil
	for _, v := range videos {
		// Written once its page closed, with the context.
		r.note("Video saved to " + v)
	}
	if r.guard != nil {
		r.guard.close()
		r.guard = nil
	}
	r.tab = nil
	r.tabs = nil
	r.popMu.Lock()
	r.pages, r.opened, r.live = nil, nil, nil
	r.popMu.Unlock()
	r.eng.Reset()
	r.cdpMu.Lock()
	r.cdp = nil
	r.cdpMu.Unlock()
	return true
}

// forget drops what the role remembered of its session, as browser_close
// ends it: the next browser is a fresh start, whose sign-in problems are
// reported again, whose sign-in recipe may run again after one failed, and
// whose warnings are its own. Call with mu held. (The closes the server
// makes itself, to restart a lost browser or load a new sign-in, keep
// them: the agent was told once.)
func (r *role) forget() {
	r.authReported, r.recipeOff = false, false
	r.refused = nil
	r.log.Clear(func(failurelog.Entry) bool { return true })
}

// abort closes the role's context without waiting for its lock: a call
// stuck on a page that does not answer fails at once, and its session can
// end. The call's own closeLocked finds the context released.
func (r *role) abort() {
	r.popMu.Lock()
	c := r.live
	r.live = nil
	r.popMu.Unlock()
	if c != nil {
		r.srv.browsers.ReleaseContext(c)
	}
}

// resolveError is a failure of Playwright while it looked for a ref's
// element; call.resolve classifies it with the call's tool.
type resolveError struct {
	err error
	rec refs.Record
}

func (e *resolveError) Error() string { return e.err.Error() }
func (e *resolveError) Unwrap() error { return e.err }

// lostSoon is checkContext after waiting up to d for the context to be
// found lost. Call with mu held.
func (r *role) lostSoon(d time.Duration) error {
	for end := time.Now().Add(d); r.bctx != nil; time.Sleep(25 * time.Millisecond) {
		if _, lost := r.srv.browsers.Lost(r.bctx); lost || time.Now().After(end) {
			break
		}
	}
	return r.checkContext()
}

// resolve looks ref up in the role's registry and finds its element. Call
// with the role's lock held.
func (r *role) resolve(ref string) (*target, error) {
	rec, err := r.reg.Lookup(ref)
	if err != nil {
		return nil, err
	}
	if err := r.checkContext(); err != nil {
		return nil, err
	}
	// The ref may belong to another of the role's tabs than the current
	// one: the action runs there.
	tab := r.tab
	if p := r.eng.PageOf(rec); p != nil {
		tab = r.tabOf(p)
	}
	if tab != nil && tab == r.tab && tab.Crashed() {
		_, err := r.ensureTab() // reports the crash and clears the page
		return nil, err
	}
	if tab == nil || tab.Closed() {
		// Pages close a moment before their browser's connection is known
		// lost: give that news a moment to come, so the error says what
		// happened to the browser.
		if err := r.lostSoon(300 * time.Millisecond); err != nil {
			return nil, err
		}
		return nil, &llmerr.Error{Code: llmerr.StaleRef, Ref: ref, Element: rec.Element(), URL: rec.URL,
			Message: fmt.Sprintf("Ref %s belongs to a page that is no longer open.", ref),
			Cause:   "the browser or its page was closed after this ref was issued",
			Actions: []llmerr.Action{
				llmerr.Call("browser_navigate", "open the page again", llmerr.A("url", rec.URL)),
				llmerr.Call("browser_snapshot", "get fresh refs"),
			}}
	}
	el, err := r.eng.Resolve(rec)
	if err != nil {
		if _, typed := llmerr.As(err); !typed {
			// Finding the element failed in Playwright: its browser may
			// have gone under it.
			if lerr := r.lostSoon(300 * time.Millisecond); lerr != nil {
				return nil, lerr
			}
			return nil, &resolveError{err: err, rec: rec}
		}
		return nil, err
	}
	return &target{rec: rec, el: el, tab: tab, role: r}, nil
}

// reportNewTabs adopts the tabs the page opened (popups, target=_blank
// links) and says so in res; the newest becomes the current tab, since
// that is where the agent's action led. Call with the role's lock held.
func (r *role) reportNewTabs(ctx context.Context, res *response, nav time.Duration) {
	fresh := r.adopt()
	if len(fresh) == 0 {
		return
	}
	extra := r.takeStormClosed()
	if len(fresh) > maxNewTabs {
		// Pages wrapped before popup saw them (a race at the limit).
		for _, t := range fresh[maxNewTabs:] {
			r.closeTab(t)
		}
		extra += len(fresh) - maxNewTabs
		fresh = fresh[:maxNewTabs]
	}
	if extra > 0 {
		// A popup storm: the first ones are kept, the rest closed, so one
		// page cannot drown the role in tabs or the call in waiting.
		res.tabs = append(res.tabs, fmt.Sprintf("The page opened %d tabs at once; the %d past the first %d were closed.",
			len(fresh)+extra, extra, maxNewTabs))
	}
	prev := r.indexOf(r.tab)
	// One deadline for all of them: each popup gets its document, boundedly.
	deadline := time.Now().Add(min(nav, 3*time.Second))
	for _, t := range fresh {
		st := popupState(ctx, t, deadline)
		res.tabs = append(res.tabs, fmt.Sprintf("Opened a new tab %d: %s\n%s", r.indexOf(t), st.url, titleLine(st.title)))
	}
	r.tab = fresh[len(fresh)-1]
	line := fmt.Sprintf("Tab %d is now the current tab; call browser_snapshot() to see it", r.indexOf(r.tab))
	if prev >= 0 {
		line += fmt.Sprintf(", or browser_tabs(action=\"select\", index=%d) to go back", prev)
	}
	res.tabs = append(res.tabs, line+".")
}

// maxNewTabs is how many tabs one action may open; more are closed.
const maxNewTabs = 10

// tabClosedItself hands over from a tab that closed during an action to
// the newest open tab, and says which.
func (r *role) tabClosedItself(t *browser.Tab) string {
	r.adopt()
	if n := len(r.tabs); n > 0 && r.tab == t {
		r.tab = r.tabs[n-1]
		return fmt.Sprintf("The tab closed itself. Tab %d (%s) is now the current tab.", n-1, r.tab.Page.URL())
	}
	return "The page closed itself. The next browser call opens a new page."
}

// isBrowserGone reports whether the role's browser is no longer connected.
func isBrowserGone(r *role) bool {
	b := r.bctx.Browser()
	return b != nil && !b.IsConnected()
}

// indexOf returns t's position in the role's tabs, or -1.
func (r *role) indexOf(t *browser.Tab) int { return slices.Index(r.tabs, t) }

// listTabs renders the role's tabs, marking the current one. Their titles
// are the pages' words: the list is fenced.
func (r *role) listTabs() string {
	s, _ := r.tabList()
	return s
}

// tabList is listTabs, and the same tabs for structuredContent.
func (r *role) tabList() (string, []map[string]any) {
	lines := []string{}
	var data []map[string]any
	for i, t := range r.tabs {
		title := snapshot.Clip(pageState(t).title, snapshot.MaxTitle) // bounded: a stuck page has none
		cur := ""
		if t == r.tab {
			cur = " (current)"
		}
		lines = append(lines, fmt.Sprintf("- %d%s: %s — %s", i, cur, t.Page.URL(), title))
		data = append(data, map[string]any{"index": i, "url": t.Page.URL(), "title": title, "current": t == r.tab})
	}
	return "Tabs:\n" + strings.Join(fenceBlock(lines), "\n"), data
}

// popupState waits, until deadline, for a popup to leave about:blank, where
// every popup starts, and to load its document; then it reads its state.
func popupState(ctx context.Context, t *browser.Tab, deadline time.Time) state {
	pollUntil(ctx, deadline, func() bool {
		u := t.Page.URL()
		return t.Closed() || (u != "" && u != "about:blank")
	})
	left := max(time.Until(deadline), 100*time.Millisecond)
	_ = t.Page.WaitForLoadState(playwright.PageWaitForLoadStateOptions{
		State: playwright.LoadStateDomcontentloaded, Timeout: playwright.Float(float64(left.Milliseconds()))})
	return pageState(t)
}
