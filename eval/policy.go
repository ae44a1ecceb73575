package eval

import (
	"strings"
)

// Policy is an agent's behaviour: deterministic, and using only what a
// model would see (the text of results and errors).
type Policy interface {
	Name() string
	Run(a *Agent)
}

// Naive retries a failed call identically, up to 3 times, then gives up:
// what models do with errors that do not say what to do.
type Naive struct{}

func (Naive) Name() string { return "naive" }

func (Naive) Run(a *Agent) {
	try := func(tool string, args map[string]any) (Result, bool) {
		r := a.Call(tool, args)
		for i := 0; i < 3 && r.IsError && !a.Stopped(); i++ {
			r = a.Call(tool, args)
		}
		return r, !r.IsError
	}
	if _, ok := try("browser_navigate", map[string]any{"url": a.StartURL}); !ok {
		return
	}
	snap, ok := try("browser_snapshot", nil)
	if !ok {
		return
	}
	for i, t := range a.Goal.Clicks {
		ref := a.FindRef(snap.Text, t)
		if i == 0 && a.AgentRef != "" {
			ref = a.AgentRef
		}
		if ref == "" {
			a.Failed()
			r, ok := try("browser_find", map[string]any{"role": t.Role, "name": t.Name})
			if ref = a.FindRef(r.Text, t); !ok || ref == "" {
				return
			}
		}
		if _, ok := try(t.act(ref)); !ok {
			return
		}
		if a.Stopped() {
			return
		}
	}
}

// Reader knows its goal (each target's role and name) and reads only the
// text of results: it performs the numbered calls a result or an error
// lists, in order, re-finds its target by role and name in any new
// snapshot, and retries. With no plan it retries the same call. It never
// reads the structured error.
type Reader struct{}

func (Reader) Name() string { return "reader" }

// intent is the call the agent means to make: the tool and, for a click,
// its target.
type intent struct {
	tool   string
	args   map[string]any
	target *Target
}

type reader struct {
	a *Agent
	// latest is the newest snapshot text the agent has read; gen counts
	// the snapshots read.
	latest string
	gen    int
}

func (Reader) Run(a *Agent) {
	p := &reader{a: a}
	if !p.do(intent{tool: "browser_navigate", args: map[string]any{"url": a.StartURL}}) {
		return
	}
	if !p.do(intent{tool: "browser_snapshot"}) {
		return
	}
	for i := range a.Goal.Clicks {
		t := a.Goal.Clicks[i]
		ref := a.FindRef(p.latest, t)
		if i == 0 && a.AgentRef != "" {
			ref = a.AgentRef
		}
		if ref == "" {
			if ref = p.locate(t); ref == "" {
				return
			}
		}
		tool, args := t.act(ref)
		if !p.do(intent{tool: tool, args: args, target: &t}) || a.Stopped() {
			return
		}
	}
}

// do makes the call and, on an error (or a result that lists steps),
// recovers: it reports whether the intent was carried out.
func (p *reader) do(in intent) bool {
	r := p.a.Call(in.tool, in.args)
	p.read(in.tool, r)
	if !r.IsError {
		if steps := ParseSteps(r.Text); len(steps) > 0 && in.target != nil {
			// A result that lists steps (a dialog answered against the
			// action's purpose) asks to redo it another way.
			p.a.Failed()
			p.perform(steps, in)
		}
		return true
	}
	return p.recover(in, r)
}

// read keeps the newest snapshot and signs in when a result shows the
// sign-in form and the task gave credentials.
func (p *reader) read(tool string, r Result) {
	if r.IsError || (tool != "browser_snapshot" && tool != "browser_find") {
		return
	}
	if tool == "browser_snapshot" {
		p.latest = r.Text
		p.gen++
	}
}

// recover follows the plan of error r, for at most 4 rounds.
func (p *reader) recover(in intent, r Result) bool {
	for round := 0; round < 4 && !p.a.Stopped(); round++ {
		gen := p.gen
		steps := ParseSteps(r.Text)
		if len(steps) == 0 {
			// No plan: retry the same call; there is no new snapshot to
			// re-find the target in.
			r = p.a.Call(in.tool, in.args)
			p.read(in.tool, r)
			if !r.IsError {
				return true
			}
			continue
		}
		ok, next, retried := p.perform(steps, in)
		if ok {
			return true
		}
		if next != nil {
			r = *next
			continue
		}
		if retried {
			return false
		}
		// The plan did not redo the call: redo it, on the target as a new
		// snapshot shows it (the same ref when the plan read none).
		if in.target != nil && p.gen != gen {
			ref := p.a.FindRef(p.latest, *in.target)
			if ref == "" {
				if ref = p.locate(*in.target); ref == "" {
					return false
				}
			}
			_, in.args = in.target.act(ref)
		}
		r = p.a.Call(in.tool, in.args)
		p.read(in.tool, r)
		if !r.IsError {
			return true
		}
	}
	return false
}

