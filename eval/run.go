package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/fixture"
	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/roles"
	"github.com/retrace-dev/retrace/server"
)

// Options configure an evaluation.
type Options struct {
	Scenarios []Scenario
	Policies  []Policy
	Styles    []llmerr.Style
	// K is how many times each scenario runs per policy and style, each
	// with its own timing (fault delay, page variant).
	K int
	// ActionTimeout and NavigationTimeout are the server's; short, so the
	// faults that wait for a timeout do not make the run long.
	ActionTimeout     time.Duration
	NavigationTimeout time.Duration
	// Parallel is how many runs go at once, each with its own MCP session,
	// browser context and origins (0 or less: one).
	Parallel int
	// Progress, when set, gets one line per run, as runs finish.
	Progress io.Writer
}

// Run is one scenario run: what the agent did and whether it got there.
type Run struct {
	Scenario string `json:"scenario"`
	Kind     string `json:"kind"`
	Policy   string `json:"policy"`
	Style    string `json:"style"`
	Rep      int    `json:"rep"`
	Reached  bool   `json:"reached"`
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

// Evaluate runs every scenario with every policy and style, K times, against
// retrace on browsers (one Chromium, a fresh context per run) and the
// fixture fx, Parallel runs at a time. The runs come back in the order of
// the loops (scenario, policy, style, repetition), whatever order they
// finish in; on an error, those that finished, in that order.
func Evaluate(ctx context.Context, o Options, browsers *browser.Manager, fx *fixture.Server) ([]Run, error) {
	if o.K <= 0 {
		o.K = 1
	}
	type job struct {
		sc    Scenario
		pol   Policy
		style llmerr.Style
		rep   int
	}
	var jobs []job
	for _, sc := range o.Scenarios {
		for _, pol := range o.Policies {
			for _, style := range o.Styles {
				for rep := range o.K {
					jobs = append(jobs, job{sc, pol, style, rep})
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
			for i := range next {
				j := jobs[i]
				r, err := runOnce(ctx, o, browsers, events, j.sc, j.pol, j.style, j.rep)
				mu.Lock()
				switch {
				case err != nil:
					if firstErr == nil {
						firstErr = fmt.Errorf("%s (%s, %s): %w", j.sc.Name, j.pol.Name(), j.style, err)
						cancel()
					}
				default:
					runs[i], done[i] = r, true
					if o.Progress != nil {
						mark := "FAIL"
						if r.Reached {
							mark = "ok"
						}
						fmt.Fprintf(o.Progress, "%-4s %-24s %-7s %-8s rep %d: %d calls (%d extra) %v\n",
							mark, j.sc.Name, j.pol.Name(), j.style, j.rep, r.Calls, r.ExtraCalls, r.Codes)
					}
				}
				mu.Unlock()
			}
		})
	}
feed:
	for i := range jobs {
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

func runOnce(ctx context.Context, o Options, browsers *browser.Manager, events *eventLog, sc Scenario, pol Policy, style llmerr.Style, rep int) (Run, error) {
	start := time.Now()
	// The run's own origins: its events and slow first loads are its own.
	site, err := newFront(events)
	if err != nil {
		return Run{}, err
	}
	defer site.Close()
	cfg := server.Config{ErrorStyle: style, ActionTimeout: o.ActionTimeout, NavigationTimeout: o.NavigationTimeout,
		Logger: slog.New(slog.DiscardHandler)}
	if sc.Role != "" {
		rc, cleanup, err := roleConfig(events.fx, site.URL, sc)
		if err != nil {
			return Run{}, err
		}
		defer cleanup()
		cfg.Roles = rc
	}
	srv := server.New(cfg, browsers)
	defer srv.Close()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		return Run{}, err
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "retrace-eval", Version: server.Version}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return Run{}, err
	}
	defer cs.Close()
	harness := func(tool string, args map[string]any) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	}
	if sc.Role != "" {
		if _, err := harness("select_role", map[string]any{"role": sc.Role}); err != nil {
			return Run{}, err
		}
	}
	a := &Agent{Goal: sc.Goal, Credentials: sc.Credentials, StartURL: site.URL + sc.variant(rep),
		AgentRef: sc.Fault.AgentRef, ctx: ctx, cs: cs, limit: sc.Steps, failedAt: -1,
		done: func() bool { return slices.Contains(site.Events(), sc.Goal.Event) }}
	faulted := sc.Fault.Script == ""
	a.afterCall = func(tool string, r Result) {
		if faulted || tool != "browser_snapshot" || r.IsError {
			return
		}
		faulted = true
		time.Sleep(time.Duration(sc.Fault.delay(rep)) * time.Millisecond)
		// The fault goes through the same server, on a call the agent
		// never sees.
		_, _ = harness("browser_evaluate", map[string]any{"function": sc.Fault.Script})
		time.Sleep(time.Duration(sc.Fault.SettleMs) * time.Millisecond)
	}
	pol.Run(a)
	r := Run{Scenario: sc.Name, Kind: sc.Kind, Policy: pol.Name(), Style: string(style), Rep: rep,
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

// roleConfig signs the scenario's user in on the fixture, writes the
// session to an auth file (revoking it first when the scenario says so),
// and returns a config with the role requiring it, on the origin base.
func roleConfig(fx *fixture.Server, base string, sc Scenario) (*roles.Config, func(), error) {
	dir, err := os.MkdirTemp("", "retrace-eval-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	token := fx.NewSession(sc.Credentials.User)
	if sc.Revoked {
		fx.EndSession(token)
	}
	host := "127.0.0.1"
	state := map[string]any{
		"cookies": []map[string]any{{"name": "session", "value": token, "domain": host, "path": "/",
			"expires": -1, "httpOnly": true, "secure": false, "sameSite": "Lax"}},
		"origins": []any{},
	}
	data, _ := json.Marshal(state)
	auth := filepath.Join(dir, sc.Role+".json")
	if err := os.WriteFile(auth, data, 0o600); err != nil {
		cleanup()
		return nil, nil, err
	}
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
	data, _ = json.Marshal(conf)
	path := filepath.Join(dir, "retrace.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		cleanup()
		return nil, nil, err
	}
	rc, err := roles.Load(path)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	// The recipe's values come from this run's task, not from the
	// process's environment.
	env := map[string]string{"EVAL_USER": sc.Credentials.User, "EVAL_PASSWORD": sc.Credentials.Password}
	rc.LookupEnv = func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	return rc, cleanup, nil
}

// The server timeouts of an evaluation, unless set.
const (
	defaultActionTimeout     = 1500 * time.Millisecond
	defaultNavigationTimeout = 2 * time.Second
)
