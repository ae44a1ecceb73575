package server

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/samber/lo"

	"github.com/retrace-dev/retrace/llmerr"
)

// handlerFunc is a typed tool handler. It adds sections to the response
// and returns it; a returned error is classified through llmerr and
// rendered as a recovery plan.
type handlerFunc[In any] func(ctx context.Context, c *call, in In) (*response, error)

// call carries what every handler needs: the server, the caller's session
// and the tool name.
type call struct {
	srv  *Server
	sess *session
	tool string
	// roleName is the call's role argument, if it has one.
	roleName string
	// role is the role the call acted in, once lockRole chose it.
	role *role
	// snapshot is set when the call asked for a snapshot with its result.
	snapshot bool
}

// roleArg is the role argument of the browser tools, embedded in their
// argument structs: the user to act as.
type roleArg struct {
	Role string `json:"role,omitempty" jsonschema:"Role to act as (default: current)"`
}

func (a roleArg) actingRole() string { return a.Role }

// asRoleArg is roleArg for browser_find, whose role argument is the ARIA
// role of what it looks for.
type asRoleArg struct {
	AsRole string `json:"asRole,omitempty" jsonschema:"Role to act as (default: current)"`
}

func (a asRoleArg) actingRole() string { return a.AsRole }

// snapshotArg is the argument of the tools that can return the page with
// their result, saving a round trip.
type snapshotArg struct {
	Snapshot bool `json:"snapshot,omitempty" jsonschema:"Also return a snapshot"`
}

func (a snapshotArg) wantsSnapshot() bool { return a.Snapshot }

// callOptions reads the arguments every tool may share from its input:
// the embedded argument structs above.
func callOptions(in any) (role string, snapshot bool) {
	if r, ok := in.(interface{ actingRole() string }); ok {
		role = r.actingRole()
	}
	if s, ok := in.(interface{ wantsSnapshot() bool }); ok {
		snapshot = s.wantsSnapshot()
	}
	return role, snapshot
}

// hints are a tool's annotations for clients, one word each.
type hints uint8

const (
	// readOnly tools only look at the page.
	readOnly hints = 1 << iota
	// destructive tools may change what the page or a file holds.
	destructive
	// idempotent tools do nothing more when called again with the same arguments.
	idempotent
	// openWorld tools reach the web beyond the server.
	openWorld
	// harmless tools change state, but nothing a user would miss.
	harmless hints = 0
)

// def defines a tool: its name, title, annotations and description.
func def(name, title string, h hints, description string) *mcp.Tool {
	a := &mcp.ToolAnnotations{Title: title, ReadOnlyHint: h&readOnly != 0,
		IdempotentHint: h&idempotent != 0, OpenWorldHint: ptr(h&openWorld != 0)}
	if h&readOnly == 0 {
		a.DestructiveHint = ptr(h&destructive != 0)
	}
	return &mcp.Tool{Name: name, Description: description, Annotations: a}
}

// withOutput declares what t's successful results carry as
// structuredContent: an object with these properties, any of them
// optional. Every successful result of t then has structuredContent.
func withOutput(t *mcp.Tool, props ...string) *mcp.Tool {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	for _, p := range props {
		s.Properties[p] = &jsonschema.Schema{}
	}
	t.OutputSchema = s
	return t
}

