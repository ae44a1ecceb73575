package server

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/playwright-community/playwright-go"
	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/failurelog"
	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/refs"
	"github.com/retrace-dev/retrace/roles"
	"github.com/retrace-dev/retrace/snapshot"
)

// closest returns the one name within a small edit distance of s (a typo),
// or "" when there is none or more than one.
func closest(s string, names []string) string {
	best, hits := "", 0
	limit := max(1, len(s)/3)
	for _, n := range names {
		if d := editDistance(strings.ToLower(s), strings.ToLower(n)); d <= limit {
			best, hits = n, hits+1
		}
	}
	if hits != 1 {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in characters.
func editDistance(sa, sb string) int {
	a, b := []rune(sa), []rune(sb)
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// unknownRole lists the roles there are and, when one is close to name,
// makes selecting it the first step.
func unknownRole(cfg *roles.Config, tool, name string) *llmerr.Error {
	names := cfg.Names()
	// The name is echoed, so a huge one is cut: the answer stays small.
	name = oneLineCut(name, 80)
	e := &llmerr.Error{Code: llmerr.UnknownRole, Tool: tool, Role: name,
		Message: fmt.Sprintf("There is no role %q.", name),
		Cause:   "the roles are " + quoteAll(names),
		Details: map[string]any{"roles": names}}
	if near := closest(name, names); near != "" {
		e.Actions = []llmerr.Action{llmerr.Call("select_role", "the closest existing role", llmerr.A("role", near))}
	} else {
		e.Actions = []llmerr.Action{llmerr.Call("list_current_roles", "see the roles there are and their sign-in state")}
	}
	return e
}

func crashedError(url string) *llmerr.Error {
	if url == "" {
		url = "about:blank"
	}
	return &llmerr.Error{Code: llmerr.PageCrashed, URL: url,
		Message: "The page crashed; its refs are gone.",
		Cause:   "its renderer process died (out of memory, a browser bug, or killed)",
		Actions: []llmerr.Action{
			llmerr.Call("browser_navigate", "load it again in a fresh page", llmerr.A("url", url)),
			llmerr.Call("browser_snapshot", "get new refs"),
		}}
}

// lostError is the error of the first call after the role's browser or
// driver died between calls: its pages and refs went with it.
func lostError(url string, what browser.Process) *llmerr.Error {
	if url == "" {
		url = "about:blank"
	}
	e := &llmerr.Error{Code: llmerr.BrowserClosed, URL: url,
		Message: "The browser closed since the last call; its pages and refs are gone.",
		Cause:   "Chromium crashed or was killed",
		Actions: []llmerr.Action{
			llmerr.Call("browser_navigate", "a fresh browser starts; load the page again", llmerr.A("url", url)),
			llmerr.Call("browser_snapshot", "get new refs"),
		},
		Note:    "Refs issued before are stale for good; use the new ones.",
		Details: map[string]any{"process": string(what)}}
	switch what {
	case browser.ProcessDriver:
		e.Message = "The browser's driver stopped since the last call; the pages and refs of this role are gone."
		e.Cause = "the Playwright driver (a Node.js process) crashed or was killed, and its browser with it"
	case browser.ProcessEndpoint:
		e.Message = "The connection to this session's browser endpoint closed since the last call; the pages and refs of this role are gone."
		e.Cause = "the browser server or remote Chromium stopped, or the network to it dropped"
		e.Actions[0].Why = "the session is placed on a healthy endpoint (or this one, if it is back); load the page again"
	}
	return e
}

// busyPage is the error of a call the page could not answer because its
// main thread does not yield: waiting longer will not help, leaving the
// page will.
func busyPage(tool, url string, err error) *llmerr.Error {
	return &llmerr.Error{Code: llmerr.ActionTimeout, Tool: tool, URL: url, Err: err,
		Message: "The page does not answer: its main thread is busy (a script that never yields).",
		Cause:   "the page's own script keeps its main thread busy, so nothing can run in it",
		Actions: []llmerr.Action{
			llmerr.Call("browser_navigate", "leave the page: its tab is replaced by a fresh one, and the role stays signed in", llmerr.A("url", url)),
			llmerr.Call("browser_snapshot", "get new refs"),
		},
		Note: "Retrying on this page will hang the same way until it is left."}
}

// answers reports whether the tab's page runs a trivial script within a
// second (a page already found stuck gets less): a page stuck in its own
// script does not.
func answers(tab *browser.Tab) bool {
	wait := time.Second
	if tab.Stuck.Load() {
		wait = stuckTitleWait // known stuck: asked again briefly
	}
	_, ok := bounded(wait, func() error { _, err := tab.Page.Evaluate("() => true"); return err })
	tab.Stuck.Store(!ok)
	return ok
}

// resolve finds ref's element in role r for the call. A failure says
// where the element went: a ref another role issued names that role, and a
// stale ref names the element's new ref where the page shows it, with
// again(newRef), the same call on it, as the step.
func (c *call) resolve(r *role, ref string, again func(ref string) llmerr.Action) (*target, error) {
	t, err := r.resolve(ref)
	if err != nil {
		if errors.Is(err, snapshot.ErrPageBusy) {
			url := ""
			if r.tab != nil {
				url = r.tab.Page.URL()
			}
			return nil, busyPage(c.tool, url, err)
		}
		if e, ok := llmerr.As(err); ok && e.Code == llmerr.UnknownRef {
			if err := c.otherRoleRef(e, r.name, again); err != e {
				return nil, err
			}
			return nil, r.namedInstead(e, ref, again)
		}
		var re *resolveError
		if errors.As(err, &re) {
			err = llmerr.Classify(re.err, llmerr.Situation{Tool: c.tool, Ref: ref, Element: re.rec.Element(), URL: re.rec.URL,
				Timeout: c.srv.cfg.ActionTimeout})
		}
		return nil, c.routeChanged(r.withCandidates(err, again))
	}
	t.again = again
	return t, nil
}

// routeChanged gives a stale-ref error whose element went with a view the
// page's own route change replaced, and that the new view does not have,
// the way back: the address the ref was read on, then its refs.
func (c *call) routeChanged(err error) error {
	e, ok := llmerr.As(err)
	if !ok || e.Code != llmerr.StaleRef || e.Details["routeChange"] != true || e.Note != "" || e.Element == nil {
		// Not a route change, or the new view has the element (the plan
		// names it).
		return err
	}
	e.Actions = []llmerr.Action{
		c.loadAgain(e.URL, "open the view the ref was read on again"),
		llmerr.Call("browser_snapshot", "find the "+e.Element.String()+" there and use its new ref"),
	}
	e.Note = "The page moved to another view by itself; the element is not in the view it shows now. Going back in the tab's history with browser_navigate_back also returns there when the route change added a history entry, keeping what the page holds in memory."
	return e
}

// withCandidates adds to a stale-ref error where the element is now: when
// the page has exactly one element with the same role and name, the first
// step is the same call on it; with a few, each is named with its context.
func (r *role) withCandidates(err error, again func(ref string) llmerr.Action) error {
	e, ok := llmerr.As(err)
	if !ok || (e.Code != llmerr.StaleRef && e.Code != llmerr.FrameDetached) || e.Element == nil || e.Element.Name == "" {
		return err
	}
	if r.tab == nil || r.tab.Closed() {
		return err
	}
	snap, cerr := r.capture(r.tab.Page)
	if cerr != nil {
		return err
	}
	same := snap.Same(e.Element.Role, e.Element.Name)
	if len(same) == 0 {
		return err
	}
	if len(same) == 1 {
		e.Cause += fmt.Sprintf("; the page now has one %s, as %s", e.Element, same[0].Ref)
		e.Actions = matchSteps(same, again, func(snapshot.Match) string { return fmt.Sprintf("the %s on the page now", e.Element) })
		e.Note = "Retrying with the old ref will not help; the new ref above is the same element as the page shows it now."
		return e
	}
	e.Cause += fmt.Sprintf("; the page now has %d elements named %s", len(same), e.Element)
	e.Actions = matchSteps(same, again, func(m snapshot.Match) string {
		if m.Context != "" {
			return "if it is the one in: " + m.Context
		}
		return "if it is the one"
	})
	e.Note = "Retrying with the old ref will not help: pick the new ref of the element you meant."
	return e
}

// matchSteps are the steps that make the same call on the elements of ms
// (the first three), each with why(m); with several, a snapshot that shows
// them all in place closes the plan.
func matchSteps(ms []snapshot.Match, again func(ref string) llmerr.Action, why func(snapshot.Match) string) []llmerr.Action {
	var acts []llmerr.Action
	for _, m := range ms[:min(3, len(ms))] {
		a := again(m.Ref)
		a.Why = why(m)
		acts = append(acts, a)
	}
	if len(ms) > 1 {
		acts = append(acts, llmerr.Call("browser_snapshot", "to see them all in place"))
	}
	return acts
}

// namedInstead makes an unknown ref that is an element's name (an agent
// wrote "Pay" for the button's ref) point at the element: with one on the
// page named so, the first step is the same call on its ref; with a few,
// each is named with its context.
func (r *role) namedInstead(e *llmerr.Error, ref string, again func(ref string) llmerr.Action) error {
	if !refs.LooksLikeText(ref) || r.tab == nil || r.tab.Closed() {
		return e
	}
	snap, err := r.capture(r.tab.Page)
	if err != nil {
		return e
	}
	named := snap.Named(ref)
	if len(named) == 0 {
		return e
	}
	if len(named) == 1 {
		e.Cause += fmt.Sprintf("; the page has one element named so: %s", strings.TrimSpace(named[0].Line))
		e.Actions = matchSteps(named, again, func(snapshot.Match) string { return fmt.Sprintf("the element named %q, by its ref", ref) })
		return e
	}
	e.Cause += fmt.Sprintf("; the page has %d elements named so", len(named))
	e.Actions = matchSteps(named, again, func(m snapshot.Match) string {
		why := "if it is the one: " + strings.TrimSpace(m.Line)
		if m.Context != "" {
			why += ", in " + m.Context
		}
		return why
	})
	return e
}

// otherRoleRef says so when an unknown ref was issued in another role of
// the session, and makes the same call in that role the first step.
func (c *call) otherRoleRef(e *llmerr.Error, here string, again func(ref string) llmerr.Action) error {
	c.sess.mu.Lock()
	others := make([]*role, 0, len(c.sess.roles))
	for name, r := range c.sess.roles {
		if name != here {
			others = append(others, r)
		}
	}
	c.sess.mu.Unlock()
	for _, o := range others {
		rec, err := o.reg.Lookup(e.Ref)
		if err != nil {
			continue
		}
		e.Cause = fmt.Sprintf("it was issued in role %s (for its %s), and this call acts as role %s; refs never cross roles", o.name, rec.Element(), here)
		step := again(e.Ref)
		step.Args = append(slices.DeleteFunc(slices.Clone(step.Args), func(a llmerr.Arg) bool { return a.Name == "role" }), llmerr.A("role", o.name))
		step.Why = "act in the role that issued the ref"
		e.Actions = []llmerr.Action{step, llmerr.Call("browser_snapshot", "or get refs for this role's page", llmerr.A("role", here))}
		e.Note = ""
		return e
	}
	return e
}

// diagnose looks at the element after a failed action and says what was in
// the way, from what the page shows now rather than from the driver's
// message: hidden, disabled, or covered by another element.
func (r *role) diagnose(e *llmerr.Error, t *target) {
	notInteractable := func(cause string) {
		e.Code = llmerr.ElementNotInteractable
		e.Message = fmt.Sprintf("Could not act on %s: %s.", describe(t.rec, ""), cause)
		e.Cause = cause
	}
	if v, err := t.el.IsVisible(); err == nil && !v {
		notInteractable("the element is hidden")
		e.Actions = []llmerr.Action{llmerr.Call("browser_snapshot", "find what shows it (a tab, a menu, a toggle) and act on that first")}
		return
	}
	if en, err := t.el.IsEnabled(); err == nil && !en {
		notInteractable("the element is disabled")
		e.Actions = []llmerr.Action{llmerr.Call("browser_snapshot", "see which field or step enables it (a required field, a checkbox), then retry")}
		return
	}
	if cov, err := r.eng.Cover(t.rec); err == nil && cov != nil {
		notInteractable("another element covers it")
		r.explainCover(e, t, noticeWait)
	}
}

// dismissWords are the names of the controls that close an overlay.
var dismissWords = regexp.MustCompile(`(?i)\b(close|dismiss|accept|agree|got it|ok|okay|no thanks|reject|decline|continue|skip)\b|^[×✕xX]$`)

// explainCover names what covers the element and the way out of it: the
// overlay's close (or accept) control as step 1, the original call as step 2.
// A notice is given up to wait to go by itself.
func (r *role) explainCover(e *llmerr.Error, t *target, wait time.Duration) {
	// A snapshot first, so the overlay's controls have refs.
	page := r.tab.Page
	if p := r.eng.PageOf(t.rec); p != nil {
		page = p
	}
	if _, err := r.capture(page); err != nil {
		return
	}
	cov, err := r.eng.Cover(t.rec)
	if err != nil || cov == nil {
		return
	}
	what := "<" + cov.Tag
	if cov.ID != "" {
		what += " id=\"" + cov.ID + "\""
	}
	what += ">"
	switch {
	case cov.Role != "" && cov.Role != "generic" && cov.Name != "":
		what += fmt.Sprintf(" (%s %q)", cov.Role, cov.Name)
	case cov.Role != "" && cov.Role != "generic":
		what += " (" + cov.Role + ")"
	}
	e.Cause = "another element covers it: " + what
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details["coveredBy"] = what
	retry := t.again(t.rec.Ref)
	retry.Why = "then retry the original action"
	for _, k := range cov.Refs {
		if dismissWords.MatchString(k.Name) && (k.Role == "button" || k.Role == "link") {
			e.Actions = []llmerr.Action{
				llmerr.Call("browser_click", fmt.Sprintf("close the covering element with its %s %q", k.Role, k.Name), llmerr.A("ref", k.Ref)),
				retry,
			}
			return
		}
	}
	if cov.Live {
		r.explainNotice(e, t, cov, what, retry, wait)
		return
	}
	e.Actions = []llmerr.Action{llmerr.Call("browser_snapshot", "find how to close "+what), retry}
}

// capture snapshots page for the role and applies the FailureLog's rule at
// its end: a failure to read the main document is an error with a plan;
// what failed in child frames stays in the log as warnings. Call with the
// role's lock held.
func (r *role) capture(page playwright.Page) (*snapshot.Snapshot, error) {
	return r.decide(page, r.eng.Capture)
}

// baseline is capture for a snapshot the agent reads whole: the page's
// later change reports are told against it (changes.go).
func (r *role) baseline(page playwright.Page) (*snapshot.Snapshot, error) {
	return r.decide(page, r.eng.CaptureBaseline)
}

func (r *role) decide(page playwright.Page, capture func(playwright.Page, *refs.Registry) (*snapshot.Snapshot, error)) (*snapshot.Snapshot, error) {
	snap, err := capture(page, r.reg)
	if fatal := failurelog.Decide(r.log.Entries()).Fatal; fatal != nil {
		// Said once, as this call's error; the next snapshot observes anew.
		r.log.Clear(func(e failurelog.Entry) bool { return e.MainFrame })
		return nil, mainFrameError(*fatal, page.URL(), err)
	}
	return snap, err
}

// mainFrameError is the error of a page whose main document could not be
// read, from what the FailureLog recorded about it.
func mainFrameError(en failurelog.Entry, url string, err error) *llmerr.Error {
	reload := llmerr.Call("browser_reload", "load the page again: a fresh document gets a fresh snapshot script")
	switch {
	case en.Kind == failurelog.FrameTimeout && en.Detail == "":
		// The page did not answer at all: its main thread is busy.
		return &llmerr.Error{Code: llmerr.ActionTimeout, URL: url, Err: err,
			Message: "The page did not answer the snapshot in time.",
			Cause:   "its main thread is busy (a script that does not yield) or the page is enormous",
			Actions: []llmerr.Action{
				llmerr.Call("browser_find", "search for what you need instead of reading everything", llmerr.A("text", "...")),
				llmerr.Call("browser_navigate", "reload the page if it stays stuck", llmerr.A("url", url)),
			}}
	case en.Kind == failurelog.FrameTimeout:
		return &llmerr.Error{Code: llmerr.PageUnreadable, URL: url, Err: err,
			Message: "The page could not be read: " + en.Detail + ".",
			Cause:   "the page is too large, or too busy, to walk within the snapshot's time budget",
			Actions: []llmerr.Action{
				llmerr.Call("browser_find", "search for what you need instead of reading everything", llmerr.A("text", "...")),
				reload,
			},
			Details: map[string]any{"kind": en.Kind, "reason": en.Reason}}
	case en.Kind == failurelog.FrameInjection:
		return &llmerr.Error{Code: llmerr.PageUnreadable, URL: url, Err: err,
			Message: "The page could not be read: the snapshot script could not run in its document.",
			Cause:   "the page's own scripts replaced built-ins the snapshot script needs (" + strings.TrimPrefix(en.Detail, "the snapshot script could not run in the frame: ") + ")",
			Actions: []llmerr.Action{
				reload,
				llmerr.Call("browser_take_screenshot", "if it fails again, see the page as a picture"),
			},
			Note:    "Reading the same document again will fail the same way: load it again first.",
			Details: map[string]any{"kind": en.Kind, "reason": en.Reason}}
	case en.Reason == failurelog.ReasonCrashed:
		return crashedError(url)
	}
	if err == nil {
		err = fmt.Errorf("the main document could not be read: %s", en.Detail)
	}
	return llmerr.Classify(err, llmerr.Situation{URL: url})
}

// noticeWait bounds how long a click waits for a notice over its element
// to go by itself (tool_input.go), and the diagnosis of a failed action
// likewise.
const noticeWait = 3 * time.Second

// explainNotice is explainCover for a notice (a toast, a snackbar: a live
// region) with no close control: it goes by itself, so the diagnosis
// waits for it, up to wait. Gone, the plan is the action again; still
// there, a wait for its text to go, then the action.
func (r *role) explainNotice(e *llmerr.Error, t *target, cov *snapshot.Cover, what string, retry llmerr.Action, limit time.Duration) {
	if cov.Text != "" {
		what += fmt.Sprintf(" saying %q", cov.Text)
	}
	start := time.Now()
	gone := pollUntil(context.Background(), start.Add(limit), func() bool {
		c, err := r.eng.Cover(t.rec)
		return err == nil && (c == nil || !c.Live || c.Text != cov.Text)
	})
	e.Details["notice"] = cov.Text
	if len(cov.Refs) > 0 {
		// Undo, View cart: they act on what the notice announces.
		e.Note = "The notice's own buttons act on what it announces; they do not close it."
	}
	if gone {
		e.Cause = fmt.Sprintf("a notice covered it: %s; it went by itself %s later", what, time.Since(start).Round(100*time.Millisecond))
		retry.Why = "the notice has gone: do it again"
		e.Actions = []llmerr.Action{retry}
		return
	}
	e.Cause = "a notice covers it: " + what + "; it goes by itself"
	wait := llmerr.Call("browser_wait_for", "wait until the notice has gone", llmerr.A("textGone", cov.Text))
	if cov.Text == "" {
		wait = llmerr.Call("browser_wait_for", "give the notice time to go", llmerr.A("time", 2))
	}
	e.Actions = []llmerr.Action{wait, retry}
}
