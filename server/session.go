package server

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/failurelog"
	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/refs"
	"github.com/retrace-dev/retrace/roles"
	"github.com/retrace-dev/retrace/snapshot"
)

// defaultRole is the role that always exists and has no auth.
const defaultRole = roles.Default

// session is the state of one MCP session: its roles and which one tools
// act in when they name none.
type session struct {
	srv     *Server
	mu      sync.Mutex
	roles   map[string]*role
	current string
}

func newSession(s *Server) *session {
	return &session{srv: s, roles: map[string]*role{}, current: defaultRole}
}

// currentRole returns the name of the role tools act in by default.
func (s *session) currentRole() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current
}

// role returns the named role's state, creating it on first use.
func (s *session) role(name string) *role {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.roles[name]
	if !ok {
		eng := snapshot.NewEngine()
		// A snapshot answers within the action timeout: the walk gets 60%
		// of it, the wait for a busy page's answer the rest.
		eng.WalkBudget = s.srv.cfg.ActionTimeout * 3 / 5
		eng.AnswerGrace = s.srv.cfg.ActionTimeout * 2 / 5
		r = &role{name: name, srv: s.srv, reg: refs.New(), eng: eng, answers: &browser.DialogAnswers{}}
		eng.Log = &r.log
		s.roles[name] = r
	}
	return r
}

// peek returns the named role's state if it exists, without creating it.
func (s *session) peek(name string) *role {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.roles[name]
}

func (s *session) close() {
	s.mu.Lock()
	roles := s.roles
	s.mu.Unlock()
	for _, r := range roles {
		r.mu.Lock()
		r.closeLocked()
		r.mu.Unlock()
	}
}

// lockRole takes the lock of the role the call acts in: the one its role
// argument names, or the session's current role. It returns the role with the
// unlock to defer. Every tool that touches the browser goes through here,
// so calls in one role never interleave while roles run in parallel.
func (c *call) lockRole() (*role, func(), error) {
	name := c.roleName
	if name == "" {
		name = c.sess.currentRole()
	}
	if _, ok := c.srv.cfg.Roles.Get(name); !ok {
		return nil, nil, unknownRole(c.srv.cfg.Roles, c.tool, name)
	}
	r := c.sess.role(name)
	r.mu.Lock()
	c.role = r
	return r, r.mu.Unlock, nil
}