// perform runs the steps in order, as a model reading the plan would:
//   - a step whose reason starts with "if" or "or" is an alternative; once
//     one alternative worked, the others are skipped;
//   - a step whose argument is a placeholder ("…") needs the model's own
//     words, which this policy does not have: it is skipped;
//   - the last step with the intended call's tool is the retry: its success
//     carries the intent out.
//
// A step that fails hands its error back to recover. perform reports
// whether the intent was carried out, the error to recover from next, and
// whether the retry was made.
func (p *reader) perform(steps []PlanStep, in intent) (bool, *Result, bool) {
	last := -1
	for i, st := range steps {
		if st.Tool == in.tool {
			last = i
		}
	}
	altDone := false
	for i, st := range steps {
		if p.a.Stopped() {
			return false, nil, false
		}
		alt := alternative(st.Why)
		if (alt && altDone) || placeholder(st.Args) {
			continue
		}
		r := p.a.Call(st.Tool, st.Args)
		p.read(st.Tool, r)
		if r.IsError {
			return false, &r, i == last
		}
		if alt {
			altDone = true
		}
		if i == last || (alt && st.Tool == in.tool) {
			return true, nil, true
		}
		if st.Tool == "browser_snapshot" && p.a.Credentials != nil && signInAsked(st.Why) {
			p.signIn()
		}
	}
	return false, nil, false
}

func alternative(why string) bool {
	w := strings.ToLower(why)
	return strings.HasPrefix(w, "if ") || strings.HasPrefix(w, "or ")
}

func placeholder(args map[string]any) bool {
	for _, v := range args {
		if s, ok := v.(string); ok && (s == "…" || s == "..." || strings.HasPrefix(s, "<")) {
			return true
		}
	}
	return false
}

// signInAsked reports whether a step asks to fill in a sign-in form.
func signInAsked(why string) bool {
	w := strings.ToLower(why)
	return strings.Contains(w, "sign-in") || strings.Contains(w, "sign in") || strings.Contains(w, "log in")
}

// signIn fills the sign-in form of the newest snapshot with the task's
// credentials, submits it, and reads the page it lands on.
func (p *reader) signIn() {
	user := p.a.FindRef(p.latest, Target{Role: "textbox", Name: "User"})
	pass := p.a.FindRef(p.latest, Target{Role: "textbox", Name: "Password"})
	submit := p.a.FindRef(p.latest, Target{Role: "button", Name: "Sign in"})
	if user == "" || pass == "" || submit == "" {
		return
	}
	p.a.Call("browser_type", map[string]any{"ref": user, "text": p.a.Credentials.User})
	p.a.Call("browser_type", map[string]any{"ref": pass, "text": p.a.Credentials.Password})
	p.a.Call("browser_click", map[string]any{"ref": submit})
	p.read("browser_snapshot", p.a.Call("browser_snapshot", nil))
}

// locate finds a target the snapshot does not show: browser_find, then the
// steps its answer lists, looking for the target in every result.
func (p *reader) locate(t Target) string {
	p.a.Failed()
	r := p.a.Call("browser_find", map[string]any{"role": t.Role, "name": t.Name})
	for round := 0; round < 4 && !p.a.Stopped(); round++ {
		if ref := p.a.FindRef(r.Text, t); ref != "" {
			return ref
		}
		steps := ParseSteps(r.Text)
		if len(steps) == 0 {
			return ""
		}
		var next *Result
		for _, st := range steps {
			s := p.a.Call(st.Tool, st.Args)
			p.read(st.Tool, s)
			if ref := p.a.FindRef(s.Text, t); ref != "" {
				return ref
			}
			if s.IsError {
				next = &s
				break
			}
		}
		if next == nil {
			return ""
		}
		r = *next
	}
	return ""
}
