package eval

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Result is a tool result as the agent sees it: its text and whether it is
// an error. Policies never read structured content.
type Result struct {
	Text    string
	IsError bool
}

// healed matches what a server says when it met a fault and got past it
// by itself (retrace's words; another server's run counts only its errors).
var healed = regexp.MustCompile(`signed in again by its sign-in recipe|Waited [0-9.]+m?s for a notice`)

// Step is one call of the agent's, for the run's trace.
type Step struct {
	Tool    string         `json:"tool"`
	Args    map[string]any `json:"args,omitempty"`
	IsError bool           `json:"isError,omitempty"`
	Code    string         `json:"code,omitempty"` // from the structured error, for the report only
	// Healed is set when the server recovered by itself and said so: the
	// role was signed in again by its recipe, or the click waited for a
	// notice over its target to go.
	Healed bool `json:"healed,omitempty"`
	// Error is the start of an error's text, for reading a run afterwards.
	Error string `json:"error,omitempty"`
	// Ms is how long the call took, as the agent waited for it.
	Ms int64 `json:"ms"`
}

// Agent is what a policy acts through: the MCP session with the server
// under evaluation, the goal as its task states it, and the step budget.
// The harness sits behind Call: it injects the fault at its moment and
// checks the goal after every call.
type Agent struct {
	Goal        Goal
	Credentials *Credentials
	// StartURL is the page the task says to open.
	StartURL string
	// AgentRef, when set, is the ref the agent's first click uses instead
	// of the one its snapshot shows (the hallucinated-ref fault).
	AgentRef string

	ctx       context.Context
	p         *proc
	limit     int
	trace     []Step
	failedAt  int // number of calls made when the agent first met a failure; -1 before
	done      func() bool
	reached   bool
	afterCall func(tool string, r Result)
}

// Stopped reports whether the agent may make no more calls: the goal is
// reached or the step budget is spent.
func (a *Agent) Stopped() bool { return a.reached || len(a.trace) >= a.limit }

// Reached reports whether the goal was reached.
func (a *Agent) Reached() bool { return a.reached }

// Tools returns the server's tools, as its tools/list gave them.
func (a *Agent) Tools() []*mcp.Tool { return a.p.tools }

// HasTool reports whether the server has a tool of this name.
func (a *Agent) HasTool(name string) bool { return a.p.has(name) }

// SnapshotTool is the name of the server's snapshot tool.
func (a *Agent) SnapshotTool() string { t, _ := a.p.native("browser_snapshot", nil); return t }

// FindRef returns the ref of target t in text (a snapshot, a find result)
// as the server writes its element lines, or "" when it is not there.
// With several, the first.
func (a *Agent) FindRef(text string, t Target) string {
	return findRef(a.p.server.adapter.refLine, text, t)
}

// Call makes one tool call, in retrace's tool and argument names or the
// server's own: the server's adapter maps the former. After the budget is
// spent it makes none and returns an error result.
func (a *Agent) Call(tool string, args map[string]any) Result {
	if a.Stopped() {
		return Result{Text: "stopped", IsError: true}
	}
	start := time.Now()
	r, code := a.p.call(a.ctx, tool, args)
	st := Step{Tool: tool, Args: args, IsError: r.IsError, Code: code, Ms: time.Since(start).Milliseconds()}
	st.Healed = healed.MatchString(r.Text)
	if r.IsError {
		st.Error = excerpt(r.Text, 300)
	}
	a.trace = append(a.trace, st)
	if r.IsError {
		a.Failed()
	}
	if a.afterCall != nil {
		a.afterCall(tool, r)
	}
	if a.done() {
		a.reached = true
	}
	return r
}

// Failed marks that the agent met a failure it must recover from (an
// error, or a target missing from the page).
func (a *Agent) Failed() {
	if a.failedAt < 0 {
		a.failedAt = len(a.trace)
	}
}

// refLine matches a retrace snapshot or find line: - role "name" [flags] [ref=eN].
var refLine = regexp.MustCompile(`(?m)^\s*-\s+(?P<role>[a-z]+) "(?P<name>(?:[^"\\]|\\.)*)"[^\n]*?\[ref=(?P<ref>e\d+)\]`)

// FindRef returns the ref of target in text written in retrace's snapshot
// format, or "" when it is not there. With several, the first.
func FindRef(text string, t Target) string { return findRef(refLine, text, t) }

// findRef finds t in text with re, whose groups are role, name and ref.
// Roles compare without case, as servers spell them differently.
func findRef(re *regexp.Regexp, text string, t Target) string {
	for _, e := range elementsOf(re, text) {
		if e.is(t) {
			return e.ref
		}
	}
	return ""
}

// element is one element line of a snapshot.
type element struct{ role, name, ref string }

// is reports whether e is the target t: the same role and name.
func (e element) is(t Target) bool { return strings.EqualFold(e.role, t.Role) && e.name == t.Name }

// elementsOf returns the element lines of text that re matches.
func elementsOf(re *regexp.Regexp, text string) []element {
	ri, ni, fi := re.SubexpIndex("role"), re.SubexpIndex("name"), re.SubexpIndex("ref")
	var out []element
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		out = append(out, element{m[ri], unquote(m[ni]), m[fi]})
	}
	return out
}

// unquote reads a name as written between double quotes.
func unquote(s string) string {
	if u, err := strconv.Unquote(`"` + s + `"`); err == nil {
		return u
	}
	return s
}

// PlanStep is one numbered call of a recovery plan, as parsed from text.
type PlanStep struct {
	Tool string
	Args map[string]any
	Why  string
}

var (
	stepLine = regexp.MustCompile(`(?m)^\s*\d+\.\s+([a-z_]+)\((.*?)\)(?:\s+—\s+(.*))?$`)
	argPair  = regexp.MustCompile(`([A-Za-z_]+)=("(?:[^"\\]|\\.)*"|\[[^\]]*\]|true|false|-?\d+(?:\.\d+)?)`)
)

// ParseSteps returns the numbered tool calls in text, in order: what a
// model reading "Action Required" would do.
func ParseSteps(text string) []PlanStep {
	var out []PlanStep
	for _, m := range stepLine.FindAllStringSubmatch(text, -1) {
		st := PlanStep{Tool: m[1], Args: map[string]any{}, Why: m[3]}
		for _, a := range argPair.FindAllStringSubmatch(m[2], -1) {
			var v any
			if err := json.Unmarshal([]byte(a[2]), &v); err != nil {
				v = strings.Trim(a[2], `"`)
			}
			st.Args[a[1]] = v
		}
		out = append(out, st)
	}
	return out
}

// excerpt returns the first n bytes of s, cut at a rune boundary.
func excerpt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
