package server

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/samber/lo"

	"github.com/retrace-dev/retrace/failurelog"
	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/snapshot"
)

// browser_compare_roles opens one URL as several roles at once and merges
// what each sees there by ARIA role and name, differences first: a
// permission view. The comparison (RoleComparison) is built apart from its
// rendering, so a command can run it over a list of URLs without an agent
// (RoleComparer).

type compareArgs struct {
	URL   string   `json:"url" jsonschema:"URL to open"`
	Roles []string `json:"roles,omitempty" jsonschema:"Default: all but default"`
	Text  string   `json:"text,omitempty" jsonschema:"Only names containing it"`
	Role  string   `json:"role,omitempty" jsonschema:"Only this ARIA role"`
}

func (s *Server) addCompareTools() {
	addTool(s, def("browser_compare_roles", "Compare roles", destructive|openWorld,
		"Open a URL as each role at once: where each ended (reached, forbidden, signed out), what controls differ."),
		s.compareRolesTool)
}

// Outcome is where a role's load of the compared URL ended.
type Outcome string

const (
	// OutcomeReached: the page loaded where it was asked for, HTTP < 400.
	OutcomeReached Outcome = "reached"
	// OutcomeRedirected: the page loaded at another URL, HTTP < 400.
	OutcomeRedirected Outcome = "redirected"
	// OutcomeSignedOut: it landed on the role's loginCheck.signedOutUrl.
	OutcomeSignedOut Outcome = "signed out"
	// OutcomeForbidden: the page answered 401 or 403.
	OutcomeForbidden Outcome = "forbidden"
	// OutcomeHTTPError: the page answered another status of 400 or more.
	OutcomeHTTPError Outcome = "http error"
	// OutcomeFailed: it did not load; RoleView.Error says why.
	OutcomeFailed Outcome = "failed"
)

// RoleView is what one role met at the compared URL.
type RoleView struct {
	Role    string  `json:"role"`
	Outcome Outcome `json:"outcome"`
	// Status is the HTTP status of the main document, when known.
	Status int `json:"status,omitempty"`
	// URL is where the role's tab ended; Title is its title.
	URL   string `json:"url,omitempty"`
	Title string `json:"title,omitempty"`
	// Error is why the load failed (OutcomeFailed), or the sign-out error
	// of a role that requires auth (OutcomeSignedOut), or why the page
	// could not be read.
	Error *llmerr.Error `json:"-"`
	// Warnings are what the role's results would warn about (signed out,
	// a frame not read).
	Warnings []string `json:"warnings,omitempty"`
	// Cut is set when the page was too large to read in time.
	Cut bool `json:"cut,omitempty"`

	elements []viewElement
	read     bool
}

// Compared reports whether the role's page takes part in the comparison
// of elements: it let the role in (reached, or redirected to a page that
// did) and was read.
func (v *RoleView) Compared() bool {
	return v.read && (v.Outcome == OutcomeReached || v.Outcome == OutcomeRedirected)
}

// ElementState is how one role has an element: its ref (none for headings
// and landmarks) and its states, as the snapshot writes them.
type ElementState struct {
	Ref    string   `json:"ref,omitempty"`
	States []string `json:"states,omitempty"`
}

// RoleElement is one element of the compared pages, keyed by ARIA role,
// accessible name and which one of that role and name it is on its page.
type RoleElement struct {
	Role string `json:"role"`
	Name string `json:"name,omitempty"`
	// Nth counts from 1 among the page's elements of the same role and name.
	Nth   int `json:"nth"`
	Level int `json:"level,omitempty"`
	// In holds each compared role that has the element; a compared role
	// not in it does not.
	In map[string]ElementState `json:"in"`
	// Differs is set when not every compared role has it, or their states
	// differ.
	Differs bool `json:"differs"`
}

// RoleComparison is what CompareRoles found.
type RoleComparison struct {
	URL   string     `json:"url"`
	Views []RoleView `json:"roles"`
	// Compared names the roles whose pages were compared (RoleView.Compared).
	Compared []string `json:"compared"`
	// Elements are merged from the compared pages, in document order.
	Elements []RoleElement `json:"elements"`
}