// addTool registers a tool whose input schema is inferred from In. Unlike
// mcp.AddTool it turns argument problems into INVALID_PARAMS plans that list
// the expected arguments, recovers panics as INTERNAL_ERROR, and puts the
// structured error on every error result.
func addTool[In any](s *Server, t *mcp.Tool, h handlerFunc[In]) {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", t.Name, err))
	}
	dropNullTypes(schema)
	resolved, err := schema.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: resolve schema: %v", t.Name, err))
	}
	t.InputSchema = schema
	s.mcp.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, _ error) {
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("tool panicked", "tool", t.Name, "panic", p, "stack", string(debug.Stack()))
				res = s.errorResult(&llmerr.Error{
					Code:    llmerr.InternalError,
					Tool:    t.Name,
					Message: fmt.Sprintf("%s failed with an internal error; the server is still running.", t.Name),
					Cause:   fmt.Sprint("a bug in retrace: ", p),
					Actions: []llmerr.Action{llmerr.Call("browser_snapshot", "check the page state, then retry the call once")},
					Details: map[string]any{"panic": fmt.Sprint(p)},
				})
			}
		}()
		in, perr := decodeArgs[In](req.Params.Arguments, resolved)
		if perr != nil {
			return s.errorResult(invalidParams(t, schema, perr)), nil
		}
		role, snap := callOptions(in)
		c := &call{srv: s, sess: s.session(req.Session), tool: t.Name, roleName: role, snapshot: snap}
		stop := progressWhile(ctx, req, t.Name)
		out, herr := h(ctx, c, in)
		stop()
		if herr != nil {
			return s.errorResult(llmerr.Classify(herr, llmerr.Situation{Tool: t.Name})), nil
		}
		if c.role != nil {
			// What did not stop the call comes back beside its result.
			out.warnings = c.role.warnings()
			out.notes = append(c.role.takeNotes(), out.notes...)
			if !ownsNetworkLines[t.Name] {
				out.network = c.role.networkLines()
			}
		}
		return out.result(s.cfg.MaxResultBytes), nil
	})
}

func decodeArgs[In any](raw json.RawMessage, resolved *jsonschema.Resolved) (In, error) {
	var in In
	m := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &m); err != nil {
			return in, fmt.Errorf("arguments are not a JSON object: %v", err)
		}
	}
	aliasTarget(resolved.Schema(), m)
	// An argument given as null is an argument not given: the schemas
	// declare no null types (dropNullTypes).
	for k, v := range m {
		if _, known := resolved.Schema().Properties[k]; known && v == nil {
			delete(m, k)
		}
	}
	if err := resolved.ApplyDefaults(&m); err != nil {
		return in, err
	}
	if err := resolved.Validate(&m); err != nil {
		return in, err
	}
	data, _ := json.Marshal(m)
	if err := json.Unmarshal(data, &in); err != nil {
		return in, err
	}
	return in, nil
}

// invalidParams explains what was wrong with the arguments and which ones
// the tool takes.
func invalidParams(t *mcp.Tool, schema *jsonschema.Schema, err error) *llmerr.Error {
	expected := describeArgs(schema)
	return &llmerr.Error{
		Code:    llmerr.InvalidParams,
		Tool:    t.Name,
		Message: fmt.Sprintf("The arguments of %s are not valid: %s.", t.Name, cleanValidation(err)),
		Cause:   "expected arguments: " + expected,
		Actions: []llmerr.Action{{Tool: t.Name, Why: "call again with the arguments listed above", Args: exampleArgs(schema)}},
		Details: map[string]any{"expected": expected, "validation": err.Error()},
	}
}

func cleanValidation(err error) string {
	s := err.Error()
	s = strings.ReplaceAll(s, "validating root: ", "")
	s = strings.ReplaceAll(s, "validating /properties/", "argument ")
	return strings.TrimSuffix(strings.TrimSpace(s), ".")
}

// describeArgs renders a schema's properties as name (type, required): description.
func describeArgs(schema *jsonschema.Schema) string {
	names := sortedProps(schema)
	if len(names) == 0 {
		return "none"
	}
	var parts []string
	for _, n := range names {
		p := schema.Properties[n]
		kind := p.Type
		if kind == "" && len(p.Types) > 0 {
			kind = strings.Join(p.Types, "|")
		}
		opt := "optional"
		if slices.Contains(schema.Required, n) {
			opt = "required"
		}
		parts = append(parts, fmt.Sprintf("%s (%s, %s)", n, kind, opt))
	}
	return strings.Join(parts, ", ")
}

