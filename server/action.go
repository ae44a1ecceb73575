package server

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/refs"
	"github.com/retrace-dev/retrace/snapshot"
)

type clickArgs struct {
	Ref      string   `json:"ref" jsonschema:"Ref of the element from browser_snapshot, like e12"`
	Element  string   `json:"element,omitempty" jsonschema:"Element description, for messages"`
	Snapshot bool     `json:"snapshot,omitempty" jsonschema:"Also return a snapshot"`
	Role     roleName `json:"role,omitempty" jsonschema:"Role to act as (default: current)"`
}

type typeArgs struct {
	Ref      string   `json:"ref" jsonschema:"Ref of an editable element from browser_snapshot"`
	Text     string   `json:"text" jsonschema:"Text to put in the field (replaces its content)"`
	Element  string   `json:"element,omitempty" jsonschema:"Element description, for messages"`
	Submit   bool     `json:"submit,omitempty" jsonschema:"Press Enter afterwards"`
	Snapshot bool     `json:"snapshot,omitempty" jsonschema:"Also return a snapshot"`
	Role     roleName `json:"role,omitempty" jsonschema:"Role to act as (default: current)"`
}

// maxTypeText bounds browser_type's text: far above any real form value,
// far below what would stall the page.
const maxTypeText = 100_000