// Differences returns the elements that differ between the compared roles.
func (c *RoleComparison) Differences() []RoleElement {
	return lo.Filter(c.Elements, func(e RoleElement, _ int) bool { return e.Differs })
}

// View returns the view of the named role, or nil.
func (c *RoleComparison) View(role string) *RoleView {
	for i := range c.Views {
		if c.Views[i].Role == role {
			return &c.Views[i]
		}
	}
	return nil
}

// Element returns the first element of that ARIA role and name, or nil.
func (c *RoleComparison) Element(role, name string) *RoleElement {
	for i := range c.Elements {
		if c.Elements[i].Role == role && c.Elements[i].Name == name {
			return &c.Elements[i]
		}
	}
	return nil
}

// RoleComparer compares roles outside an MCP session, in a session of its
// own: what a command that checks a list of URLs needs. Its roles' contexts
// stay open across Compare calls, so each role signs in once.
type RoleComparer struct {
	srv  *Server
	sess *session
}

// NewRoleComparer starts a comparer on s's browsers and roles.
func (s *Server) NewRoleComparer() *RoleComparer {
	return &RoleComparer{srv: s, sess: newSession(s)}
}

// Compare opens url as each of roles (every configured role but default
// when empty) and merges what they see. The error is for a bad URL or
// role name, or when no role could load url; a role that could not is in
// the answer with its error.
func (rc *RoleComparer) Compare(ctx context.Context, url string, roles []string) (*RoleComparison, error) {
	const tool = "browser_compare_roles"
	names, err := rc.srv.compareNames(tool, url, roles)
	if err != nil {
		return nil, err
	}
	target, err := rc.srv.checkURL(tool, url)
	if err != nil {
		return nil, err
	}
	return rc.srv.compareRoles(ctx, rc.sess, tool, target, names)
}

// Close closes the comparer's browser contexts.
func (rc *RoleComparer) Close() { rc.sess.close() }

func (s *Server) compareRolesTool(ctx context.Context, c *call, in compareArgs) (*response, error) {
	names, err := s.compareNames(c.tool, in.URL, in.Roles)
	if err != nil {
		return nil, err
	}
	target, err := s.checkURL(c.tool, in.URL)
	if err != nil {
		return nil, err
	}
	cmp, err := s.compareRoles(ctx, c.sess, c.tool, target, names)
	if err != nil {
		return nil, err
	}
	room := s.outputRoom()
	if b := s.cfg.SnapshotBudget; b > 0 {
		room = min(room, b)
	}
	return textResponse(cmp.Render(CompareView{Text: in.Text, Role: in.Role, Room: room})), nil
}

// compareNames checks the roles asked for, without repeats; none asked
// for means every configured role but default.
func (s *Server) compareNames(tool, url string, asked []string) ([]string, error) {
	if len(asked) == 0 {
		names := slices.DeleteFunc(s.cfg.Roles.Names(), func(n string) bool { return n == defaultRole })
		if len(names) == 0 {
			return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: tool,
				Message: "There are no roles to compare: only the default role exists.",
				Cause:   "no role is configured (--role name=authfile, or roles in --config)",
				Actions: []llmerr.Action{llmerr.Call("list_current_roles", "see the roles there are")}}
		}
		return names, nil
	}
	names := lo.Uniq(asked)
	for _, n := range names {
		if _, ok := s.cfg.Roles.Get(n); ok {
			continue
		}
		e := unknownRole(s.cfg.Roles, tool, n)
		// The step is the same comparison with the role spelled right.
		if near := closest(n, s.cfg.Roles.Names()); near != "" {
			fixed := lo.Map(names, func(m string, _ int) string { return lo.Ternary(m == n, near, m) })
			e.Actions = []llmerr.Action{llmerr.Call(tool, "with the closest existing role", llmerr.A("url", url), llmerr.A("roles", lo.Uniq(fixed)))}
		}
		e.Actions = append(e.Actions, llmerr.Call("list_current_roles", "see the roles there are and their sign-in state"))
		e.Actions = lo.UniqBy(e.Actions, func(a llmerr.Action) string { return a.Tool })
		return nil, e
	}
	return names, nil
}

