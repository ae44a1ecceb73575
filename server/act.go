package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	neturl "net/url"
	"slices"
	"strings"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/refs"
)

// The action pipeline: every tool that can change the page (click, type,
// hover, select, press_key, drag, fill_form, file_upload, navigate, the
// history tools, a new tab) runs through run. It takes the role's lock,
// resolves the refs, acts, waits for the page to settle, then takes the
// same steps after every action: dialogs, a tab that closed itself, where
// the page went, FailureLog scoping, the sign-out check, new tabs, and the
// snapshot on request. A new tool gets all of them by describing itself as
// an op.

// op is one page-changing call, as the pipeline runs it.
type op struct {
	// refs are resolved before acting, in order; the op acts in the tab of
	// the first. Without refs it acts in tab's tab.
	refs []string
	// again is the call made on another element in place of refs[i]: the
	// step that stale-ref and covered-element plans offer.
	again func(i int, ref string) llmerr.Action
	// retry is the call made again as it was, for the steps that accept a
	// dialog the policy dismissed.
	retry llmerr.Action
	// tab opens the tab an op without refs acts in; nil means the role's
	// current tab.
	tab func(r *role) (*browser.Tab, error)
	// hint replaces the next-step hint of an op that loads a document.
	hint string
	// do acts. It adds what it did to a.res and fails with a Playwright
	// error (classified by the pipeline) or an *llmerr.Error.
	do func(a *acting) error
}

// acting is an op under way, under its role's lock.
type acting struct {
	ctx     context.Context
	srv     *Server
	c       *call
	role    *role
	tab     *browser.Tab
	targets []*target
	res     *response
	// timeout is the action timeout, in Playwright's milliseconds.
	timeout *float64
	// landed is set by an op that loaded a document (load, or the history
	// tools): the result always says where the tab is then.
	landed *pageChange
	// opened, when set, is closed once the context opens a page: the
	// action is expected to open a tab, so the report waits for it.
	opened <-chan struct{}
	// failedAt is the target an error of do is about, when not the first.
	failedAt *target
	// from is the tab's URL before do, mark its events, start its time.
	from  string
	mark  browser.Mark
	start time.Time
	// set are the fields whose value the action set, with the value typed
	// ("" for a choice or a checkbox): the change report leaves out what
	// the agent asked for itself.
	set map[string]string
	// code is the action as Playwright test code, while recording
	// (record.go).
	code []string
	// filled is the last field browser_fill_form filled: the result names
	// the control that submits its form (noteSubmit).
	filled *refs.Record
}

// setValue notes that the action set ref's value as the agent asked:
// typed text, or "" for a choice made or a box checked.
func (a *acting) setValue(ref, typed string) {
	if a.set == nil {
		a.set = map[string]string{}
	}
	a.set[ref] = typed
}

// target is a resolved ref ready for an action.
type target struct {
	rec refs.Record
	el  playwright.ElementHandle
	// code finds the element in a test (record.go), once computed.
	code string
	tab  *browser.Tab
	role *role
	// again is the call made on another element in this one's place.
	again func(ref string) llmerr.Action
}

// sameCall returns the call's tool with ref and args, in the call's role:
// the step a plan offers to redo the call on another element.
func (c *call) sameCall(args ...llmerr.Arg) func(ref string) llmerr.Action {
	return func(ref string) llmerr.Action {
		return c.step(append([]llmerr.Arg{llmerr.A("ref", ref)}, args...)...)
	}
}

// step is the call's tool with args, in the call's role when it named one.
func (c *call) step(args ...llmerr.Arg) llmerr.Action {
	if c.roleName != "" {
		args = append(args, llmerr.A("role", c.roleName))
	}
	return llmerr.Action{Tool: c.tool, Args: args}
}

// refOp is the op of a tool that acts on one element: ref, with the call's
// other arguments args.
func (c *call) refOp(ref string, args []llmerr.Arg, do func(a *acting) error) op {
	again := c.sameCall(args...)
	return op{refs: []string{ref}, again: func(_ int, r string) llmerr.Action { return again(r) },
		retry: again(ref), do: do}
}

