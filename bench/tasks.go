package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tiktoken-go/tokenizer"

	"github.com/retrace-dev/retrace/fixture"
	"github.com/retrace-dev/retrace/internal/peer"
)

// The task benchmark plays scripted multi-step tasks on the fixture's task
// pages (testdata/pages/tasks) against each server with one deterministic
// client. The client reads only the text of results: it keeps the last
// result, looks for its next target there by role and accessible name, and
// calls browser_snapshot only when the last result does not show it. A
// task is finished when the page tells the fixture so (/eval/event).

// field is one element a step acts on, with the value it puts there.
type field struct {
	role, name, value string
}

// step is one action of a task: click, type or select on one element, or
// fill several fields in one browser_fill_form call.
type step struct {
	action string
	fields []field
}

func click(role, name string) step { return step{"click", []field{{role, name, ""}}} }
func typeIn(role, name, text string) step {
	return step{"type", []field{{role, name, text}}}
}
func fill(fs ...field) step { return step{"fill", fs} }

// task is a scripted task on one fixture page.
type task struct {
	name  string // also the event the page reports: task-<name>
	title string
	path  string
	steps []step
}

var tasks = []task{
	{"form", "10-field sign-up form, one value rejected by validation", "/tasks/form.html", []step{
		fill(field{"textbox", "First name *", "Ada"}, field{"textbox", "Last name *", "Lovelace"},
			field{"textbox", "Email *", "ada@example.com"}, field{"textbox", "Phone", "+33 1 23 45 67 89"},
			field{"textbox", "Company", "Analytical Engines"}, field{"textbox", "Street *", "12 rue des Lilas"},
			field{"textbox", "City *", "Paris"}, field{"textbox", "Postcode *", "75O11"},
			field{"combobox", "Country *", "France"}, field{"checkbox", "I accept the terms of sale *", "true"}),
		click("button", "Create account"),
		typeIn("textbox", "Postcode *", "75011"),
		click("button", "Create account"),
	}},
	{"list", "catalogue filtered, then an item on page 3", "/tasks/list.html", []step{
		typeIn("searchbox", "Filter products", "lamp"),
		click("button", "Next page"),
		click("button", "Next page"),
		click("button", "Add Linen floor lamp 50 to cart"),
	}},
	{"orders", "master-detail: open an order, change it, save", "/tasks/orders.html", []step{
		click("link", "Order 1042"),
		fill(field{"combobox", "Status", "Shipped"}, field{"textbox", "Tracking number", "LP0042FR"}),
		click("button", "Save changes"),
	}},
	{"wizard", "booking wizard across three documents", "/tasks/wizard-1.html", []step{
		fill(field{"textbox", "From", "Lyon"}, field{"textbox", "To", "Paris"}, field{"textbox", "Date", "24/12/2026"}),
		click("button", "Continue to passenger"),
		fill(field{"textbox", "Full name", "Ada Lovelace"}, field{"textbox", "Email for the tickets", "ada@example.com"}),
		click("button", "Continue to review"),
		click("button", "Confirm booking"),
	}},
	{"dialog", "modal dialog: invite a member, fill, confirm", "/tasks/dialog.html", []step{
		click("button", "Invite member"),
		fill(field{"textbox", "Email address", "linus@example.com"}, field{"combobox", "Role", "Editor"}),
		click("button", "Send invite"),
		click("button", "Confirm invite"),
	}},
}

// taskCall is one call the client made and what its result cost to read.
type taskCall struct {
	tool   string
	tokens int
	failed bool
}

// taskRun is one play of one task on one server.
type taskRun struct {
	done   bool
	calls  []taskCall
	wallMs float64
	err    string // why the client gave up, when it did
}

func (r taskRun) tokens() int {
	n := 0
	for _, c := range r.calls {
		n += c.tokens
	}
	return n
}

func (r taskRun) snapshots() int {
	n := 0
	for _, c := range r.calls {
		if c.tool == "browser_snapshot" {
			n++
		}
	}
	return n
}

// taskClient plays tasks on one server session.
type taskClient struct {
	cs      *mcp.ClientSession
	refArg  string // "ref" or "target"
	enc     tokenizer.Codec
	verbose bool // print every result to stderr
	run     *taskRun
}

// call makes one call and reads its whole text result.
func (c *taskClient) call(tool string, args map[string]any) (string, error) {
	text, _, err := call(c.cs, tool, args)
	n, _ := c.enc.Count(text)
	if c.verbose {
		fmt.Fprintf(os.Stderr, "----- %s %v (%d tokens)\n%s\n", tool, args, n, text)
	}
	c.run.calls = append(c.run.calls, taskCall{tool: tool, tokens: n, failed: err != nil})
	return text, err
}