// compareRoles loads target as each role at once, each under its own lock
// in its own context, reads each page and merges them. It fails only when
// every role failed to load.
func (s *Server) compareRoles(ctx context.Context, sess *session, tool, target string, names []string) (*RoleComparison, error) {
	views := make([]RoleView, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			views[i] = s.viewAs(ctx, sess, name, target)
		}()
	}
	wg.Wait()
	if !slices.ContainsFunc(views, func(v RoleView) bool { return v.Outcome != OutcomeFailed }) {
		return nil, allFailed(tool, target, names, views)
	}
	cmp := &RoleComparison{URL: target, Views: views}
	for i := range views {
		if views[i].Compared() {
			cmp.Compared = append(cmp.Compared, views[i].Role)
		}
	}
	cmp.Elements = mergeViews(views, cmp.Compared)
	return cmp, nil
}

// allFailed is the error of a comparison where no role loaded the page:
// the first role's error, with what every role met.
func allFailed(tool, target string, names []string, views []RoleView) *llmerr.Error {
	first := views[0].Error
	causes := lo.Map(views, func(v RoleView, _ int) string {
		return fmt.Sprintf("%s: %s %s", v.Role, v.Error.Code, v.Error.Message)
	})
	e := &llmerr.Error{Code: first.Code, Tool: tool, URL: target,
		Message: fmt.Sprintf("No role could load %s.", target),
		Cause:   first.Cause,
		Details: map[string]any{"roles": causes}}
	e.OtherCauses = causes
	// The first role's own steps (they name it), then the comparison again.
	e.Actions = append(slices.Clone(first.Actions[:min(2, len(first.Actions))]),
		llmerr.Call(tool, "compare again once the page loads", llmerr.A("url", target), llmerr.A("roles", names)))
	return e
}

// viewAs loads target in the role's current tab through the action
// pipeline, as browser_navigate does (so sign-out detection, origin
// checks and crash handling hold), then reads the page under the role's
// lock. It never fails: what went wrong is in the view.
func (s *Server) viewAs(ctx context.Context, sess *session, name, target string) RoleView {
	// The load is browser_navigate in that role: its plans name that call.
	sub := &call{srv: s, sess: sess, tool: "browser_navigate", roleName: name}
	v := RoleView{Role: name}
	res, err := s.run(ctx, sub, sub.navigateOp(target))
	var check func(string) bool
	if rc, _ := s.cfg.Roles.Get(name); rc != nil && rc.LoginCheck != nil {
		check = rc.LoginCheck.SignedOut
	} else {
		check = func(string) bool { return false }
	}
	if err != nil {
		e := llmerr.Classify(err, llmerr.Situation{Tool: sub.tool, URL: target})
		if e.Code != llmerr.AuthenticationFailed || e.URL == "" || !check(e.URL) {
			v.Outcome, v.Error = OutcomeFailed, e
			return v
		}
		// A role that must be signed in landed on its sign-in page: that
		// is where it ended, with the error's plan to sign in again.
		v.Outcome, v.URL, v.Error = OutcomeSignedOut, e.URL, e
	} else if p := res.page; p != nil {
		v.Status, v.URL, v.Title = p.status, p.to, p.title
		v.Outcome = outcomeOf(check, target, p.to, p.status)
	}
	r, tab, unlock, err := sub.lockTab()
	if err != nil {
		v.Error = llmerr.Classify(err, llmerr.Situation{Tool: sub.tool, URL: target})
		return v
	}
	defer unlock()
	snap, err := r.capture(tab.Page)
	// The outcome already says a role is signed out.
	ws := lo.Reject(r.warnings(), func(e failurelog.Entry, _ int) bool {
		return v.Outcome == OutcomeSignedOut && e.Kind == failurelog.AuthCheck
	})
	v.Warnings = append(lo.Map(ws, func(e failurelog.Entry, _ int) string { return e.Warning() }), r.takeNotes()...)
	if err != nil {
		v.Error = llmerr.Classify(err, llmerr.Situation{Tool: "browser_snapshot", URL: v.URL})
		return v
	}
	if v.URL == "" {
		v.URL, v.Title = snap.URL, snap.Title
	}
	v.elements, v.read, v.Cut = elementsOf(snap), true, snap.Cut
	return v
}