// run is the pipeline.
func (s *Server) run(ctx context.Context, c *call, o op) (*response, error) {
	r, unlock, err := c.lockRole()
	if err != nil {
		return nil, err
	}
	defer unlock()
	a := &acting{ctx: ctx, srv: s, c: c, role: r, res: &response{},
		timeout: playwright.Float(float64(s.cfg.ActionTimeout.Milliseconds()))}
	for i, ref := range o.refs {
		t, err := c.resolve(r, ref, func(n string) llmerr.Action { return o.again(i, n) })
		if err != nil {
			return nil, err
		}
		a.targets = append(a.targets, t)
	}
	switch {
	case len(a.targets) > 0:
		a.tab = a.targets[0].tab
	case o.tab != nil:
		a.tab, err = o.tab(r)
	default:
		a.tab, err = r.ensureTab()
	}
	if err != nil {
		return nil, err
	}
	if s.recording() {
		// Before the action: a click can take its element away.
		for _, t := range a.targets {
			a.locatorOf(t)
		}
	}
	before := pageState(a.tab)
	r.callBegins()
	a.from, a.mark, a.start = before.url, a.tab.Mark(), time.Now()
	if err := o.do(a); err != nil {
		switch {
		case a.closedItsTab():
			// The action closed its own tab (window.close() in a click
			// handler): that is what it did, not a failure.
			a.res.did = []string{fmt.Sprintf("Acted on %s.", describe(a.targets[0].rec, ""))}
		case a.openedTabs(err):
			// The action ran and opened tabs; only Playwright's wait after
			// it ran out while they opened. Saying "timed out" would make
			// the agent do it again.
			a.res.did = []string{fmt.Sprintf("Acted on %s; it opened new tabs.", describe(a.targets[0].rec, ""))}
		default:
			return nil, a.fail(err, before.url)
		}
	}
	if err := a.finish(o, before, a.mark); err != nil {
		return nil, err
	}
	if len(a.code) > 0 {
		r.tests.add(c.tool == "browser_navigate", a.tab.URL(), a.code)
	}
	r.acted, r.actedMark = a.tab, a.mark
	return a.res, nil
}

// closedItsTab reports whether an element action failed only because it
// closed the tab it ran in.
func (a *acting) closedItsTab() bool {
	return len(a.targets) > 0 && a.tab.Closed() && !a.tab.Crashed() && a.role.bctx != nil && !isBrowserGone(a.role)
}

// openedTabs reports whether an element action that timed out opened tabs
// meanwhile: then it did run.
func (a *acting) openedTabs(err error) bool {
	if len(a.targets) == 0 || llmerr.Classify(err, llmerr.Situation{}).Code != llmerr.ActionTimeout {
		return false
	}
	a.role.popMu.Lock()
	defer a.role.popMu.Unlock()
	return len(a.role.opened) > 0
}

// fail classifies an error of do. A timeout or an element that could not
// take the action is then diagnosed from the page itself.
func (a *acting) fail(err error, url string) error {
	if e, ok := llmerr.As(err); ok {
		return e
	}
	t := a.failedAt
	if t == nil && len(a.targets) > 0 {
		t = a.targets[0]
	}
	timeout := a.srv.cfg.ActionTimeout
	if t == nil {
		return llmerr.Classify(err, llmerr.Situation{Tool: a.c.tool, URL: url, Timeout: timeout})
	}
	return a.role.explain(err, a.c.tool, t, url, timeout)
}

// explain classifies an action's failure on t and, for a timeout or an
// element that could not take the action, says from the page what was in
// the way.
func (r *role) explain(err error, tool string, t *target, url string, timeout time.Duration) *llmerr.Error {
	if (url == "" || url == "about:blank") && t.rec.URL != "" {
		// A page whose browser went away may no longer say where it was;
		// the ref remembers.
		url = t.rec.URL
	}
	e := llmerr.Classify(err, llmerr.Situation{Tool: tool, Ref: t.rec.Ref, Element: t.rec.Element(), URL: url, Timeout: timeout})
	if e.Code == llmerr.ActionTimeout && !answers(t.tab) {
		// Diagnosing would ask the page, which does not answer.
		return busyPage(tool, url, err)
	}
	if e.Code == llmerr.ActionTimeout || e.Code == llmerr.ElementNotInteractable {
		r.diagnose(e, t)
	}
	return e
}

