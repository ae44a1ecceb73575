package eval

import (
	"encoding/json"
	"regexp"
	"strings"
	"time"
)

// Generic is the policy that is fair between servers: it reads the text of
// results and errors and knows no server's plan format. What it does, in
// full (docs/eval.md repeats it):
//   - It opens the start page and reads it with the server's snapshot tool,
//     then acts on each target of its task, found by role and name in the
//     newest snapshot, else among the elements the last result showed with
//     refs it had not read before (new elements: a ref read before may be
//     on a line saying the element went away).
//   - A target that is not there: it reads the page once more; then follows
//     the explicit tool calls of the last result and that snapshot; signs
//     in if the page shows a sign-in form; then presses PageDown up to 5
//     times, looking at each result as above and reading the page after
//     a result that showed no new element. It waits thinkTime before each
//     of these re-reads, as a model's turn takes at least that long.
//   - An error: it follows the explicit tool calls the error text names, in
//     order (the last of the intended tool is its retry); with none, it retries
//     the same call once; then it reads the page, signs in if it shows a
//     sign-in form, finds its target again by role and name and redoes
//     the call. At most 4 such rounds per call.
//   - A result that is not an error but names an explicit call of the tool
//     just made asks to redo it: it follows that result's calls.
//   - After its last action, when the task is not yet done, it reads the
//     page; if that shows a sign-in form it signs in and does the task once
//     more.
//
// An explicit call is written name(arg="value", ...) or name({...}) in the
// text, names a tool of the server's tools/list, and has no placeholder
// argument ("…", "<...>"). It never follows a call of the server's
// script tool: the goal must be reached through the page.
type Generic struct{}

// thinkTime is the least a model's turn takes, waited before each re-read
// of the page: time passes for a late element as it would for a model.
const thinkTime = 500 * time.Millisecond

func (Generic) Name() string { return "generic" }

type generic struct {
	a *Agent
	// latest is the newest snapshot text; last the newest result of any
	// call.
	latest, last string
	// fresh are the elements the last result, when not a snapshot, showed
	// with a ref not read before; read, every ref read so far.
	fresh []element
	read  map[string]bool
}

func (Generic) Run(a *Agent) {
	g := &generic{a: a, read: map[string]bool{}}
	for attempt := 0; attempt < 2 && !a.Stopped(); attempt++ {
		if !g.task() || a.Stopped() {
			return
		}
		// The task's calls all went through; if the page now asks to sign
		// in, the last of them did not take effect.
		if !g.snapshot() || !g.signIn() {
			return
		}
		g.a.Failed()
	}
}

// task makes the task's calls; it reports whether they all went through.
func (g *generic) task() bool {
	a := g.a
	if !g.do(intent{tool: "browser_navigate", args: map[string]any{"url": a.StartURL}}) {
		return false
	}
	if !g.do(intent{tool: "browser_snapshot"}) {
		return false
	}
	for i := range a.Goal.Clicks {
		t := a.Goal.Clicks[i]
		ref := a.FindRef(g.latest, t)
		if ref == "" {
			ref = g.shown(t)
		}
		if i == 0 && a.AgentRef != "" {
			ref = a.AgentRef
		}
		if ref == "" {
			if ref = g.locate(t); ref == "" {
				return false
			}
		}
		tool, args := t.act(ref)
		if !g.do(intent{tool: tool, args: args, target: &t}) || a.Stopped() {
			return a.Stopped()
		}
	}
	return true
}

// call makes one call and keeps what it read.
func (g *generic) call(tool string, args map[string]any) Result {
	r := g.a.Call(tool, args)
	g.keep(tool, r)
	return r
}

// keep takes in what the result of a call of tool showed.
func (g *generic) keep(tool string, r Result) {
	g.last, g.fresh = r.Text, nil
	snapshot := g.isSnapshot(tool)
	if !r.IsError && snapshot {
		g.latest = r.Text
	}
	for _, e := range g.a.elements(r.Text) {
		if !r.IsError && !snapshot && !g.read[e.ref] {
			g.fresh = append(g.fresh, e)
		}
		g.read[e.ref] = true
	}
}