func (s *Server) addActionTools() {
	addTool(s, &mcp.Tool{
		Name:        "browser_click",
		Description: "Click an element (ref). Waits for the page to settle and reports what changed.",
		Annotations: &mcp.ToolAnnotations{Title: "Click", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
	}, s.click)
	addTool(s, &mcp.Tool{
		Name:        "browser_type",
		Description: "Replace the text of an editable element (by ref) and optionally press Enter. Reports what changed.",
		Annotations: &mcp.ToolAnnotations{Title: "Type text", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
	}, s.typeText)
}

// target is a resolved ref ready for an action.
type target struct {
	rec  refs.Record
	el   playwright.ElementHandle
	tab  *browser.Tab
	role *role
	// retry is the call that repeats the action, for plans in its result.
	retry *llmerr.Action
	// opened, when set, is closed once the context opens a page: the
	// action is expected to open a tab, so the report waits for it.
	opened <-chan struct{}
}

// resolve looks ref up in the role's registry and finds its element. Call
// with the role's lock held.
func (r *role) resolve(ref string) (*target, error) {
	rec, err := r.reg.Lookup(ref)
	if err != nil {
		return nil, err
	}
	// The ref may belong to another of the role's tabs than the current
	// one: the action runs there.
	tab := r.tab
	if p := r.eng.PageOf(rec); p != nil {
		tab = r.tabOf(p)
	}
	if tab != nil && tab == r.tab && tab.Crashed() {
		_, err := r.ensureTab() // reports the crash and clears the page
		return nil, err
	}
	if tab == nil || tab.Closed() {
		return nil, &llmerr.Error{Code: llmerr.StaleRef, Ref: ref, Element: rec.Element(), URL: rec.URL,
			Message: fmt.Sprintf("Ref %s belongs to a page that is no longer open.", ref),
			Cause:   "the browser or its page was closed after this ref was issued",
			Actions: []llmerr.Action{
				llmerr.Call("browser_navigate", "open the page again", llmerr.A("url", rec.URL)),
				llmerr.Call("browser_snapshot", "get fresh refs"),
			}}
	}
	el, err := r.eng.Resolve(rec)
	if err != nil {
		return nil, err
	}
	return &target{rec: rec, el: el, tab: tab, role: r}, nil
}

// opensTabJS reports whether clicking the element follows a link or submits
// a form into another window (target=_blank or a named one).
const opensTabJS = `(el) => {
  const other = (t) => !!t && !['_self', '_parent', '_top'].includes(t.toLowerCase());
  const a = el.closest('a[href], area[href]');
  if (a) return other(a.getAttribute('target'));
  const f = el.form;
  if (f && (el.type === 'submit' || el.type === 'image')) return other(el.getAttribute('formtarget') || f.getAttribute('target'));
  return false;
}`

func (s *Server) click(ctx context.Context, c *call, in clickArgs) (*result, error) {
	return s.act(ctx, c, in.Ref, nil, func(t *target, timeout *float64) (string, error) {
		if v, err := t.el.Evaluate(opensTabJS); err == nil && v == true {
			t.opened = t.role.pageOpened()
		}
		if err := t.el.Click(playwright.ElementHandleClickOptions{Timeout: timeout}); err != nil {
			return "", err
		}
		return fmt.Sprintf("Clicked %s.", describe(t.rec, in.Element)), nil
	})
}

func (s *Server) typeText(ctx context.Context, c *call, in typeArgs) (*result, error) {
	if n := utf8.RuneCountInString(in.Text); n > maxTypeText {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool, Ref: in.Ref,
			Message: fmt.Sprintf("The text is %d characters long; browser_type takes at most %d.", n, maxTypeText),
			Cause:   "the text argument is too long",
			Actions: []llmerr.Action{llmerr.Call(c.tool, "with a shorter text", llmerr.A("ref", in.Ref), llmerr.A("text", "…"))},
		}
	}
	retry := []llmerr.Arg{llmerr.A("text", in.Text)}
	if in.Submit {
		retry = append(retry, llmerr.A("submit", true))
	}
	return s.act(ctx, c, in.Ref, retry, func(t *target, timeout *float64) (string, error) {
		if err := t.el.Fill(in.Text, playwright.ElementHandleFillOptions{Timeout: timeout}); err != nil {
			return "", err
		}
		what := fmt.Sprintf("Typed %d characters into %s.", utf8.RuneCountInString(in.Text), describe(t.rec, in.Element))
		if in.Submit {
			if err := t.el.Press("Enter", playwright.ElementHandlePressOptions{Timeout: timeout}); err != nil {
				return "", err
			}
			what += " Pressed Enter."
		}
		return what, nil
	})
}

// act is the shape of every element action: take the role's lock, resolve
// the ref, run do on the element within the action timeout, classify a
// failure, then wait for the page to settle and report what changed.
// retryArgs are the call's arguments besides ref, for a retry on another
// element.
func (s *Server) act(ctx context.Context, c *call, ref string, retryArgs []llmerr.Arg, do func(t *target, timeout *float64) (string, error)) (*result, error) {
	r, unlock, err := c.lockRole()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if c.roleName != "" {
		// A retry in a plan acts in the same role.
		retryArgs = append(retryArgs, llmerr.A("role", c.roleName))
	}
	t, err := r.resolve(ref)
	if err != nil {
		if e, ok := llmerr.As(err); ok && e.Code == llmerr.UnknownRef {
			return nil, c.otherRoleRef(e, r.name, retryArgs)
		}
		return nil, r.withCandidates(err, c.tool, retryArgs)
	}
	t.retry = &llmerr.Action{Tool: c.tool, Args: append([]llmerr.Arg{llmerr.A("ref", ref)}, retryArgs...)}
	before := pageState(t.tab)
	mark := t.tab.Mark()
	timeout := s.cfg.ActionTimeout
	what, err := do(t, playwright.Float(float64(timeout.Milliseconds())))
	if err != nil && t.tab.Closed() && !t.tab.Crashed() && r.bctx != nil && !isBrowserGone(r) {
		// The action closed its own tab (window.close() in a click handler):
		// that is what it did, not a failure.
		what, err = fmt.Sprintf("Acted on %s.", describe(t.rec, "")), nil
	}
	if err != nil {
		e := llmerr.Classify(err, llmerr.Situation{Tool: c.tool, Ref: ref, Element: t.rec.Element(),
			URL: before.url, Timeout: timeout})
		if e.Code == llmerr.ActionTimeout || e.Code == llmerr.ElementNotInteractable {
			r.diagnose(e, t, c.tool, retryArgs)
		}
		return nil, e
	}
	res := s.report(ctx, t, before, mark, what)
	if !t.tab.Closed() {
		if now := pageState(t.tab).url; now != before.url {
			r.log.Frames() // the page left took its missing frames with it
			if err := r.checkSignedOut(now); err != nil {
				return nil, err
			}
		}
	}
	return s.withSnapshot(c, r, res), nil
}

// withSnapshot appends a snapshot of the role's current tab to res when
// the call asked for one (snapshot: true). Call with the role's lock held.
func (s *Server) withSnapshot(c *call, r *role, res *result) *result {
	if !c.snapshot || res == nil || r.tab == nil || r.tab.Closed() {
		return res
	}
	snap, err := r.eng.Capture(r.tab.Page, r.reg)
	if err != nil {
		res.text += "\n(No snapshot: " + firstLine(err.Error()) + ". Call browser_snapshot() to try again.)"
		return res
	}
	res.text = strings.TrimSuffix(res.text, "Next: browser_snapshot() to see the page and get refs.")
	res.text = strings.TrimRight(res.text, "\n") + "\n\n" + snap.Render(snapshot.View{Budget: s.cfg.SnapshotBudget})
	return res
}

// otherRoleRef says so when an unknown ref was issued in another role of
// the session, and makes the same call in that role the first step.
func (c *call) otherRoleRef(e *llmerr.Error, here string, retryArgs []llmerr.Arg) error {
	c.sess.mu.Lock()
	others := make([]*role, 0, len(c.sess.roles))
	for name, r := range c.sess.roles {
		if name != here {
			others = append(others, r)
		}
	}
	c.sess.mu.Unlock()
	for _, o := range others {
		if rec, err := o.reg.Lookup(e.Ref); err == nil {
			e.Cause = fmt.Sprintf("it was issued in role %s (for its %s), and this call acts as role %s; refs never cross roles", o.name, rec.Element(), here)
			args := []llmerr.Arg{llmerr.A("ref", e.Ref)}
			for _, a := range retryArgs {
				if a.Name != "role" {
					args = append(args, a)
				}
			}
			e.Actions = []llmerr.Action{
				{Tool: c.tool, Why: "act in the role that issued the ref", Args: append(args, llmerr.A("role", o.name))},
				llmerr.Call("browser_snapshot", "or get refs for this role's page", llmerr.A("role", here)),
			}
			e.Note = ""
			return e
		}
	}
	return e
}

// withCandidates adds to a stale-ref error where the element is now: when
// the page has exactly one element with the same role and name, the first
// step is the same call on it; with a few, each is named with its context.
func (r *role) withCandidates(err error, tool string, retryArgs []llmerr.Arg) error {
	e, ok := llmerr.As(err)
	if !ok || (e.Code != llmerr.StaleRef && e.Code != llmerr.FrameDetached) || e.Element == nil || e.Element.Name == "" {
		return err
	}
	if r.tab == nil || r.tab.Closed() {
		return err
	}
	snap, cerr := r.eng.Capture(r.tab.Page, r.reg)
	if cerr != nil {
		return err
	}
	same := snap.Same(e.Element.Role, e.Element.Name)
	if len(same) == 0 {
		return err
	}
	retry := func(m snapshot.Match, why string) llmerr.Action {
		return llmerr.Action{Tool: tool, Why: why, Args: append([]llmerr.Arg{llmerr.A("ref", m.Ref)}, retryArgs...)}
	}
	if len(same) == 1 {
		e.Cause += fmt.Sprintf("; the page now has one %s, as %s", e.Element, same[0].Ref)
		e.Actions = []llmerr.Action{retry(same[0], fmt.Sprintf("the %s on the page now", e.Element))}
		e.Note = "Retrying with the old ref will not help; the new ref above is the same element as the page shows it now."
		return e
	}
	e.Cause += fmt.Sprintf("; the page now has %d elements named %s", len(same), e.Element)
	var acts []llmerr.Action
	for _, m := range same[:min(3, len(same))] {
		why := "if it is the one"
		if m.Context != "" {
			why = "if it is the one in: " + m.Context
		}
		acts = append(acts, retry(m, why))
	}
	e.Actions = append(acts, llmerr.Call("browser_snapshot", "to see them all in place"))
	e.Note = "Retrying with the old ref will not help: pick the new ref of the element you meant."
	return e
}

// diagnose looks at the element after a failed action and says what was in
// the way, from what the page shows now rather than from the driver's
// message: hidden, disabled, or covered by another element.
func (r *role) diagnose(e *llmerr.Error, t *target, tool string, retryArgs []llmerr.Arg) {
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
		r.explainCover(e, t.rec, tool, retryArgs)
	}
}