// load navigates the op's tab to url and records where it landed. The
// same failure gets the same plan wherever a load happens.
func (a *acting) load(url, verb string) error {
	nav := a.srv.cfg.NavigationTimeout
	start := time.Now()
	if a.tab.Stuck.Load() && !answers(a.tab) {
		// Chromium would ask the stuck page before leaving it, and wait.
		if err := a.replaceStuck(); err != nil {
			return err
		}
	}
	if strings.HasPrefix(a.tab.Page.URL(), "chrome-error:") {
		// A failed load left its error page, whose late commits would
		// interrupt this one: a fresh tab loses nothing of it.
		if t, err := a.role.replaceTab(a.tab); err == nil {
			a.tab, a.mark = t, t.Mark()
		}
	}
	resp, err := a.goTo(url, nav)
	if err == nil {
		err = a.unreachable(resp, url)
	}
	if err != nil {
		if blocked := a.refused(); blocked != nil {
			return blocked
		}
		if code := a.tunnelFailure(err); code != "" {
			err = fmt.Errorf("net::%s at %s", code, url)
		}
		if low := strings.ToLower(err.Error()); (strings.Contains(low, "err_aborted") || strings.Contains(low, "crash")) && a.rendererDied() {
			return a.crashedLoading(url, err)
		}
		e := llmerr.Classify(err, llmerr.Situation{Tool: a.c.tool, URL: url, Timeout: nav, Navigating: true})
		if e.Code == llmerr.NavigationTimeout {
			// The request is still open in the browser; left so, the retry
			// the plan offers would be aborted by it. Stopped, the tab can
			// tell whether a page is stuck in its own script: a page left
			// behind is dropped with its tab, and the retry runs in a fresh
			// one; a page loaded is left to finish.
			stopLoading(a.role, a.tab)
			if !answers(a.tab) {
				stuck := a.tab.Page.URL()
				if sameURL(stuck, url) {
					return busyLoading(a.c.tool, url, err)
				}
				if rerr := a.replaceStuck(); rerr != nil {
					return busyPage(a.c.tool, url, err)
				}
				return stuckLoad(a.c, url, stuck, err)
			}
		}
		// Whether anything of the target arrived is read from where the tab
		// is, not from commit events: the commit of the page before can land
		// after the mark.
		if e.Code == llmerr.NavigationTimeout && !sameURL(a.tab.Page.URL(), url) {
			// Nothing arrived: the tab still shows what it showed, so a
			// snapshot has nothing to offer; a second try often works (a
			// server waking up, a cold cache).
			e.Cause = "the server sent nothing back in that time (the tab still shows the page before)"
			e.Actions = []llmerr.Action{a.c.loadAgain(url, "retry once: a first load is often the slow one"), llmerr.Call("browser_snapshot", "if it times out again, see what the tab shows")}
		}
		return e
	}
	a.landed = &pageChange{kind: landed, verb: verb, requested: url, status: statusOf(resp)}
	// The load event gets part of what the navigation timeout left.
	a.waitLoad(min(nav/2, loadWait, nav-time.Since(start)))
	return nil
}

// loadWait bounds waiting for a loaded page's load event, after
// DOMContentLoaded.
const loadWait = 5 * time.Second

// waitLoad gives the page's load event a bounded time: the page's scripts
// that wait for it (handlers attached on load) set the page up. Requests
// of other sites (an ad's frame, a slow widget) do not hold the agent.
func (a *acting) waitLoad(limit time.Duration) {
	if limit <= 0 {
		return
	}
	page := a.tab.Page.URL()
	a.tab.WaitLoaded(a.ctx, limit, func() bool {
		pending := a.tab.Pending(browser.Mark{})
		return len(pending) > 0 && !slices.ContainsFunc(pending, func(u string) bool { return sameSite(u, page) })
	})
}

