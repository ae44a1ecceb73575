package server

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/retrace-dev/retrace/browser"
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
	// seat is where the session's browsers run: one endpoint for all its
	// roles (browser.Manager.NewSeat).
	seat *browser.Seat
}

func newSession(s *Server) *session {
	return &session{srv: s, roles: map[string]*role{}, current: defaultRole, seat: s.browsers.NewSeat()}
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
		r = &role{name: name, srv: s.srv, seat: s.seat, reg: refs.New(), eng: eng, answers: &browser.DialogAnswers{}}
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

// close releases the session's browser contexts. A call still running
// (stuck on a page) does not hold it: its context closes under it first.
func (s *session) close() {
	s.abort()
	s.mu.Lock()
	roles := s.roles
	s.mu.Unlock()
	for _, r := range roles {
		r.mu.Lock()
		r.closeLocked()
		r.mu.Unlock()
	}
	s.seat.Release()
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
	// A tab the page opened after the last call returned is where that
	// call led; what the call started may still be running (late.go).
	tab = r.followLateTabs(context.Background())
	if c.tool != "browser_wait_for" {
		r.notePending(tab)
	}
	return r, tab, unlock, nil
}

// abort closes every role's context at once, whatever its calls are doing.
func (s *session) abort() {
	s.mu.Lock()
	roles := slices.Collect(maps.Values(s.roles))
	s.mu.Unlock()
	for _, r := range roles {
		r.abort()
	}
}
