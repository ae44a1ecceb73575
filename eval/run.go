package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/retrace-dev/retrace/fixture"
	"github.com/retrace-dev/retrace/llmerr"
)

// Options configure an evaluation.
type Options struct {
	Scenarios []Scenario
	Policies  []Policy
	// Servers are the MCP servers evaluated, each probed (Server.Probe)
	// before Evaluate.
	Servers []*Server
	// Styles are the error styles a server that renders retrace's styles
	// runs with, one process per style; other servers run once, as they are.
	Styles []llmerr.Style
	// K is how many times each scenario runs per server, policy and style,
	// each with its own timing (fault delay, page variant).
	K int
	// ActionTimeout and NavigationTimeout are given to servers that take
	// retrace's flags; short, so the faults that wait for a timeout do not
	// make the run long. Other servers take theirs in their command.
	ActionTimeout     time.Duration
	NavigationTimeout time.Duration
	// Parallel is how many runs go at once, each with its own server
	// process, browser context and origins (0 or less: one).
	Parallel int
	// Progress, when set, gets one line per run, as runs finish.
	Progress io.Writer
}

// Run is one scenario run: what the agent did and whether it got there.
type Run struct {
	Scenario string `json:"scenario"`
	Kind     string `json:"kind"`
	Server   string `json:"server"`
	Policy   string `json:"policy"`
	// Style is the error style of a server that renders retrace's styles,
	// "native" for any other.
	Style   string `json:"style"`
	Rep     int    `json:"rep"`
	Reached bool   `json:"reached"`
	// Failed is whether the agent met a failure at all (an error, or a
	// target missing from the page).
	Failed bool `json:"failed"`
	Calls  int  `json:"calls"`
	// ExtraCalls are the calls beyond those of a run without the fault
	// (navigate, snapshot, one per click).
	ExtraCalls int      `json:"extraCalls"`
	Codes      []string `json:"codes,omitempty"`
	Trace      []Step   `json:"trace"`
	Ms         int64    `json:"ms"`
}

// NativeStyle is the Style of runs on a server that has no error styles
// of retrace's.
const NativeStyle = "native"

// variant is one way of starting a server: with an error style, or as it is.
type variant struct {
	server *Server
	style  string
}

// args are the flags a variant's process starts with, beyond its command.
func (v variant) args(o Options) []string {
	if !v.server.Styled() {
		return nil
	}
	return []string{"--error-style", v.style,
		"--timeout-action", strconv.FormatInt(o.ActionTimeout.Milliseconds(), 10),
		"--timeout-navigation", strconv.FormatInt(o.NavigationTimeout.Milliseconds(), 10)}
}