// sameSite reports whether two URLs share a host, or its last two labels
// (www.example.com and cdn.example.com): a rough site, where ports do not
// count.
func sameSite(a, b string) bool {
	ua, err1 := neturl.Parse(a)
	ub, err2 := neturl.Parse(b)
	if err1 != nil || err2 != nil {
		return false
	}
	ha, hb := ua.Hostname(), ub.Hostname()
	if ha == hb {
		return true
	}
	if net.ParseIP(ha) != nil || net.ParseIP(hb) != nil {
		return false
	}
	site := func(h string) string {
		labels := strings.Split(h, ".")
		return strings.Join(labels[max(0, len(labels)-2):], ".")
	}
	return site(ha) == site(hb)
}

// goTo loads url in the op's tab. When another navigation (most often
// the page's own script) replaces the load, where the tab went decides:
// the load is tried once more, and then the tab's landing is the result.
func (a *acting) goTo(url string, nav time.Duration) (playwright.Response, error) {
	deadline := time.Now().Add(nav)
	from := a.tab.Page.URL()
	for try := 0; ; try++ {
		resp, err := a.tab.Page.Goto(url, playwright.PageGotoOptions{
			WaitUntil: playwright.WaitUntilStateDomcontentloaded,
			Timeout:   playwright.Float(float64(max(time.Until(deadline), time.Millisecond).Milliseconds())),
		})
		// Under load Playwright can also report no error and no response
		// while the page being left took the tab back before the load
		// committed: the same case as an interruption.
		hijacked := err == nil && resp == nil && !a.tab.Crashed() && samePath(a.tab.Page.URL(), from) && !samePath(url, from)
		if !hijacked && (err == nil || !strings.Contains(err.Error(), "interrupted by another navigation")) {
			return resp, err
		}
		if try == 0 && err != nil && strings.Contains(err.Error(), `navigation to "chrome-error://`) {
			// The error page of the load before (a refused connection, a
			// certificate) committed late, over this one. The tab holds
			// nothing but that error page: the load is made again in a
			// fresh one, which no late commit reaches.
			if t, rerr := a.role.replaceTab(a.tab); rerr == nil {
				a.tab, a.mark = t, t.Mark()
				continue
			}
		}
		// The page being left took the tab back (same address, another
		// query): it is left for a fresh tab, always, since returning now
		// would leave the agent on the page it asked to leave. On a loaded
		// machine the first try can use most of the time: the fresh tab's
		// load gets at least leftLoad of its own.
		left := samePath(a.tab.Page.URL(), from) && !samePath(url, from)
		if try == 0 && !sameURL(a.tab.Page.URL(), url) && (left || time.Until(deadline) > nav/2) {
			// Most often the page left behind navigates itself (a timer, a
			// refresh): a fresh tab in its place has no script to do that.
			if a.replaceTab("kept navigating itself") == nil {
				if least := time.Now().Add(min(nav/2, leftLoad)); left && deadline.Before(least) {
					deadline = least
				}
				continue
			}
		}
		_ = a.tab.Page.WaitForLoadState(playwright.PageWaitForLoadStateOptions{
			State:   playwright.LoadStateDomcontentloaded,
			Timeout: playwright.Float(float64(max(time.Until(deadline), time.Millisecond).Milliseconds())),
		})
		a.res.addDid("Another navigation (the page's own, or a redirect by script) replaced the load; the tab shows where it went.")
		return nil, nil
	}
}

// leftLoad is the least time a load gets in the fresh tab that replaces a
// page which took its tab back: the call may outlast the navigation
// timeout by that much.
const leftLoad = 1500 * time.Millisecond

func sameURL(a, b string) bool { return strings.TrimRight(a, "/") == strings.TrimRight(b, "/") }

// samePath reports whether two URLs name the same document path on the
// same origin, whatever their query or fragment.
func samePath(a, b string) bool {
	ua, err1 := neturl.Parse(a)
	ub, err2 := neturl.Parse(b)
	return err1 == nil && err2 == nil && ua.Scheme == ub.Scheme && ua.Host == ub.Host &&
		strings.TrimRight(ua.Path, "/") == strings.TrimRight(ub.Path, "/")
}