// outcomeOf names where a load of target that ended at landed with status
// ended, signedOut being the role's test for its sign-in page.
func outcomeOf(signedOut func(string) bool, target, landed string, status int) Outcome {
	switch {
	case signedOut(landed):
		return OutcomeSignedOut
	case status == 401 || status == 403:
		return OutcomeForbidden
	case status >= 400:
		return OutcomeHTTPError
	case !sameURL(landed, target):
		return OutcomeRedirected
	}
	return OutcomeReached
}

// viewElement is one element of one role's page.
type viewElement struct {
	key   elementKey
	level int
	state ElementState
}

type elementKey struct {
	role, name string
	nth        int
}

// landmarks are the roles that place elements on a page; with headings
// they orient a reader of the comparison.
var landmarks = map[string]bool{"banner": true, "navigation": true, "main": true, "contentinfo": true,
	"complementary": true, "region": true, "search": true, "form": true, "dialog": true, "alertdialog": true}

// elementsOf lists what a comparison compares on a page: every element
// with a ref, headings and landmarks, in document order (frames inline).
func elementsOf(snap *snapshot.Snapshot) []viewElement {
	var out []viewElement
	seen := map[[2]string]int{}
	var walk func(nodes []*snapshot.Node)
	walk = func(nodes []*snapshot.Node) {
		for _, n := range nodes {
			keep := (n.Ref != "" && !(n.Role == "generic" && n.Name == "")) || n.Role == "heading" || landmarks[n.Role]
			if keep {
				k := [2]string{n.Role, n.Name}
				seen[k]++
				out = append(out, viewElement{key: elementKey{n.Role, n.Name, seen[k]}, level: n.Level,
					state: ElementState{Ref: n.Ref, States: statesOf(n)}})
			}
			walk(n.Children)
		}
	}
	walk(snap.Tree)
	return out
}

// statesOf lists a node's states as the snapshot writes them.
func statesOf(n *snapshot.Node) []string {
	var out []string
	tri := func(name string, v any) {
		switch v {
		case true:
			out = append(out, name)
		case "mixed":
			out = append(out, name+"=mixed")
		}
	}
	flag := func(name string, on bool) {
		if on {
			out = append(out, name)
		}
	}
	tri("checked", n.Checked)
	tri("pressed", n.Pressed)
	flag("disabled", n.Disabled)
	if n.Expanded != nil {
		out = append(out, lo.Ternary(*n.Expanded, "expanded", "collapsed"))
	}
	flag("selected", n.Selected)
	flag("required", n.Required)
	flag("invalid", n.Invalid)
	flag("readonly", n.Readonly)
	return out
}

// mergeViews merges the compared roles' elements by key, in document
// order: an element only some roles have goes after the one before it on
// the first page that has it.
func mergeViews(views []RoleView, compared []string) []RoleElement {
	var order []elementKey
	at := map[elementKey]int{}
	merged := map[elementKey]*RoleElement{}
	for _, v := range views {
		if !v.Compared() {
			continue
		}
		prev := -1
		for _, e := range v.elements {
			i, ok := at[e.key]
			if !ok {
				i = prev + 1
				order = slices.Insert(order, i, e.key)
				for j := i; j < len(order); j++ {
					at[order[j]] = j
				}
				merged[e.key] = &RoleElement{Role: e.key.role, Name: e.key.name, Nth: e.key.nth, Level: e.level,
					In: map[string]ElementState{}}
			}
			merged[e.key].In[v.Role] = e.state
			prev = i
		}
	}
	out := make([]RoleElement, 0, len(order))
	for _, k := range order {
		e := merged[k]
		e.Differs = len(e.In) != len(compared) ||
			len(lo.Uniq(lo.MapToSlice(e.In, func(_ string, st ElementState) string { return strings.Join(st.States, " ") }))) > 1
		out = append(out, *e)
	}
	return out
}

// CompareView is how a comparison is shown: narrowed to elements whose
// name contains Text and whose ARIA role is Role, its element lines within
// Room bytes (0: no limit).
type CompareView struct {
	Text string
	Role string
	Room int
}