// shown is the ref of t among the new elements the last result showed, or
// "".
func (g *generic) shown(t Target) string {
	for _, e := range g.fresh {
		if e.is(t) {
			return e.ref
		}
	}
	return ""
}

func (g *generic) isSnapshot(tool string) bool {
	t, _ := g.a.p.native(tool, nil)
	return t == g.a.SnapshotTool()
}

func (g *generic) snapshot() bool { return !g.call("browser_snapshot", nil).IsError }

// reread reads the page again after a model's turn.
func (g *generic) reread() bool {
	select {
	case <-g.a.ctx.Done():
		return false
	case <-time.After(thinkTime):
	}
	return g.snapshot()
}

// do makes the intended call and recovers from its failure.
func (g *generic) do(in intent) bool {
	r := g.call(in.tool, in.args)
	if !r.IsError {
		if in.target != nil && g.redoAsked(r.Text, in.tool) {
			g.a.Failed()
			if ok, _ := g.follow(g.explicit(r.Text), in.tool); ok {
				return true
			}
		}
		return true
	}
	return g.recover(in, r)
}

// redoAsked reports whether text names an explicit call of tool.
func (g *generic) redoAsked(text, tool string) bool {
	native, _ := g.a.p.native(tool, nil)
	for _, c := range g.explicit(text) {
		if c.Tool == native {
			return true
		}
	}
	return false
}

func (g *generic) recover(in intent, r Result) bool {
	retried := false
	for round := 0; round < 4 && !g.a.Stopped(); round++ {
		if calls := g.explicit(r.Text); len(calls) > 0 {
			ok, next := g.follow(calls, in.tool)
			if ok {
				return true
			}
			if next != nil {
				r = *next
				continue
			}
		} else if !retried {
			retried = true
			if r = g.call(in.tool, in.args); !r.IsError {
				return true
			}
			continue
		}
		// Read the page, find the target again, redo the call.
		if !g.snapshot() {
			continue
		}
		if g.signIn() {
			g.a.Failed()
		}
		if in.target != nil {
			ref := g.a.FindRef(g.latest, *in.target)
			if ref == "" {
				if ref = g.locate(*in.target); ref == "" {
					return false
				}
			}
			_, in.args = in.target.act(ref)
		}
		if r = g.call(in.tool, in.args); !r.IsError {
			return true
		}
	}
	return false
}

// follow makes the calls in order. The last one of the intended tool is
// the retry: it reports whether that succeeded. A failing call hands its
// error back.
func (g *generic) follow(calls []PlanStep, intended string) (bool, *Result) {
	native, _ := g.a.p.native(intended, nil)
	last := -1
	for i, c := range calls {
		if c.Tool == native {
			last = i
		}
	}
	for i, c := range calls {
		if g.a.Stopped() {
			return false, nil
		}
		r := g.call(c.Tool, c.Args)
		if r.IsError {
			return false, &r
		}
		if i == last {
			return true, nil
		}
	}
	return false, nil
}