// busyLoading is the error of a load whose page arrived but keeps its main
// thread busy: it may finish (a very large page), or never (a loop).
func busyLoading(tool, url string, err error) *llmerr.Error {
	return &llmerr.Error{Code: llmerr.NavigationTimeout, Tool: tool, URL: url, Err: err,
		Message: "The page arrived but does not answer: its main thread is busy.",
		Cause:   "the page's own script runs without yielding (building a very large page, or a loop that never ends)",
		Actions: []llmerr.Action{
			llmerr.Call("browser_wait_for", "give its script time to finish", llmerr.A("time", 5)),
			llmerr.Call("browser_snapshot", "see whether it answers now"),
		},
		Note: "If it still does not answer, browser_navigate to another page: the stuck tab is then replaced by a fresh one."}
}

// within runs f, a Playwright call that takes no timeout of its own (the
// keyboard, the mouse), within the action timeout. Past it, the page is
// asked whether it answers at all, so the error says which it was.
func (a *acting) within(f func() error) error {
	d := a.srv.cfg.ActionTimeout
	err, ok := boundedOr(d, a.tab.Gone(), f)
	if ok {
		return err
	}
	if a.tab.Crashed() {
		return a.crashed()
	}
	if !answers(a.tab) {
		return busyPage(a.c.tool, a.tab.Page.URL(), fmt.Errorf("no answer within %v", d))
	}
	return fmt.Errorf("Timeout %dms exceeded.", d.Milliseconds())
}

// crashed is the error of a call whose page crashed under it. The tab is
// replaced at once, so the plan's load runs in a fresh page.
func (a *acting) crashed() error {
	url := a.tab.Page.URL()
	if _, err := a.role.replaceTab(a.tab); err != nil {
		return crashedError(url)
	}
	e := crashedError(url)
	e.Tool = a.c.tool
	e.Message = "The page crashed while " + a.c.tool + " ran; a fresh tab took its place and the page's refs are gone."
	return e
}

// rendererDied reports whether the tab's renderer crashed under a load
// that failed. Chromium aborts the load first and reports the crash just
// after, so the crash gets a moment to arrive.
func (a *acting) rendererDied() bool {
	select {
	case <-a.tab.Gone():
	case <-time.After(300 * time.Millisecond):
	}
	return a.tab.Crashed()
}

// crashedLoading is the error of a load whose renderer died under it. The
// crashed tab is replaced at once, so the retry runs in a fresh page: a
// renderer that died once (killed, out of memory) rarely dies again.
func (a *acting) crashedLoading(url string, err error) error {
	from := a.tab.Page.URL()
	if _, rerr := a.role.replaceTab(a.tab); rerr != nil {
		return crashedError(from)
	}
	return &llmerr.Error{Code: llmerr.PageCrashed, Tool: a.c.tool, URL: url, Err: err,
		Message: "The page's renderer died while " + url + " loaded; a fresh tab took its place.",
		Cause:   "its renderer process died (killed, out of memory, or a browser bug)",
		Actions: []llmerr.Action{a.c.loadAgain(url, "load it again in the fresh tab"), llmerr.Call("browser_snapshot", "get new refs")},
		Note:    "A retry usually works: the fresh tab runs in a new renderer."}
}

// replaceStuck puts a fresh tab in place of the op's tab, whose page does
// not answer.
func (a *acting) replaceStuck() error {
	return a.replaceTab("did not answer (its main thread is busy)")
}

// replaceTab puts a fresh tab in place of the op's tab, and says why in
// the result.
func (a *acting) replaceTab(why string) error {
	old := a.tab
	t, err := a.role.replaceTab(old)
	if err != nil {
		return err
	}
	a.res.tabs = append(a.res.tabs, fmt.Sprintf("The page %s %s, so its tab was closed and a fresh one took its place; its refs are stale.", old.Page.URL(), why))
	a.tab, a.mark = t, t.Mark()
	return nil
}