// play runs one task from a fresh navigation until the fixture reports it
// done or the client gives up.
func (c *taskClient) play(fx *fixture.Server, t task) taskRun {
	c.run = &taskRun{}
	fx.ResetEval()
	start := time.Now()
	last, err := c.call("browser_navigate", map[string]any{"url": fx.URL + t.path})
	if err != nil {
		c.run.err = err.Error()
		return *c.run
	}
	for i, s := range t.steps {
		next, err := c.act(s, last)
		if err != nil {
			c.run.err = fmt.Sprintf("step %d (%s %s %q): %v", i+1, s.action, s.fields[0].role, s.fields[0].name, err)
			return *c.run
		}
		last = next
	}
	want := "task-" + t.name
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if slices.Contains(fx.Events(), want) {
			c.run.done = true
			break
		}
	}
	c.run.wallMs = float64(time.Since(start).Microseconds()) / 1000
	if !c.run.done {
		c.run.err = "the page did not report the task done"
	}
	return *c.run
}

// act finds the step's targets in the last result, or in a new snapshot
// when the last result does not show them all, and acts. A failed action is
// tried once more after a snapshot, with the refs it shows.
func (c *taskClient) act(s step, last string) (string, error) {
	refs, ok := c.find(s, last)
	if !ok {
		snap, err := c.call("browser_snapshot", map[string]any{})
		if err != nil {
			return "", err
		}
		if refs, ok = c.find(s, snap); !ok {
			return "", fmt.Errorf("not in the snapshot:\n%s", firstLines(snap, 60))
		}
	}
	tool, args := c.args(s, refs)
	text, err := c.call(tool, args)
	if err == nil {
		return text, nil
	}
	snap, serr := c.call("browser_snapshot", map[string]any{})
	if serr != nil {
		return "", serr
	}
	if refs, ok = c.find(s, snap); !ok {
		return "", fmt.Errorf("%v; then not in the snapshot", err)
	}
	tool, args = c.args(s, refs)
	return c.call(tool, args)
}

// find returns the ref of every field of the step, all or nothing.
func (c *taskClient) find(s step, text string) ([]string, bool) {
	var refs []string
	for _, f := range s.fields {
		r := findTarget(text, f.role, f.name)
		if r == "" {
			return nil, false
		}
		refs = append(refs, r)
	}
	return refs, true
}

// args builds the call for a step in the server's own argument names:
// playwright-mcp takes the ref as `target`, and a name and a type for each
// field it fills.
func (c *taskClient) args(s step, refs []string) (string, map[string]any) {
	f := s.fields[0]
	describe := f.name
	switch s.action {
	case "click":
		return "browser_click", map[string]any{c.refArg: refs[0], "element": describe}
	case "type":
		return "browser_type", map[string]any{c.refArg: refs[0], "element": describe, "text": f.value}
	case "select":
		return "browser_select_option", map[string]any{c.refArg: refs[0], "element": describe, "values": []string{f.value}}
	}
	var fields []map[string]any
	for i, f := range s.fields {
		m := map[string]any{c.refArg: refs[i], "value": f.value}
		if c.refArg == "target" {
			m["name"], m["type"] = f.name, f.role
		}
		fields = append(fields, m)
	}
	return "browser_fill_form", map[string]any{"fields": fields}
}

// taskFigures is every run of every task on one server.
type taskFigures map[string][]taskRun

// measureTasks plays every task runs times on each server, the servers in
// turn for each task so that drift in the machine's load hits both alike.
func measureTasks(servers []server, fx *fixture.Server, runs int, enc tokenizer.Codec, only string) (map[string]taskFigures, error) {
	clients := make([]*taskClient, len(servers))
	for i := range servers {
		s := &servers[i]
		cs, _, err := connectServer(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		defer cs.Close()
		refArg := peer.ClickRefArg(context.Background(), cs)
		clients[i] = &taskClient{cs: cs, refArg: refArg, enc: enc, verbose: os.Getenv("RETRACE_BENCH_TASK_TRACE") != ""}
	}
	out := map[string]taskFigures{}
	for _, s := range servers {
		out[s.name] = taskFigures{}
	}
	for r := 0; r < runs; r++ {
		for _, t := range tasks {
			if only != "" && t.name != only {
				continue
			}
			for i, s := range servers {
				run := clients[i].play(fx, t)
				fmt.Fprintf(os.Stderr, "bench: task %s, %s, run %d: done=%v calls=%d tokens=%d %.0f ms %s\n",
					t.name, s.name, r+1, run.done, len(run.calls), run.tokens(), run.wallMs, run.err)
				out[s.name][t.name] = append(out[s.name][t.name], run)
			}
		}
	}
	return out, nil
}

// callTrace writes a run's calls as `tool tokens` in order.
func callTrace(r taskRun) string {
	var parts []string
	for _, c := range r.calls {
		s := fmt.Sprintf("%s %d", strings.TrimPrefix(c.tool, "browser_"), c.tokens)
		if c.failed {
			s += " (error)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " · ")
}