// closest returns the one name within a small edit distance of s (a typo),
// or "" when there is none or more than one.
func closest(s string, names []string) string {
	best, hits := "", 0
	limit := max(1, len(s)/3)
	for _, n := range names {
		if d := editDistance(strings.ToLower(s), strings.ToLower(n)); d <= limit {
			best, hits = n, hits+1
		}
	}
	if hits != 1 {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// lockTab is lockRole for the tools that read or script the page: it also
// makes sure the role has a page. The returned unlock is nil on error.
func (c *call) lockTab() (*role, *browser.Tab, func(), error) {
	r, unlock, err := c.lockRole()
	if err != nil {
		return nil, nil, nil, err
	}
	tab, err := r.ensureTab()
	if err != nil {
		unlock()
		return nil, nil, nil, err
	}
	return r, tab, unlock, nil
}

// unknownRole lists the roles there are and, when one is close to name,
// makes selecting it the first step.
func unknownRole(cfg *roles.Config, tool, name string) *llmerr.Error {
	names := cfg.Names()
	e := &llmerr.Error{Code: llmerr.UnknownRole, Tool: tool, Role: name,
		Message: fmt.Sprintf("There is no role %q.", name),
		Cause:   "the roles are " + quoteAll(names),
		Details: map[string]any{"roles": names}}
	if near := closest(name, names); near != "" {
		e.Actions = []llmerr.Action{llmerr.Call("select_role", "the closest existing role", llmerr.A("role", near))}
	} else {
		e.Actions = []llmerr.Action{llmerr.Call("list_current_roles", "see the roles there are and their sign-in state")}
	}
	return e
}

// role is one signed-in user: its own browser context, page, refs and
// snapshot engine. Calls in one role run one at a time (mu); different roles
// run in parallel.
type role struct {
	name string
	srv  *Server
	mu   sync.Mutex

	bctx playwright.BrowserContext
	// tab is the current tab: where tools act when a ref does not say
	// otherwise. tabs are the open tabs, in the order they opened.
	tab  *browser.Tab
	tabs []*browser.Tab
	// pages holds every page the context opened (the role's own and popups),
	// wrapped as it appears: the context's page event runs on Playwright's
	// dispatch goroutine, where mu may be held by the action that opened it,
	// so it only records here (popMu) and tabs adopts them under mu.
	popMu   sync.Mutex
	pages   map[playwright.Page]*browser.Tab
	opened  []*browser.Tab
	newPage chan struct{} // closed and replaced when a page opens
	answers *browser.DialogAnswers
	// log records the role's partial failures (frames, auth); its entries
	// come back as warnings on the role's results.
	log failurelog.Log
	// authReported is set once a required role's auth failure was returned
	// as an error.
	authReported bool
	// reg outlives browser_close, so old refs are reported as stale, never
	// reused.
	reg *refs.Registry
	eng *snapshot.Engine
}

// ensureTab returns the role's current tab, creating the context and a page
// on first use or after the browser, context or page went away. When the
// current tab closed and others are open, the newest becomes current. Call
// with mu held.
func (r *role) ensureTab() (*browser.Tab, error) {
	if r.tab != nil && !r.tab.Closed() && !r.tab.Crashed() {
		return r.tab, nil
	}
	if r.tab != nil && r.tab.Crashed() {
		// Say it once, then the next call gets a fresh page.
		url := r.tab.Page.URL()
		_ = r.tab.Page.Close()
		r.eng.ForgetPage(r.tab.Page)
		r.dropTab(r.tab)
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
	if r.bctx == nil {
		if err := r.openContext(); err != nil {
			return nil, err
		}
	}
	page, err := r.bctx.NewPage()
	if err != nil {
		// The context died with its browser; start over once.
		r.closeLocked()
		if err := r.openContext(); err != nil {
			return nil, err
		}
		if page, err = r.bctx.NewPage(); err != nil {
			return nil, err
		}
	}
	t := r.wrap(page)
	r.adopt()
	r.tab = t
	return t, nil
}

// wrap returns page's tab, watching it from now on. It runs on Playwright's
// dispatch goroutine for pages the context opens, so it takes only popMu and
// makes no Playwright call.
func (r *role) wrap(page playwright.Page) *browser.Tab {
	r.popMu.Lock()
	defer r.popMu.Unlock()
	if t, ok := r.pages[page]; ok {
		return t
	}
	if r.pages == nil {
		r.pages = map[playwright.Page]*browser.Tab{}
	}
	t := browser.NewTab(page, r.srv.cfg.DialogPolicy, r.answers)
	r.pages[page] = t
	r.opened = append(r.opened, t)
	if r.newPage != nil {
		close(r.newPage)
	}
	r.newPage = make(chan struct{})
	return t
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
	var fresh []*browser.Tab
	for _, t := range opened {
		if !t.Closed() {
			r.tabs = append(r.tabs, t)
			fresh = append(fresh, t)
		}
	}
	open := r.tabs[:0]
	for _, t := range r.tabs {
		if !t.Closed() {
			open = append(open, t)
		}
	}
	r.tabs = open
	return fresh
}

// dropTab forgets t; when it was current, no tab is current.
func (r *role) dropTab(t *browser.Tab) {
	for i, x := range r.tabs {
		if x == t {
			r.tabs = append(r.tabs[:i], r.tabs[i+1:]...)
			break
		}
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

func crashedError(url string) *llmerr.Error {
	if url == "" {
		url = "about:blank"
	}
	return &llmerr.Error{Code: llmerr.PageCrashed, URL: url,
		Message: "The page crashed; its refs are gone.",
		Cause:   "its renderer process died (out of memory, a browser bug, or killed)",
		Actions: []llmerr.Action{
			llmerr.Call("browser_navigate", "load it again in a fresh page", llmerr.A("url", url)),
			llmerr.Call("browser_snapshot", "get new refs"),
		}}
}

// openContext creates the role's browser context with the snapshot bridge
// installed at every document start.
func (r *role) openContext() error {
	state, err := r.authState()
	if err != nil {
		return err
	}
	bctx, err := r.srv.browsers.NewContext(state)
	if err != nil {
		return err
	}
	script := r.eng.InitScript()
	if err := bctx.AddInitScript(playwright.Script{Content: &script}); err != nil {
		r.srv.browsers.ReleaseContext(bctx)
		return err
	}
	if err := r.srv.cfg.Origins.install(bctx); err != nil {
		r.srv.browsers.ReleaseContext(bctx)
		return err
	}
	r.bctx = bctx
	bctx.OnPage(func(p playwright.Page) { r.wrap(p) })
	if state != "" {
		if err := r.runLoginCheck(); err != nil {
			r.closeLocked()
			return err
		}
	}
	return nil
}

// runLoginCheck loads the role's loginCheck.url in a page of its own and
// sees where it lands: on the signed-out page, or redirected away from the
// check page, or refused (401/403), the loaded sign-in does not work.
func (r *role) runLoginCheck() error {
	rc, _ := r.srv.cfg.Roles.Get(r.name)
	if rc.LoginCheck == nil || rc.LoginCheck.URL == "" {
		return nil
	}
	page, err := r.bctx.NewPage()
	if err != nil {
		return err
	}
	defer page.Close()
	resp, err := page.Goto(rc.LoginCheck.URL, playwright.PageGotoOptions{
		WaitUntil: playwright.WaitUntilStateDomcontentloaded,
		Timeout:   playwright.Float(float64(r.srv.cfg.NavigationTimeout.Milliseconds())),
	})
	if err != nil {
		// The check could not run; browsing may still work, so say so.
		r.log.Record(failurelog.Entry{Kind: failurelog.AuthCheck, Reason: failurelog.ReasonUnknown, Role: r.name,
			AuthFile: rc.AuthFile, Detail: "the check page " + rc.LoginCheck.URL + " did not load"})
		return nil
	}
	landed := page.URL()
	status := 0
	if resp != nil {
		status = resp.Status()
	}
	signedOut := rc.LoginCheck.SignedOut(landed) || status == 401 || status == 403 ||
		(rc.LoginCheck.SignedOutURL == "" && strings.TrimRight(landed, "/") != strings.TrimRight(rc.LoginCheck.URL, "/"))
	if !signedOut {
		return nil
	}
	detail := fmt.Sprintf("its check page %s landed on %s", rc.LoginCheck.URL, landed)
	if status == 401 || status == 403 {
		detail = fmt.Sprintf("its check page %s answered HTTP %d", rc.LoginCheck.URL, status)
	}
	if rc.AuthRequired && !r.authReported {
		r.authReported = true
		return &llmerr.Error{Code: llmerr.AuthenticationFailed, Role: r.name, URL: rc.LoginCheck.URL,
			Message: fmt.Sprintf("Role %s is signed out: %s.", r.name, detail),
			Cause:   "the sign-in saved in " + rc.AuthFile + " has expired or was revoked",
			Actions: r.signInSteps(rc),
			Details: map[string]any{"authFile": rc.AuthFile, "landed": landed}}
	}
	r.log.Record(failurelog.Entry{Kind: failurelog.AuthCheck, Reason: failurelog.ReasonSignedOut, Role: r.name,
		AuthFile: rc.AuthFile, Detail: detail})
	return nil
}

// authState returns the auth file to load into the role's new context, ""
// when there is none or it cannot be used. A problem with the file is an
// AUTHENTICATION_FAILED error for a role that requires auth, and otherwise a
// warning the role's results carry until the file works.
func (r *role) authState() (string, error) {
	rc, _ := r.srv.cfg.Roles.Get(r.name)
	if rc == nil || rc.AuthFile == "" {
		return "", nil
	}
	err := roles.CheckAuthFile(rc.AuthFile)
	if err == nil {
		r.log.AuthWorks()
		return rc.AuthFile, nil
	}
	var p *roles.AuthProblem
	reason := "unusable"
	if errors.As(err, &p) {
		reason = p.Reason
	}
	steps := r.signInSteps(rc)
	if rc.AuthRequired && !r.authReported {
		// Reported once; the calls of the plan then run signed out, so the
		// agent can sign in through the page and save the new state.
		r.authReported = true
		return "", &llmerr.Error{Code: llmerr.AuthenticationFailed, Role: r.name,
			Message: fmt.Sprintf("Role %s must be signed in, but its auth file %s is %s.", r.name, rc.AuthFile, reason),
			Cause:   detailOf(err),
			Actions: steps,
			Details: map[string]any{"authFile": rc.AuthFile, "reason": reason}}
	}
	r.log.Clear(func(e failurelog.Entry) bool { return e.Kind == failurelog.AuthLoad })
	r.log.Record(failurelog.Entry{Kind: failurelog.AuthLoad, Reason: failurelog.Reason(reason),
		Role: r.name, AuthFile: rc.AuthFile, Detail: detailOf(err)})
	return "", nil
}

func detailOf(err error) string {
	var p *roles.AuthProblem
	if errors.As(err, &p) {
		return p.Detail
	}
	return err.Error()
}

// signInSteps is the plan to sign a role in again: open its start page,
// sign in through the form, save the new state to its auth file.
func (r *role) signInSteps(rc *roles.Role) []llmerr.Action {
	roleArg := llmerr.A("role", r.name)
	var steps []llmerr.Action
	start := rc.DefaultURL
	if start == "" && rc.LoginCheck != nil {
		start = rc.LoginCheck.URL
	}
	if start != "" {
		steps = append(steps, llmerr.Call("browser_navigate", "open the role's start page (it leads to sign-in)", llmerr.A("url", start), roleArg))
	}
	steps = append(steps,
		llmerr.Call("browser_snapshot", "find the sign-in form and fill it in (browser_type, browser_click)", roleArg),
		llmerr.Call("browser_save_auth", "save the new sign-in to "+rc.AuthFile+" for the next run", roleArg))
	return steps
}

// checkSignedOut applies the role's login check to the URL a navigation
// landed on. Landing on the signed-out page (a login redirect) is
// AUTHENTICATION_FAILED for a role that requires auth and a warning
// otherwise; landing anywhere else on the checked site keeps nothing to
// warn about.
func (r *role) checkSignedOut(landed string) error {
	rc, _ := r.srv.cfg.Roles.Get(r.name)
	if rc == nil || rc.LoginCheck == nil || !rc.LoginCheck.SignedOut(landed) {
		return nil
	}
	r.log.Clear(func(e failurelog.Entry) bool { return e.Kind == failurelog.AuthCheck })
	detail := fmt.Sprintf("the page went to the sign-in page %s", landed)
	if rc.AuthRequired {
		return &llmerr.Error{Code: llmerr.AuthenticationFailed, Role: r.name, URL: landed,
			Message: fmt.Sprintf("Role %s is signed out: the site sent it to its sign-in page.", r.name),
			Cause:   "its session ended (expired or revoked) or its auth file holds an old sign-in",
			Actions: append([]llmerr.Action{llmerr.Call("browser_snapshot", "this is the sign-in page: fill in the form (browser_type, browser_click)", llmerr.A("role", r.name))},
				llmerr.Call("browser_save_auth", "save the new sign-in for the next run", llmerr.A("role", r.name))),
			Details: map[string]any{"signedOutUrl": rc.LoginCheck.SignedOutURL}}
	}
	r.log.Record(failurelog.Entry{Kind: failurelog.AuthCheck, Reason: failurelog.ReasonSignedOut,
		Role: r.name, AuthFile: rc.AuthFile, Detail: detail})
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
	r.srv.browsers.ReleaseContext(r.bctx)
	r.bctx = nil
	r.tab = nil
	r.tabs = nil
	r.popMu.Lock()
	r.pages, r.opened = nil, nil
	r.popMu.Unlock()
	r.eng.Reset()
	return true
}