// Render writes the comparison for a model: each role's outcome, then the
// elements that differ, then those the same for every compared role. Page
// text (titles, names) is fenced.
func (c *RoleComparison) Render(v CompareView) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Opened %s as %d role%s:\n", c.URL, len(c.Views), plural(len(c.Views), "s"))
	for _, rv := range c.Views {
		b.WriteString(rv.line() + "\n")
	}
	els := lo.Filter(c.Elements, func(e RoleElement, _ int) bool { return v.matches(e) })
	narrowed := ""
	if v.Text != "" || v.Role != "" {
		narrowed = fmt.Sprintf(" matching %s (%d of %d elements)", describeNarrowing(v), len(els), len(c.Elements))
	}
	switch len(c.Compared) {
	case 0:
		b.WriteString("No role reached a page it was let into: there are no elements to compare.\n")
		return strings.TrimRight(b.String(), "\n")
	case 1:
		fmt.Fprintf(&b, "Only %s reached the page; its elements%s (its refs, for calls with role=%q):\n", c.Compared[0], narrowed, c.Compared[0])
		lines, over := fitLines(lo.Map(els, func(e RoleElement, _ int) string { return e.line(c.Compared) }), roomOr(v.Room), false)
		b.WriteString(strings.Join(fenceBlock(lines), "\n") + "\n")
		b.WriteString(c.cutNote(v, over))
		return strings.TrimRight(b.String(), "\n")
	}
	diff, same := lo.FilterReject(els, func(e RoleElement, _ int) bool { return e.Differs })
	fmt.Fprintf(&b, "Compared %s%s%s. Refs are each role's own: pass them with that role, as browser_click(ref=..., role=...).\n",
		strings.Join(c.Compared, ", "), c.leftOut(), narrowed)
	room := roomOr(v.Room)
	diffLines, over := fitLines(lo.Map(diff, func(e RoleElement, _ int) string { return e.line(c.Compared) }), room, false)
	for _, l := range diffLines {
		room -= len(l) + 1
	}
	if len(diff) == 0 {
		b.WriteString("No element differs between them.\n")
	} else {
		fmt.Fprintf(&b, "%d element%s differ%s:\n", len(diff), plural(len(diff), "s"), lo.Ternary(len(diff) == 1, "s", ""))
		b.WriteString(strings.Join(fenceBlock(diffLines), "\n") + "\n")
	}
	if len(same) > 0 {
		sameLines, sameOver := fitLines(lo.Map(same, func(e RoleElement, _ int) string { return e.line(c.Compared) }), max(room, 0), false)
		over += sameOver
		fmt.Fprintf(&b, "%d element%s the same for %s:\n", len(same), lo.Ternary(len(same) == 1, " is", "s are"), strings.Join(c.Compared, ", "))
		if len(sameLines) > 0 {
			b.WriteString(strings.Join(fenceBlock(sameLines), "\n") + "\n")
		}
	}
	b.WriteString(c.cutNote(v, over))
	return strings.TrimRight(b.String(), "\n")
}

// leftOut says which roles the comparison leaves out, and where the
// compared ones ended when not all on one page.
func (c *RoleComparison) leftOut() string {
	var notes []string
	out := lo.FilterMap(c.Views, func(v RoleView, _ int) (string, bool) { return v.Role, !v.Compared() })
	if len(out) > 0 {
		notes = append(notes, "left out: "+strings.Join(out, ", ")+", see above")
	}
	landed := lo.Uniq(lo.FilterMap(c.Views, func(v RoleView, _ int) (string, bool) { return v.URL, v.Compared() }))
	if len(landed) > 1 {
		notes = append(notes, "they ended on different pages: "+strings.Join(landed, ", "))
	}
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, "; ") + ")"
}

func roomOr(room int) int {
	if room <= 0 {
		return int(^uint(0) >> 1)
	}
	return room
}