// dismissWords are the names of the controls that close an overlay.
var dismissWords = regexp.MustCompile(`(?i)\b(close|dismiss|accept|agree|got it|ok|okay|no thanks|reject|decline|continue|skip)\b|^[×✕xX]$`)

// explainCover names what covers the element and the way out of it: the
// overlay's close (or accept) control as step 1, the original call as step 2.
func (r *role) explainCover(e *llmerr.Error, rec refs.Record, tool string, retryArgs []llmerr.Arg) {
	// A snapshot first, so the overlay's controls have refs.
	page := r.tab.Page
	if p := r.eng.PageOf(rec); p != nil {
		page = p
	}
	if _, err := r.eng.Capture(page, r.reg); err != nil {
		return
	}
	cov, err := r.eng.Cover(rec)
	if err != nil || cov == nil {
		return
	}
	what := "<" + cov.Tag
	if cov.ID != "" {
		what += " id=\"" + cov.ID + "\""
	}
	what += ">"
	if cov.Role != "" && cov.Role != "generic" {
		what += fmt.Sprintf(" (%s %q)", cov.Role, cov.Name)
	}
	e.Cause = "another element covers it: " + what
	retry := llmerr.Action{Tool: tool, Why: "then retry the original action",
		Args: append([]llmerr.Arg{llmerr.A("ref", rec.Ref)}, retryArgs...)}
	for _, k := range cov.Refs {
		if dismissWords.MatchString(k.Name) && (k.Role == "button" || k.Role == "link") {
			e.Actions = []llmerr.Action{
				llmerr.Call("browser_click", fmt.Sprintf("close the covering element with its %s %q", k.Role, k.Name), llmerr.A("ref", k.Ref)),
				retry,
			}
			e.Details["coveredBy"] = what
			return
		}
	}
	e.Actions = []llmerr.Action{
		llmerr.Call("browser_snapshot", "find how to close "+what),
		retry,
	}
	e.Details["coveredBy"] = what
}