// exampleArgs lists the required arguments with a placeholder value, so the
// rendered step reads as a call with the right shape.
func exampleArgs(schema *jsonschema.Schema) []llmerr.Arg {
	var args []llmerr.Arg
	for _, n := range schema.Required {
		p := schema.Properties[n]
		var v any = "…"
		switch p.Type {
		case "boolean":
			v = true
		case "integer", "number":
			v = 0
		}
		args = append(args, llmerr.A(n, v))
	}
	return args
}

// sortedProps lists a schema's properties, required first, each group
// alphabetical, so the list reads naturally.
func sortedProps(schema *jsonschema.Schema) []string {
	required, optional := lo.FilterReject(slices.Sorted(maps.Keys(schema.Properties)),
		func(n string, _ int) bool { return slices.Contains(schema.Required, n) })
	return append(required, optional...)
}

// errorResult renders e for the model and attaches its structured form.
func (s *Server) errorResult(e *llmerr.Error) *mcp.CallToolResult {
	if e.Code != llmerr.InvalidParams && e.Code != llmerr.UnknownRef {
		s.log.Info("tool error", "code", e.Code, "tool", e.Tool, "message", e.Message)
	}
	return &mcp.CallToolResult{
		IsError:           true,
		Content:           []mcp.Content{&mcp.TextContent{Text: capText(e.Text(s.cfg.ErrorStyle), s.cfg.MaxResultBytes)}},
		StructuredContent: e.Structured(),
	}
}

// aliasTarget accepts playwright-mcp's names for refs (target,
// startTarget, endTarget) wherever a tool takes ref (startRef, endRef), so
// that prompts and clients written for it work: in an object whose schema
// has the ref, the alias (and no ref) becomes the ref, and what
// playwright-mcp sends beside it for its messages is dropped when the
// schema does not take it.
func aliasTarget(s *jsonschema.Schema, v any) {
	if s == nil {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for _, p := range [][2]string{{"target", "ref"}, {"startTarget", "startRef"}, {"endTarget", "endRef"}} {
			alias, ref := p[0], p[1]
			if _, takesRef := s.Properties[ref]; !takesRef {
				continue
			}
			if t, ok := x[alias]; ok {
				if _, given := x[ref]; !given {
					x[ref] = t
					delete(x, alias)
					// What playwright-mcp sends beside its targets, for its
					// messages: a form field's name and type, a drag's
					// elements.
					for _, k := range []string{"name", "type", "startElement", "endElement"} {
						if _, known := s.Properties[k]; !known {
							delete(x, k)
						}
					}
				}
			}
		}
		for k, pv := range x {
			aliasTarget(s.Properties[k], pv)
		}
	case []any:
		for _, e := range x {
			aliasTarget(s.Items, e)
		}
	}
}

// progressEvery is how often a call still running tells a client that
// asked for progress (a progress token) that it is.
const progressEvery = 2 * time.Second

// progressWhile sends, when the request carries a progress token, a
// progress notification every progressEvery until the returned stop is
// called: a client whose own time-out counts from the last message it got
// (many reset it on progress) waits for a long navigation's plan instead
// of giving up first.
func progressWhile(ctx context.Context, req *mcp.CallToolRequest, tool string) (stop func()) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		start := time.Now()
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for n := 1; ; n++ {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n),
					Message: fmt.Sprintf("%s still running (%s)", tool, time.Since(start).Round(time.Second))})
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// dropNullTypes turns the ["null", T] types that schema inference gives
// slices and pointers into plain T, through the whole schema: strict
// schema dialects (Gemini-style function declarations, the MCP
// Inspector's --strict) refuse type unions. decodeArgs drops null
// arguments before validating, so a client that sends one still works.
func dropNullTypes(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && slices.Contains(s.Types, "null") {
		other := s.Types[0]
		if other == "null" {
			other = s.Types[1]
		}
		s.Type, s.Types = other, nil
	}
	for _, p := range s.Properties {
		dropNullTypes(p)
	}
	dropNullTypes(s.Items)
	dropNullTypes(s.AdditionalProperties)
}
