package eval

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Result is a tool result as the agent sees it: its text and whether it is
// an error. Policies never read structured content.
type Result struct {
	Text    string
	IsError bool
}

// Step is one call of the agent's, for the run's trace.
type Step struct {
	Tool    string         `json:"tool"`
	Args    map[string]any `json:"args,omitempty"`
	IsError bool           `json:"isError,omitempty"`
	Code    string         `json:"code,omitempty"` // from the structured error, for the report only
	// Healed is set when the server recovered by itself and said so: the
	// role was signed in again by its recipe.
	Healed bool `json:"healed,omitempty"`
}

// Agent is what a policy acts through: the MCP session, the goal as its
// task states it, and the step budget. The harness sits behind Call: it
// injects the fault at its moment and checks the goal after every call.
type Agent struct {
	Goal        Goal
	Credentials *Credentials
	// StartURL is the page the task says to open.
	StartURL string
	// AgentRef, when set, is the ref the agent's first click uses instead
	// of the one its snapshot shows (the hallucinated-ref fault).
	AgentRef string

	ctx       context.Context
	cs        *mcp.ClientSession
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

// Call makes one tool call. After the budget is spent it makes none and
// returns an error result.
func (a *Agent) Call(tool string, args map[string]any) Result {
	if a.Stopped() {
		return Result{Text: "stopped", IsError: true}
	}
	ctx, cancel := context.WithTimeout(a.ctx, 90*time.Second)
	defer cancel()
	res, err := a.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	st := Step{Tool: tool, Args: args}
	var r Result
	if err != nil {
		r = Result{Text: "protocol error: " + err.Error(), IsError: true}
	} else {
		r.IsError = res.IsError
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				r.Text += t.Text
			}
		}
		if sc, ok := res.StructuredContent.(map[string]any); ok {
			st.Code, _ = sc["code"].(string)
		}
	}
	st.IsError = r.IsError
	st.Healed = strings.Contains(r.Text, "signed in again by its sign-in recipe")
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

// refLine matches a snapshot or find line: - role "name" [flags] [ref=eN].
var refLine = regexp.MustCompile(`(?m)^\s*-\s+([a-z]+) "((?:[^"\\]|\\.)*)"[^\n]*?\[ref=(e\d+)\]`)

// FindRef returns the ref of target in text (a snapshot, a find result),
// or "" when it is not there. With several, the first.
func FindRef(text string, t Target) string {
	for _, m := range refLine.FindAllStringSubmatch(text, -1) {
		name, err := strconv.Unquote(`"` + m[2] + `"`)
		if err != nil {
			name = m[2]
		}
		if m[1] == t.Role && name == t.Name {
			return m[3]
		}
	}
	return ""
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