// describe names the element for a result line: role "name" [ref=eN].
func describe(rec refs.Record, human string) string {
	d := fmt.Sprintf("%s [ref=%s]", rec.Element(), rec.Ref)
	if human != "" && !strings.EqualFold(human, rec.Name) {
		d = fmt.Sprintf("%q, %s", human, d)
	}
	return d
}

type state struct{ url, title string }

func pageState(tab *browser.Tab) state {
	title, _ := tab.Page.Title()
	return state{url: tab.Page.URL(), title: title}
}

// report waits for the page to settle and says what the action changed.
func (s *Server) report(ctx context.Context, t *target, before state, mark browser.Mark, what string) *result {
	settled := t.tab.Settle(ctx, mark, browser.DefaultSettleLimits(s.cfg.NavigationTimeout))
	var b strings.Builder
	b.WriteString(what)
	b.WriteString("\n")
	dismissed := false
	for _, d := range t.tab.TakeDialogs() {
		fmt.Fprintf(&b, "Dialog: %s\n", d)
		dismissed = dismissed || (!d.Accepted && !d.AsSet && (d.Type == "confirm" || d.Type == "prompt"))
	}
	if dismissed && t.retry != nil {
		// The policy said no for the agent; saying yes is two calls.
		fmt.Fprintf(&b, "If it should have been accepted:\n1. %s — answer the next dialog with OK\n2. %s — do the action again\n",
			llmerr.Call("browser_handle_dialog", "", llmerr.A("accept", true)).Call(), t.retry.Call())
	}
	if t.tab.Closed() {
		if t.role != nil {
			t.role.adopt()
			if n := len(t.role.tabs); n > 0 && t.role.tab == t.tab {
				t.role.tab = t.role.tabs[n-1]
				fmt.Fprintf(&b, "The tab closed itself. Tab %d (%s) is now the current tab.\n", n-1, t.role.tab.Page.URL())
				return &result{text: strings.TrimRight(b.String(), "\n")}
			}
		}
		b.WriteString("The page closed itself. The next browser call opens a new page.\n")
		return &result{text: strings.TrimRight(b.String(), "\n")}
	}
	after := pageState(t.tab)
	switch {
	case after.url != before.url:
		fmt.Fprintf(&b, "Page navigated: %s → %s\nTitle: %s\n", before.url, after.url, after.title)
		b.WriteString("Call browser_snapshot() for the new page's refs.\n")
	case settled.Navigated:
		fmt.Fprintf(&b, "Page reloaded: %s\nTitle: %s\n", after.url, after.title)
		b.WriteString("Refs from earlier snapshots are stale; call browser_snapshot() for new ones.\n")
	case after.title != before.title:
		fmt.Fprintf(&b, "Title changed: %q → %q\n", before.title, after.title)
	}
	if settled.LoadErr != nil {
		b.WriteString("The new page had not finished loading; browser_snapshot() shows what is there.\n")
	}
	if t.opened != nil {
		select {
		case <-t.opened:
		case <-time.After(min(s.cfg.NavigationTimeout, 3*time.Second)):
		case <-ctx.Done():
		}
	}
	if t.role != nil {
		t.role.reportNewTabs(&b, s.cfg.NavigationTimeout)
	}
	return &result{text: strings.TrimRight(b.String(), "\n")}
}

