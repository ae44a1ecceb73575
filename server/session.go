package server

import (
	"sync"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/refs"
	"github.com/retrace-dev/retrace/snapshot"
)

// defaultRole is the role that always exists and has no auth.
const defaultRole = "default"

// session is the state of one MCP session: its roles.
type session struct {
	srv   *Server
	mu    sync.Mutex
	roles map[string]*role
}

func newSession(s *Server) *session {
	return &session{srv: s, roles: map[string]*role{}}
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
		r = &role{name: name, srv: s.srv, reg: refs.New(), eng: eng}
		s.roles[name] = r
	}
	return r
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

// lockRole takes the lock of the role the call acts in (the default role
// until roles arrive) and returns it with the unlock to defer. Every tool
// that touches the browser goes through here, so calls in one role never
// interleave.
func (c *call) lockRole() (*role, func()) {
	r := c.sess.role(defaultRole)
	r.mu.Lock()
	return r, r.mu.Unlock
}

// role is one signed-in user: its own browser context, page, refs and
// snapshot engine. Calls in one role run one at a time (mu); different roles
// run in parallel.
type role struct {
	name string
	srv  *Server
	mu   sync.Mutex

	bctx playwright.BrowserContext
	tab  *browser.Tab
	// reg outlives browser_close, so old refs are reported as stale, never
	// reused.
	reg *refs.Registry
	eng *snapshot.Engine
}

// ensureTab returns the role's page, creating the context and page on first
// use or after the browser, context or page went away. Call with mu held.
func (r *role) ensureTab() (*browser.Tab, error) {
	if r.tab != nil && !r.tab.Closed() && !r.tab.Crashed() {
		return r.tab, nil
	}
	if r.tab != nil && r.tab.Crashed() {
		// Say it once, then the next call gets a fresh page.
		url := r.tab.Page.URL()
		_ = r.tab.Page.Close()
		r.tab = nil
		r.eng.Reset()
		return nil, crashedError(url)
	}
	if r.bctx == nil || r.tab == nil || r.tab.Closed() {
		r.closeLocked()
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
	r.tab = browser.NewTab(page, r.srv.cfg.DialogPolicy)
	return r.tab, nil
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
	bctx, err := r.srv.browsers.NewContext("")
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
	return nil
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
	r.eng.Reset()
	return true
}