// locate finds a target the newest snapshot does not show.
func (g *generic) locate(t Target) string {
	a := g.a
	a.Failed()
	before := g.last
	if !g.reread() {
		return ""
	}
	if ref := a.FindRef(g.latest, t); ref != "" {
		return ref
	}
	// Calls the last result or the page's description name.
	if calls := g.explicit(before + "\n" + g.latest); len(calls) > 0 {
		for _, c := range calls {
			if a.Stopped() {
				return ""
			}
			r := g.call(c.Tool, c.Args)
			if ref := a.FindRef(r.Text, t); ref != "" && !r.IsError {
				return ref
			}
		}
		if !g.reread() {
			return ""
		}
		if ref := a.FindRef(g.latest, t); ref != "" {
			return ref
		}
	}
	if g.signIn() {
		if ref := a.FindRef(g.latest, t); ref != "" {
			return ref
		}
		g.call("browser_navigate", map[string]any{"url": a.StartURL})
		if g.snapshot() {
			if ref := a.FindRef(g.latest, t); ref != "" {
				return ref
			}
		}
	}
	for range 5 {
		if a.Stopped() || g.call("browser_press_key", map[string]any{"key": "PageDown"}).IsError {
			return ""
		}
		if ref := g.shown(t); ref != "" {
			return ref
		}
		if len(g.fresh) > 0 {
			// The result showed what the key brought into view: reading
			// the page again would show the same.
			continue
		}
		if !g.reread() {
			return ""
		}
		if ref := a.FindRef(g.latest, t); ref != "" {
			return ref
		}
	}
	return ""
}

var (
	signInUser   = regexp.MustCompile(`(?i)user|e-?mail|login`)
	signInPass   = regexp.MustCompile(`(?i)pass`)
	signInSubmit = regexp.MustCompile(`(?i)sign ?in|log ?in`)
)

// signIn fills a sign-in form the newest snapshot shows with the task's
// credentials and submits it; it reports whether it did.
func (g *generic) signIn() bool {
	a := g.a
	var user, pass, submit string
	for _, e := range a.elements(g.latest) {
		switch {
		case strings.EqualFold(e.role, "textbox") && pass == "" && signInPass.MatchString(e.name):
			pass = e.ref
		case strings.EqualFold(e.role, "textbox") && user == "" && signInUser.MatchString(e.name):
			user = e.ref
		case strings.EqualFold(e.role, "button") && submit == "" && signInSubmit.MatchString(e.name):
			submit = e.ref
		}
	}
	if user == "" || pass == "" || submit == "" || a.Credentials == nil {
		return false
	}
	a.Failed()
	g.call("browser_type", map[string]any{"ref": user, "text": a.Credentials.User})
	g.call("browser_type", map[string]any{"ref": pass, "text": a.Credentials.Password})
	g.call("browser_click", map[string]any{"ref": submit})
	g.snapshot()
	return true
}

// explicitCall matches name(...) on one line.
var explicitCall = regexp.MustCompile(`\b([a-z][a-z0-9_]*)\(([^()\n]*)\)`)

// explicit returns the explicit calls of real tools in text, in order.
func (g *generic) explicit(text string) []PlanStep {
	evaluate, _ := g.a.p.native("browser_evaluate", nil)
	var out []PlanStep
	for _, m := range explicitCall.FindAllStringSubmatch(text, -1) {
		if !g.a.HasTool(m[1]) || m[1] == evaluate {
			continue
		}
		st := PlanStep{Tool: m[1], Args: map[string]any{}}
		inner := strings.TrimSpace(m[2])
		if strings.HasPrefix(inner, "{") {
			if json.Unmarshal([]byte(inner), &st.Args) != nil {
				continue
			}
		} else {
			for _, a := range argPair.FindAllStringSubmatch(inner, -1) {
				var v any
				if err := json.Unmarshal([]byte(a[2]), &v); err != nil {
					v = strings.Trim(a[2], `"`)
				}
				st.Args[a[1]] = v
			}
			if inner != "" && len(st.Args) == 0 {
				continue // prose in parentheses, not arguments
			}
		}
		if placeholder(st.Args) || holdsEllipsis(st.Args) {
			continue
		}
		out = append(out, st)
	}
	return out
}

func holdsEllipsis(args map[string]any) bool {
	for _, v := range args {
		if s, ok := v.(string); ok && strings.Contains(s, "…") {
			return true
		}
	}
	return false
}

// elements returns the element lines of text, as the server writes them.
func (a *Agent) elements(text string) []element { return elementsOf(a.p.server.adapter.refLine, text) }
