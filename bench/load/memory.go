package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/retrace-dev/retrace/internal/benchpage"
	"github.com/retrace-dev/retrace/internal/proctree"
)

// memState is the process tree of the server at one moment.
type memState struct {
	label    string
	procs    int
	chromium int
	rss      int64 // bytes, summed VmRSS
	pss      int64 // bytes, summed Pss
	server   int64 // bytes, VmRSS of the retrace process alone
	driver   int64 // bytes, VmRSS of the other processes that are not Chromium (the Playwright driver)
}

// memoryResult is the second part of the report: what an idle session and
// an open tab cost, and whether everything is given back when clients leave.
type memoryResult struct {
	sessions, tabs int
	idle           memState // a fresh server, no session yet
	base           memState // one session, one page: the browser is running
	withSessions   memState // base + the idle sessions
	withTabs       memState // + the tabs of the first session
	after          memState // all sessions closed
	afterWait      time.Duration
	err            string
}

// perSession and perTab are the RSS and PSS an idle session and an open
// tab add, in bytes.
func (m memoryResult) perSession() (rss, pss float64) {
	n := float64(m.sessions)
	return float64(m.withSessions.rss-m.base.rss) / n, float64(m.withSessions.pss-m.base.pss) / n
}

func (m memoryResult) perTab() (rss, pss float64) {
	n := float64(m.tabs)
	return float64(m.withTabs.rss-m.withSessions.rss) / n, float64(m.withTabs.pss-m.withSessions.pss) / n
}

// procsReturned tells whether the tree went back to its idle process count
// with no Chromium left.
func (m memoryResult) procsReturned() bool {
	return m.after.procs == m.idle.procs && m.after.chromium == 0
}

// rssReturned tells whether the tree's RSS went back to within returnSlack
// of idle.
func (m memoryResult) rssReturned() bool { return m.after.rss <= m.idle.rss+returnSlack }

// returnSlack is how far above idle the tree's RSS may stay after all
// clients left and still count as back: heaps (Go's, node's) keep some of
// what they grew to for a while.
const returnSlack = 20e6

// measureState reads the tree three times, 300 ms apart, and keeps the
// median RSS and PSS: one reading can catch a process mid-allocation.
func measureState(label string, roots ...int) memState {
	var rss, pss []int64
	var last proctree.Tree
	for i := range 3 {
		if i > 0 {
			time.Sleep(300 * time.Millisecond)
		}
		last = proctree.Sample(roots...).Live()
		rss = append(rss, last.RSS())
		pss = append(pss, last.PSS())
	}
	slices.Sort(rss)
	slices.Sort(pss)
	st := memState{label: label, procs: len(last), chromium: last.Chromium(), rss: rss[1], pss: pss[1]}
	for _, p := range last {
		switch {
		case p.PID == roots[0]:
			st.server = p.RSS
		case !p.Chromium():
			st.driver += p.RSS
		}
	}
	return st
}

// settle is how long the tree is left alone before a reading.
const settle = 2 * time.Second

// measureMemory runs the idle-session and tab measurements on a system
// that no client has used yet.
func measureMemory(ctx context.Context, sys *system, o options, pages *benchpage.Server) (m memoryResult) {
	m.sessions, m.tabs = o.idleSessions, o.tabs
	roots := sys.roots()
	time.Sleep(time.Second)
	m.idle = measureState("idle, no session", roots...)
	var sessions []*mcp.ClientSession
	defer func() {
		for _, cs := range sessions {
			cs.Close()
		}
	}()
	call := func(cs *mcp.ClientSession, tool string, args map[string]any) error {
		cctx, cancel := context.WithTimeout(ctx, o.callTimeout)
		defer cancel()
		res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			return fmt.Errorf("%s: %w", tool, err)
		}
		if res.IsError {
			var text string
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					text += tc.Text
				}
			}
			return fmt.Errorf("%s failed: %s", tool, firstLines(text, 3))
		}
		return nil
	}
	open := func() (*mcp.ClientSession, error) {
		cs, err := sys.connect(ctx, o.callTimeout)
		if err != nil {
			return nil, err
		}
		if err := call(cs, "browser_navigate", map[string]any{"url": pages.URL + "small"}); err != nil {
			cs.Close()
			return nil, err
		}
		return cs, nil
	}

	first, err := open()
	if err != nil {
		m.err = fmt.Sprintf("first session: %v", err)
		return m
	}
	sessions = append(sessions, first)
	time.Sleep(settle)
	m.base = measureState("1 session, 1 page", roots...)

	var mu sync.Mutex
	var wg sync.WaitGroup
	var errs []error
	for range o.idleSessions {
		wg.Go(func() {
			cs, err := open()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			sessions = append(sessions, cs)
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		m.err = fmt.Sprintf("%d of %d idle sessions failed to open: %v", len(errs), o.idleSessions, errs[0])
		return m
	}
	time.Sleep(settle)
	m.withSessions = measureState(fmt.Sprintf("+ %d idle sessions, 1 page each", o.idleSessions), roots...)

	for i := range o.tabs {
		if err := call(first, "browser_tabs", map[string]any{"action": "new", "url": pages.URL + "small"}); err != nil {
			m.err = fmt.Sprintf("tab %d: %v", i+1, err)
			return m
		}
	}
	time.Sleep(settle)
	m.withTabs = measureState(fmt.Sprintf("+ %d tabs in the first session", o.tabs), roots...)

	// Every client leaves: go-sdk's Close sends DELETE for its session.
	for _, cs := range sessions {
		wg.Go(func() { cs.Close() })
	}
	wg.Wait()
	sessions = nil
	left := time.Now()
	deadline := left.Add(30 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		t := proctree.Sample(roots...).Live()
		if len(t) <= m.idle.procs && t.Chromium() == 0 {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	m.afterWait = time.Since(left)
	time.Sleep(time.Second)
	m.after = measureState("after all sessions left", roots...)
	for _, st := range []memState{m.idle, m.base, m.withSessions, m.withTabs, m.after} {
		fmt.Fprintf(os.Stderr, "load: memory: %-36s %3d procs (%2d Chromium)  RSS %7.1f MB  PSS %7.1f MB\n", st.label, st.procs, st.chromium, mb(st.rss), mb(st.pss))
	}
	return m
}