// Evaluate runs every scenario on every server, with every policy and
// style, K times, against the fixture fx, Parallel runs at a time. Each
// worker keeps one process of each server variant and resets its browser
// between runs (browser_close, or a new process for a server without
// one); a scenario with a role runs, on a server that takes retrace's
// roles, in a process started with the role's configuration, which the
// worker keeps for the next run with the same one, reset the same way
// with a new sign-in in the role's auth file. The runs come back in the order of the loops
// (scenario, server, policy, style, repetition), whatever order they
// finish in; on an error, those that finished, in that order.
func Evaluate(ctx context.Context, o Options, fx *fixture.Server) ([]Run, error) {
	if o.K <= 0 {
		o.K = 1
	}
	if o.ActionTimeout <= 0 {
		o.ActionTimeout = defaultActionTimeout
	}
	if o.NavigationTimeout <= 0 {
		o.NavigationTimeout = defaultNavigationTimeout
	}
	type job struct {
		sc  Scenario
		v   variant
		pol Policy
		rep int
	}
	var jobs []job
	for _, sc := range o.Scenarios {
		for _, srv := range o.Servers {
			vs := []variant{{srv, NativeStyle}}
			if srv.Styled() {
				vs = vs[:0]
				for _, st := range o.Styles {
					vs = append(vs, variant{srv, string(st)})
				}
			}
			for _, pol := range o.Policies {
				for _, v := range vs {
					for rep := range o.K {
						jobs = append(jobs, job{sc, v, pol, rep})
					}
				}
			}
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := newEventLog(fx)
	runs := make([]Run, len(jobs))
	done := make([]bool, len(jobs))
	var (
		mu       sync.Mutex // guards done, firstErr and Progress
		firstErr error
		next     = make(chan int)
		wg       sync.WaitGroup
	)
	for range min(max(o.Parallel, 1), len(jobs)) {
		wg.Go(func() {
			w := &worker{o: o, procs: map[variant]*proc{}}
			defer w.close()
			for i := range next {
				j := jobs[i]
				r, err := w.run(ctx, events, j.sc, j.v, j.pol, j.rep)
				mu.Lock()
				switch {
				case err != nil:
					if firstErr == nil {
						firstErr = fmt.Errorf("%s (%s, %s, %s): %w", j.sc.Name, j.v.server.Name, j.pol.Name(), j.v.style, err)
						cancel()
					}
				default:
					runs[i], done[i] = r, true
					if o.Progress != nil {
						mark := "FAIL"
						if r.Reached {
							mark = "ok"
						}
						fmt.Fprintf(o.Progress, "%-4s %-24s %-15s %-7s %-8s rep %d: %d calls (%d extra) %v\n",
							mark, j.sc.Name, j.v.server.Name, j.pol.Name(), j.v.style, j.rep, r.Calls, r.ExtraCalls, r.Codes)
					}
				}
				mu.Unlock()
			}
		})
	}
feed:
	for _, i := range schedule(len(jobs), func(i int) string { return jobs[i].sc.Name }) {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	var out []Run
	for i, r := range runs {
		if done[i] {
			out = append(out, r)
		}
	}
	if firstErr != nil {
		return out, firstErr
	}
	if err := ctx.Err(); err != nil {
		return out, err
	}
	if n := events.unattributed(); n > 0 {
		return out, fmt.Errorf("the fixture logged %d events on routes the runs' fronts do not attribute (eval/front.go, eventRoutes)", n)
	}
	return out, nil
}

// worker runs jobs one at a time, keeping a process per server variant
// and one per role configuration.
type worker struct {
	o     Options
	procs map[variant]*proc
	roles map[roleKey]*roleProc
	// roleAt is where the fronts of the worker's role runs listen: their
	// origins are in the configurations its role processes started with.
	roleAt []string
}

// roleKey is what a role process's configuration and environment depend
// on, beyond the origin.
type roleKey struct {
	v              variant
	role, start    string
	recipe         bool
	user, password string
}

// roleProc is a server process started with a role's configuration, and
// the directory holding it and the role's auth file.
type roleProc struct {
	p    *proc
	dir  string
	auth string
}

func (w *worker) close() {
	for _, p := range w.procs {
		p.Close()
	}
	for _, rp := range w.roles {
		rp.p.Close()
		os.RemoveAll(rp.dir)
	}
}

// session returns a process of v whose browser starts afresh: the
// worker's own, reset, or a new one when it has none or it died.
func (w *worker) session(ctx context.Context, v variant) (*proc, error) {
	if p, ok := w.procs[v]; ok {
		// A server with no tool to close its browser starts afresh only
		// as a new process.
		if close, _ := p.native("browser_close", nil); p.has(close) {
			if r, _ := p.call(ctx, "browser_close", nil); !strings.HasPrefix(r.Text, "protocol error") {
				return p, nil
			}
		}
		p.Close()
		delete(w.procs, v)
	}
	p, err := v.server.start(ctx, v.args(w.o), nil)
	if err != nil {
		return nil, err
	}
	w.procs[v] = p
	return p, nil
}

func (w *worker) run(ctx context.Context, events *eventLog, sc Scenario, v variant, pol Policy, rep int) (Run, error) {
	start := time.Now()
	roleRun := sc.Role != "" && v.server.adapter.Roles
	// The run's own origins: its events and slow first loads are its own.
	// Role runs of a worker take turns on the same two, named in their
	// processes' configurations.
	var at []string
	if roleRun {
		at = w.roleAt
	}
	site, err := newFront(events, at...)
	if err != nil {
		return Run{}, err
	}
	defer site.Close()
	var p *proc
	if roleRun {
		w.roleAt = site.addrs
		if p, err = w.roleSession(ctx, events.fx, v, site.URL, sc); err != nil {
			return Run{}, err
		}
	} else {
		if p, err = w.session(ctx, v); err != nil {
			return Run{}, err
		}
		if sc.Role != "" {
			// A server without roles is signed in as a storage-state file
			// would sign it in: the session cookie, set before the task.
			if err := signInByCookie(ctx, p, events.fx, site.URL, sc); err != nil {
				return Run{}, err
			}
		}
	}
	a := &Agent{Goal: sc.Goal, Credentials: sc.Credentials, StartURL: site.URL + sc.variant(rep),
		AgentRef: sc.Fault.AgentRef, ctx: ctx, p: p, limit: sc.Steps, failedAt: -1,
		done: func() bool { return slices.Contains(site.Events(), sc.Goal.Event) }}
	faulted := sc.Fault.Script == ""
	snapshotTool, _ := p.native("browser_snapshot", nil)
	a.afterCall = func(tool string, r Result) {
		if t, _ := p.native(tool, nil); faulted || t != snapshotTool || r.IsError {
			return
		}
		faulted = true
		time.Sleep(time.Duration(sc.Fault.delay(rep)) * time.Millisecond)
		// The fault goes through the same session, on a call the agent
		// never sees.
		p.call(ctx, "browser_evaluate", map[string]any{"function": sc.Fault.Script})
		time.Sleep(time.Duration(sc.Fault.SettleMs) * time.Millisecond)
	}
	pol.Run(a)
	r := Run{Scenario: sc.Name, Kind: sc.Kind, Server: v.server.Name, Policy: pol.Name(), Style: v.style, Rep: rep,
		Reached: a.reached, Failed: a.failedAt >= 0, Calls: len(a.trace), Trace: a.trace,
		Ms: time.Since(start).Milliseconds()}
	// A fault the server healed by itself was met all the same.
	r.Failed = r.Failed || slices.ContainsFunc(a.trace, func(s Step) bool { return s.Healed })
	// A run without the fault takes: navigate, snapshot, one call per click.
	r.ExtraCalls = max(0, len(a.trace)-(2+len(sc.Goal.Clicks)))
	for _, s := range a.trace {
		if s.Code != "" {
			r.Codes = append(r.Codes, s.Code)
		}
	}
	return r, nil
}

// signInByCookie gives the browser of p the scenario user's fixture
// session (revoked first when the scenario says so), on origin base.
func signInByCookie(ctx context.Context, p *proc, fx *fixture.Server, base string, sc Scenario) error {
	token := fx.NewSession(sc.Credentials.User)
	if sc.Revoked {
		fx.EndSession(token)
	}
	if r, _ := p.call(ctx, "browser_navigate", map[string]any{"url": base + "/eval/_paid.js"}); r.IsError {
		return fmt.Errorf("signing in by cookie: navigate: %s", r.Text)
	}
	script := fmt.Sprintf("() => { document.cookie = %q; return document.cookie.length > 0 }", "session="+token+"; path=/")
	if r, _ := p.call(ctx, "browser_evaluate", map[string]any{"function": script}); r.IsError {
		return fmt.Errorf("signing in by cookie: %s", r.Text)
	}
	return nil
}

// roleSession returns a process of v started with sc's role configuration
// on the origin base, its role selected, whose browser starts afresh with
// a new sign-in of the scenario's user in the role's auth file (revoked
// first when the scenario says so): the worker's own, its browser closed,
// or a new one. Closing the browser ends the role's session (its auth file
// is read again, its warnings start empty), as a new process would.
func (w *worker) roleSession(ctx context.Context, fx *fixture.Server, v variant, base string, sc Scenario) (*proc, error) {
	k := roleKey{v: v, role: sc.Role, start: sc.Start, recipe: sc.Recipe,
		user: sc.Credentials.User, password: sc.Credentials.Password}
	rp, ok := w.roles[k]
	if ok {
		if err := writeAuth(fx, rp.auth, sc); err != nil {
			return nil, err
		}
		if r, _ := rp.p.call(ctx, "browser_close", nil); !strings.HasPrefix(r.Text, "protocol error") && !r.IsError {
			return rp.p, nil
		}
		rp.p.Close()
		os.RemoveAll(rp.dir)
		delete(w.roles, k)
	}
	dir, err := os.MkdirTemp("", "retrace-eval-")
	if err != nil {
		return nil, err
	}
	rp = &roleProc{dir: dir, auth: filepath.Join(dir, sc.Role+".json")}
	conf, env, err := roleConfig(dir, rp.auth, base, sc)
	if err == nil {
		err = writeAuth(fx, rp.auth, sc)
	}
	if err == nil {
		rp.p, err = v.server.start(ctx, append(v.args(w.o), "--config", conf), env)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if r, _ := rp.p.call(ctx, "select_role", map[string]any{"role": sc.Role}); r.IsError {
		rp.p.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("select_role: %s", r.Text)
	}
	if w.roles == nil {
		w.roles = map[roleKey]*roleProc{}
	}
	w.roles[k] = rp
	return rp.p, nil
}

// writeAuth signs the scenario's user in on the fixture and writes the
// session to the auth file at path, revoking it first when the scenario
// says so.
func writeAuth(fx *fixture.Server, path string, sc Scenario) error {
	token := fx.NewSession(sc.Credentials.User)
	if sc.Revoked {
		fx.EndSession(token)
	}
	state := map[string]any{
		"cookies": []map[string]any{{"name": "session", "value": token, "domain": "127.0.0.1", "path": "/",
			"expires": -1, "httpOnly": true, "secure": false, "sameSite": "Lax"}},
		"origins": []any{},
	}
	data, _ := json.Marshal(state)
	return os.WriteFile(path, data, 0o600)
}

// roleConfig writes, in dir, a config file with the scenario's role
// requiring the auth file at auth, on the origin base; it returns its path
// and the environment the server needs for it: a sign-in recipe reads the
// credentials from variables the config names.
func roleConfig(dir, auth, base string, sc Scenario) (string, []string, error) {
	role := map[string]any{
		"authFile": auth, "authRequired": true, "defaultUrl": base + sc.Start,
		"loginCheck": map[string]any{"signedOutUrl": base + "/login"},
	}
	if sc.Recipe {
		role["signIn"] = map[string]any{
			"url": base + "/login",
			"fields": []map[string]any{
				{"label": "User", "value": map[string]any{"env": "EVAL_USER"}},
				{"role": "textbox", "name": "Password", "value": map[string]any{"env": "EVAL_PASSWORD"}},
			},
			"submit": map[string]any{"role": "button", "name": "Sign in"},
		}
	}
	conf := map[string]any{"roles": map[string]any{sc.Role: role}}
	data, _ := json.Marshal(conf)
	path := filepath.Join(dir, "retrace.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", nil, err
	}
	// The recipe's values come from this run's task, through the server
	// process's environment, as a user's would.
	env := []string{"EVAL_USER=" + sc.Credentials.User, "EVAL_PASSWORD=" + sc.Credentials.Password}
	return path, env, nil
}

// The server timeouts of an evaluation, unless set.
const (
	defaultActionTimeout     = 1500 * time.Millisecond
	defaultNavigationTimeout = 2 * time.Second
)

// schedule is the order n jobs are handed to the workers: one job of each
// scenario in turn, the scenarios taken alternately from the front and the
// back of their list (scenario names job i's). Jobs next to each other in
// the list are the same scenario and, in the built-in list, the same kind;
// run side by side they wait at the same moments (a toast, a slow load)
// and load the machine at the same moments (a fresh page each). Mixed,
// one worker's waits leave the cores to the other. The report keeps the
// list's order whatever order runs finish in.
func schedule(n int, scenario func(i int) string) []int {
	var names []string
	byName := map[string][]int{}
	for i := range n {
		name := scenario(i)
		if _, ok := byName[name]; !ok {
			names = append(names, name)
		}
		byName[name] = append(byName[name], i)
	}
	zipped := make([]string, 0, len(names))
	for lo, hi := 0, len(names)-1; lo <= hi; lo, hi = lo+1, hi-1 {
		zipped = append(zipped, names[lo])
		if lo != hi {
			zipped = append(zipped, names[hi])
		}
	}
	order := make([]int, 0, n)
	for len(order) < n {
		for _, name := range zipped {
			if q := byName[name]; len(q) > 0 {
				order = append(order, q[0])
				byName[name] = q[1:]
			}
		}
	}
	return order
}