// cutNote says how many element lines the room left out, and how to see
// them.
func (c *RoleComparison) cutNote(v CompareView, over int) string {
	if over == 0 {
		return ""
	}
	return fmt.Sprintf("[%d more element%s not shown: the budget is reached. Narrow it with browser_compare_roles(url=%q, role=\"button\") or text=\"...\", or read one role's page with browser_snapshot(role=...).]\n",
		over, plural(over, "s"), c.URL)
}

func (v CompareView) matches(e RoleElement) bool {
	if v.Role != "" && !strings.EqualFold(e.Role, v.Role) {
		return false
	}
	return v.Text == "" || strings.Contains(strings.ToLower(e.Name), strings.ToLower(v.Text))
}

func describeNarrowing(v CompareView) string {
	return strings.Join(lo.Map(given("role", v.Role, "text", v.Text),
		func(a llmerr.Arg, _ int) string { return fmt.Sprintf("%s=%q", a.Name, a.Value) }), ", ")
}

// line is the role's outcome on one line: where it ended and why.
func (v *RoleView) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "- %s: %s", v.Role, v.Outcome)
	switch v.Outcome {
	case OutcomeFailed:
		fmt.Fprintf(&b, " — %s: %s", v.Error.Code, llmerr.FirstLine(v.Error.Message))
		if v.Error.Cause != "" {
			fmt.Fprintf(&b, " (%s)", v.Error.Cause)
		}
		if len(v.Error.Actions) > 0 {
			fmt.Fprintf(&b, "; try %s", v.Error.Actions[0].Call())
		}
		return b.String()
	case OutcomeRedirected, OutcomeSignedOut:
		b.WriteString(" to " + v.URL)
	}
	if v.Status > 0 {
		fmt.Fprintf(&b, " (HTTP %d)", v.Status)
	}
	if v.Title != "" {
		b.WriteString(", title " + pageTitle(v.Title))
	}
	if v.Outcome == OutcomeSignedOut {
		if v.Error != nil && len(v.Error.Actions) > 0 {
			fmt.Fprintf(&b, "; to sign in again: %s", v.Error.Actions[0].Call())
		} else {
			fmt.Fprintf(&b, "; sign in through the page, then browser_save_auth(role=%q)", v.Role)
		}
	} else if v.Error != nil {
		fmt.Fprintf(&b, "; its page could not be read: %s %s", v.Error.Code, llmerr.FirstLine(v.Error.Message))
	}
	if v.Cut {
		b.WriteString("; the page was too large to read in time, so some of its elements are missing")
	}
	for _, w := range v.Warnings {
		b.WriteString("\n  Warning: " + w)
	}
	return b.String()
}

// line writes the element as one list line: its snapshot head, then each
// compared role's ref and, where they differ, its states and the roles
// that do not have it.
func (e RoleElement) line(compared []string) string {
	var b strings.Builder
	b.WriteString("- " + e.Role)
	if e.Name != "" {
		b.WriteString(" " + strconv.Quote(snapshot.Clip(e.Name, 200)))
	}
	if e.Nth > 1 {
		fmt.Fprintf(&b, " #%d", e.Nth)
	}
	if e.Level > 0 {
		fmt.Fprintf(&b, " [level=%d]", e.Level)
	}
	states := func(st ElementState) string {
		return strings.Join(lo.Map(st.States, func(s string, _ int) string { return "[" + s + "]" }), " ")
	}
	has := lo.Filter(compared, func(r string, _ int) bool { _, ok := e.In[r]; return ok })
	if !e.Differs {
		if s := states(e.In[has[0]]); s != "" {
			b.WriteString(" " + s)
		}
		refs := lo.FilterMap(has, func(r string, _ int) (string, bool) { return r + " " + e.In[r].Ref, e.In[r].Ref != "" })
		if len(refs) > 0 {
			b.WriteString(" — " + strings.Join(refs, ", "))
		}
		return b.String()
	}
	parts := lo.Map(has, func(r string, _ int) string {
		st := e.In[r]
		return strings.Join(lo.Compact([]string{r, st.Ref, states(st)}), " ")
	})
	if absent := lo.Without(compared, has...); len(absent) > 0 {
		parts = append(parts, "absent for "+strings.Join(absent, ", "))
	}
	b.WriteString(" — " + strings.Join(parts, "; "))
	return b.String()
}