// reportNewTabs adopts the tabs the page opened (popups, target=_blank
// links) and says so; the newest becomes the current tab, since that is
// where the agent's action led. Call with the role's lock held.
func (r *role) reportNewTabs(b *strings.Builder, nav time.Duration) {
	fresh := r.adopt()
	if len(fresh) == 0 {
		return
	}
	prev := r.indexOf(r.tab)
	for _, t := range fresh {
		// A popup starts on about:blank; give it its document, boundedly.
		pollUntil(context.Background(), time.Now().Add(min(nav, 3*time.Second)), func() bool {
			u := t.Page.URL()
			return t.Closed() || (u != "" && u != "about:blank")
		})
		_ = t.Page.WaitForLoadState(playwright.PageWaitForLoadStateOptions{
			State: playwright.LoadStateDomcontentloaded, Timeout: playwright.Float(float64(min(nav, 5*time.Second).Milliseconds()))})
		title, _ := t.Page.Title()
		fmt.Fprintf(b, "Opened a new tab %d: %s\nTitle: %s\n", r.indexOf(t), t.Page.URL(), title)
	}
	r.tab = fresh[len(fresh)-1]
	fmt.Fprintf(b, "Tab %d is now the current tab; call browser_snapshot() to see it", r.indexOf(r.tab))
	if prev >= 0 {
		fmt.Fprintf(b, ", or browser_tabs(action=\"select\", index=%d) to go back", prev)
	}
	b.WriteString(".\n")
}

// isBrowserGone reports whether the role's browser is no longer connected.
func isBrowserGone(r *role) bool {
	b := r.bctx.Browser()
	return b != nil && !b.IsConnected()
}

// indexOf returns t's position in the role's tabs, or -1.
func (r *role) indexOf(t *browser.Tab) int {
	for i, x := range r.tabs {
		if x == t {
			return i
		}
	}
	return -1
}