// stuckLoad is the error of a load that ran out of time on a page that
// does not answer, after its tab was replaced: the retry runs in the fresh
// tab.
func stuckLoad(c *call, url, stuck string, err error) *llmerr.Error {
	return &llmerr.Error{Code: llmerr.NavigationTimeout, Tool: c.tool, URL: url, Err: err,
		Message: "The page did not answer, so the navigation could not finish; its tab was closed and a fresh one took its place.",
		Cause:   "a script on " + stuck + " keeps the page's main thread busy",
		Actions: []llmerr.Action{c.loadAgain(url, "load it again in the fresh tab"), llmerr.Call("browser_snapshot", "see what the fresh tab shows")}}
}

// loadAgain is the step that loads url again in the call's role: the tab
// that failed is the current one (a new tab becomes current), so
// navigating is the retry for every loading op.
func (c *call) loadAgain(url, why string) llmerr.Action {
	step := llmerr.Call("browser_navigate", why, llmerr.A("url", url))
	if c.roleName != "" {
		step.Args = append(step.Args, llmerr.A("role", c.roleName))
	}
	return step
}

func statusOf(resp playwright.Response) int {
	if resp == nil {
		return 0
	}
	return resp.Status()
}

// finish waits for the page to settle and takes the steps every action
// ends with.
func (a *acting) finish(o op, before state, mark browser.Mark) error {
	r, tab, res := a.role, a.tab, a.res
	nav := a.srv.cfg.NavigationTimeout
	settled := tab.Settle(a.ctx, mark, browser.DefaultSettleLimits(nav))
	res.dialogs = tab.TakeDialogs()
	if tab.Stuck.Load() && !tab.Closed() && !answersAgain(tab) {
		// The action went through, then the page stopped answering (its
		// own script never yields): every read that follows would only
		// wait out its bound.
		return a.stuckAfter(before.url)
	}
	if dismissedQuestion(res.dialogs) && o.retry.Tool != "" {
		// The policy said no for the agent; saying yes is two calls.
		res.accept = []llmerr.Action{
			llmerr.Call("browser_handle_dialog", "answer the next dialog with OK", llmerr.A("accept", true)),
			{Tool: o.retry.Tool, Args: o.retry.Args, Why: "do the action again"},
		}
	}
	if tab.Closed() {
		res.tabs = append(res.tabs, r.tabClosedItself(tab))
		a.includeSnapshot()
		return nil
	}
	after := pageState(tab)
	moved := after.url != before.url
	switch {
	case a.landed != nil:
		a.landed.from, a.landed.to, a.landed.title = before.url, after.url, after.title
		res.page = a.landed
		res.hint = hintSnapshot
		if o.hint != "" {
			res.hint = o.hint
		}
	case moved:
		res.page = &pageChange{kind: navigated, from: before.url, to: after.url, title: after.title}
		res.hint = hintNewPageRefs
	case settled.Navigated:
		res.page = &pageChange{kind: reloaded, from: before.url, to: after.url, title: after.title}
		res.hint = hintStaleRefs
	case after.title != before.title:
		res.page = &pageChange{kind: retitled, from: before.url, to: after.url, title: after.title, oldTitle: before.title}
	}
	res.unfinished = settled.LoadErr != nil
	res.notLoaded = !res.unfinished && !tab.Loaded()
	if a.landed != nil || moved || settled.Navigated || after.title != before.title || a.mainRefusal() != nil {
		if err := a.checkLanding(after.url); err != nil {
			return err
		}
	}
	if a.landed != nil || moved || settled.Navigated {
		// What was missing on the page left is no longer missing.
		r.log.Frames()
		// Reported, not waited for: a frame or request that never ends
		// must not hold the agent.
		res.loading = tab.Pending(mark)
	}
	a.reportChanges(a.landed != nil)
	a.noteResubmit(a.landed != nil || moved || settled.Navigated)
	a.noteSubmit(a.landed != nil || moved || settled.Navigated)
	if a.landed == nil && !moved && !settled.Navigated {
		a.reportInvalid()
	}
	if a.landed != nil || moved {
		if handled, err := a.signInOnLanding(o, before, after.url); handled {
			// Signed in again by the role's recipe; the call ended on the
			// page it wanted (or failed saying why).
			return err
		}
		if err := r.checkSignedOut(after.url); err != nil {
			return err
		}
	}
	if a.opened != nil {
		select {
		case <-a.opened:
			// Popups come in bursts: the burst gets to pause before they
			// are reported, boundedly.
			burst := time.Now().Add(2 * time.Second)
			for time.Now().Before(burst) {
				next := r.pageOpened()
				select {
				case <-next:
					continue
				case <-time.After(300 * time.Millisecond):
				case <-a.ctx.Done():
				}
				break
			}
		case <-time.After(min(nav, 3*time.Second)):
		case <-a.ctx.Done():
		}
	}
	r.reportNewTabs(a.ctx, res, nav)
	a.saveDownloads()
	a.includeSnapshot()
	return nil
}

// stuckAfter is the error of an action the page took, after which its
// main thread stayed busy.
func (a *acting) stuckAfter(url string) error {
	e := busyPage(a.c.tool, url, errors.New("the page ran no timer after the action"))
	e.Message = strings.Join(append(slices.Clone(a.res.did), "Then the page stopped answering: its main thread is busy (a script that never yields)."), " ")
	return e
}

// unreachable turns the network guard's 502 for a server it could not reach
// back into the error Chromium would have reported without the guard.
func (a *acting) unreachable(resp playwright.Response, url string) error {
	if resp == nil || resp.Status() != 502 {
		return nil
	}
	code, err := resp.HeaderValue(strings.ToLower(netErrorHeader))
	if err != nil || code == "" {
		return nil
	}
	_, _ = a.tab.Page.Goto("about:blank")
	return fmt.Errorf("net::%s at %s", code, url)
}

// tunnelFailure names the network error behind a failed https tunnel.
func (a *acting) tunnelFailure(err error) string {
	if a.role.guard == nil || !strings.Contains(err.Error(), "ERR_TUNNEL_CONNECTION_FAILED") {
		return ""
	}
	return a.role.guard.failedSince(a.start)
}

// mainRefusal is the main-frame navigation a route refused since the op
// started, or nil.
func (a *acting) mainRefusal() *refusal {
	if a.role.guard == nil {
		return nil
	}
	for _, r := range a.role.guard.refusedSince(a.start) {
		if r.main {
			return &r
		}
	}
	return nil
}

// refused is ORIGIN_BLOCKED when the network guard turned a request of the
// tab away while the op ran (a redirect hop, a tunnel to a blocked host).
func (a *acting) refused() *llmerr.Error {
	if a.role.guard == nil {
		return nil
	}
	rs := a.role.guard.refusedSince(a.start)
	if len(rs) == 0 {
		return nil
	}
	last := rs[len(rs)-1]
	return a.blockedLanding(last.url, last.why)
}

// checkLanding applies the policy to where the tab went: a redirect, the
// page's own script or a refused request can take it where the agent was
// never allowed to ask for.
func (a *acting) checkLanding(landed string) error {
	// A main-frame navigation a route refused: the tab may not show its
	// error page yet, so its URL cannot be the test.
	if r := a.mainRefusal(); r != nil {
		return a.blockedLanding(r.url, r.why)
	}
	if why := a.srv.cfg.Origins.check(landed); why != "" && !strings.HasPrefix(landed, "chrome-error:") {
		return a.blockedLanding(landed, why)
	}
	if strings.HasPrefix(landed, "chrome-error:") {
		if e := a.refused(); e != nil {
			return e
		}
	}
	return nil
}

// blockedLanding takes the tab back to about:blank, so nothing of the
// refused page stays readable, and says where the page tried to go.
func (a *acting) blockedLanding(target, why string) *llmerr.Error {
	_, _ = a.tab.Page.Goto("about:blank", playwright.PageGotoOptions{Timeout: playwright.Float(float64(a.srv.cfg.NavigationTimeout.Milliseconds()))})
	e := a.srv.cfg.Origins.blockedError(a.c.tool, target, why)
	e.Message = fmt.Sprintf("The page went to %s, which is outside what this server may load; the tab is back on about:blank.", target)
	e.Cause = why + " (reached by a redirect or by the page itself, not asked for)"
	if len(e.Actions) == 0 && a.from != "" && a.from != "about:blank" && a.srv.cfg.Origins.check(a.from) == "" {
		e.Actions = []llmerr.Action{llmerr.Call("browser_navigate", "return to the page you were on, then take another way", llmerr.A("url", a.from))}
	}
	return e
}

// dismissedQuestion reports whether the policy dismissed a confirm or a
// prompt, which the agent may have wanted accepted.
func dismissedQuestion(ds []browser.DialogEvent) bool {
	for _, d := range ds {
		if !d.Accepted && !d.AsSet && (d.Type == "confirm" || d.Type == "prompt") {
			return true
		}
	}
	return false
}

// includeSnapshot adds a snapshot of the role's current tab when the call
// asked for one (snapshot: true), and otherwise a small page the action
// loaded (includeNewPage).
func (a *acting) includeSnapshot() {
	r := a.role
	if !a.c.snapshot {
		a.includeNewPage()
		return
	}
	if r.tab == nil || r.tab.Closed() {
		return
	}
	snap, err := r.baseline(r.tab.Page)
	if err != nil {
		a.res.noSnapshot = llmerr.FirstLine(err.Error())
		return
	}
	a.res.snapshot = snap.Render(a.srv.view(a.c, a.srv.cfg.SnapshotBudget, 0))
}

// describe names the element for a result line: role "name" [ref=eN].
func describe(rec refs.Record, human string) string {
	d := fmt.Sprintf("%s [ref=%s]", rec.Element(), rec.Ref)
	if human != "" && !strings.EqualFold(human, rec.Name) {
		d = fmt.Sprintf("%q, %s", human, d)
	}
	return d
}

type state struct{ url, title string }

// pageState reads where the tab is. Reading the title needs the page's
// main thread; a page that never yields gets no title rather than holding
// the call.
func pageState(tab *browser.Tab) state {
	wait := titleWait
	if tab.Stuck.Load() {
		wait = stuckTitleWait
	}
	st := state{url: tab.URL()}
	title, ok := bounded(wait, func() string { t, _ := tab.Page.Title(); return t })
	if ok {
		st.title = title
		tab.Stuck.Store(false)
	}
	return st
}

// titleWait bounds reading a page's title; stuckTitleWait, of a page known
// not to answer.
const (
	titleWait      = 3 * time.Second
	stuckTitleWait = 300 * time.Millisecond
)

// stopLoading stops the tab's pending navigation, as the browser's stop
// button does (Chromium's Page.stopLoading; Playwright has no call for it).
// It gives up after half a second: on a page whose thread is stuck the CDP
// session's detach never answers.
func stopLoading(r *role, tab *browser.Tab) {
	bounded(500*time.Millisecond, func() struct{} {
		if cdp, err := r.bctx.NewCDPSession(tab.Page); err == nil {
			_, _ = cdp.Send("Page.stopLoading", nil)
			_ = cdp.Detach()
		}
		return struct{}{}
	})
}

// waitPoll is how often a text wait looks again.
const waitPoll = 100 * time.Millisecond

// pollUntil checks cond every waitPoll until it holds or the deadline
// passes; it reports whether cond held.
func pollUntil(ctx context.Context, deadline time.Time, cond func() bool) bool {
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-time.After(min(waitPoll, time.Until(deadline)+time.Millisecond)):
		case <-ctx.Done():
			return cond()
		}
	}
}

// answersAgain asks a page the settle step found silent once more, briefly:
// a machine busy starting many processes (a page that opened a storm of
// popups) can hold a page's answer past the settle bound without the page
// being stuck in its own script.
func answersAgain(tab *browser.Tab) bool {
	_, ok := bounded(700*time.Millisecond, func() error { _, err := tab.Page.Evaluate("() => true"); return err })
	if ok {
		tab.Stuck.Store(false)
	}
	return ok
}
