package server

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/snapshot"
)

type waitArgs struct {
	Text     string   `json:"text,omitempty" jsonschema:"Wait until this text (whole words) is visible"`
	TextGone string   `json:"textGone,omitempty" jsonschema:"Wait until this text is no longer visible"`
	Ref      string   `json:"ref,omitempty" jsonschema:"Wait until this element is visible and enabled"`
	Time     *float64 `json:"time,omitempty" jsonschema:"Seconds to wait; alone, a plain pause"`
	roleArg
}

func (s *Server) addWaitTools() {
	addTool(s, def("browser_wait_for", "Wait for", readOnly, "Wait until text appears or goes, an element (ref) is usable, or seconds pass (at most the action timeout)."), s.waitFor)
}

func (s *Server) waitFor(ctx context.Context, c *call, in waitArgs) (res *response, err error) {
	if in.Text == "" && in.TextGone == "" && in.Ref == "" && in.Time == nil {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool,
			Message: "browser_wait_for needs text, textGone, ref or time.", Cause: "no condition was given",
			Actions: []llmerr.Action{llmerr.Call(c.tool, "for example", llmerr.A("text", "Saved"))}}
	}
	if in.Time != nil && (*in.Time < 0 || *in.Time != *in.Time) {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool,
			Message: "time must be a positive number of seconds.", Cause: fmt.Sprintf("got %v", *in.Time),
			Actions: []llmerr.Action{llmerr.Call(c.tool, "for example", llmerr.A("time", 2))}}
	}
	limit := s.cfg.ActionTimeout
	capped := false
	if in.Time != nil {
		// Compared in seconds first: a huge number would overflow a
		// Duration and wait not at all.
		if *in.Time >= limit.Seconds() {
			capped = *in.Time > limit.Seconds()
		} else {
			limit = time.Duration(*in.Time * float64(time.Second))
		}
	}
	r, tab, unlock, err := c.lockTab()
	if err != nil {
		return nil, err
	}
	defer unlock()
	start := time.Now()
	res = &response{}
	defer func() {
		if res != nil {
			// Dialogs the page opened while it was watched.
			res.dialogs = tab.TakeDialogs()
		}
	}()
	if in.Text == "" && in.TextGone == "" && in.Ref == "" {
		pollUntil(ctx, start.Add(limit), func() bool { return r.lostUnder(c.tool, tab.Page.URL()) != nil })
		if err := r.lostUnder(c.tool, tab.Page.URL()); err != nil {
			return nil, err
		}
		waited := fmt.Sprintf("Waited %s.", limit.Round(10*time.Millisecond))
		if capped {
			waited += fmt.Sprintf(" One call waits at most %s (the action timeout); call browser_wait_for again to wait longer.", s.cfg.ActionTimeout)
		}
		res.addDid("%s", waited)
		return res, nil
	}
	if in.Ref != "" {
		again := c.sameCall()
		t, err := c.resolve(r, in.Ref, again)
		if err != nil {
			return nil, err
		}
		ms := playwright.Float(float64(time.Until(start.Add(limit)).Milliseconds()))
		err = t.el.WaitForElementState(*playwright.ElementStateVisible, playwright.ElementHandleWaitForElementStateOptions{Timeout: ms})
		if err == nil {
			ms = playwright.Float(float64(max(time.Until(start.Add(limit)), time.Millisecond).Milliseconds()))
			err = t.el.WaitForElementState(*playwright.ElementStateEnabled, playwright.ElementHandleWaitForElementStateOptions{Timeout: ms})
		}
		if err != nil {
			if _, rerr := c.resolve(r, in.Ref, again); rerr != nil {
				return nil, rerr
			}
			return nil, s.waitTimeout(c, in, tab, limit, fmt.Sprintf("%s did not become visible and enabled", describe(t.rec, "")))
		}
		res.addDid("%s is visible and enabled (after %s).", describe(t.rec, ""), since(start))
	}
	for _, w := range []struct {
		text string
		gone bool
	}{{in.Text, false}, {in.TextGone, true}} {
		if w.text == "" {
			continue
		}
		stuck, late := false, false
		poll := func() bool {
			if r.lostUnder(c.tool, tab.Page.URL()) != nil {
				return true
			}
			if !w.gone && r.lateTabPending() {
				// The page opened a tab while it was watched: the text is
				// looked for there (late.go).
				late = true
				return true
			}
			n, answered := visibleText(tab, w.text, max(time.Until(start.Add(limit)), waitPoll))
			stuck = !answered
			return stuck || (n > 0) != w.gone
		}
		ok := pollUntil(ctx, start.Add(limit), poll)
		for i := 0; late && i < maxNewTabs; i++ {
			late = false
			tab = r.followLateTabs(ctx)
			ok = pollUntil(ctx, start.Add(limit), poll)
		}
		// A page that went with its browser shows no text: not a wait's answer.
		if err := r.lostUnder(c.tool, tab.Page.URL()); err != nil {
			return nil, err
		}
		if stuck && !answers(tab) {
			return nil, busyPage(c.tool, tab.Page.URL(), fmt.Errorf("no answer within %v", limit))
		}
		if stuck {
			// The last poll ran out of time on a page that answers now (a
			// loaded machine): ask once more rather than take the silence
			// as the condition holding.
			n, answered := visibleText(tab, w.text, time.Second)
			ok = answered && (n > 0) != w.gone
		}
		if !ok {
			what := fmt.Sprintf("the text %q did not appear", w.text)
			if w.gone {
				what = fmt.Sprintf("the text %q is still visible", w.text)
			}
			return nil, s.waitTimeout(c, in, tab, limit, what)
		}
		if w.gone {
			res.addDid("The text %q is gone (after %s).", w.text, since(start))
			if s.recording() {
				r.tests.add(false, "", []string{fmt.Sprintf("await expect(page.getByText(%s)).toHaveCount(0);", jsString(w.text))})
			}
			continue
		}
		res.addDid("The text %q appeared (after %s).", w.text, since(start))
		if s.recording() {
			// What the agent waited for is what the test checks.
			r.tests.add(false, "", []string{fmt.Sprintf("await expect(page.getByText(%s).first()).toBeVisible();", jsString(w.text))})
		}
		// Say where, with refs, so the agent can act without a snapshot.
		if snap, err := r.capture(tab.Page); err == nil {
			if ms, total := snap.Find(snapshot.Query{Text: w.text}, 5); total > 0 {
				res.addBody(fenceBlock(matchLines(ms))...)
				if total > len(ms) {
					res.addBody(fmt.Sprintf("[%d more: browser_find(text=%q) lists them]", total-len(ms), w.text))
				}
			}
		}
	}
	return res, nil
}

// visibleText counts the visible elements showing text as whole words
// (case-insensitive: "Pay" is not found in "payment"), in every frame of
// the tab. A frame that cannot answer counts as not showing it; a page
// that does not answer within d, whose main thread is stuck, gives
// answered false.
func visibleText(tab *browser.Tab, text string, d time.Duration) (n int, answered bool) {
	re := wordsPattern(text)
	return bounded(d, func() int {
		n := 0
		for _, f := range tab.Page.Frames() {
			k, err := f.GetByText(re).Filter(playwright.LocatorFilterOptions{Visible: playwright.Bool(true)}).Count()
			if err == nil {
				n += k
			}
		}
		return n
	})
}

// waitTimeout is the error of a wait whose condition did not hold in time:
// waiting again is a real option, so it comes first.
func (s *Server) waitTimeout(c *call, in waitArgs, tab *browser.Tab, waited time.Duration, what string) error {
	again := c.step(given("text", in.Text, "textGone", in.TextGone, "ref", in.Ref)...)
	again.Why = "wait longer, if the page is still working"
	return &llmerr.Error{Code: llmerr.ActionTimeout, Tool: c.tool, Ref: in.Ref, URL: tab.Page.URL(), Timeout: waited,
		Message: fmt.Sprintf("Waited %s: %s.", waited.Round(10*time.Millisecond), what),
		Cause:   "the page did not reach that state within this call's wait (at most the action timeout)",
		Actions: []llmerr.Action{
			again,
			llmerr.Call("browser_snapshot", "see what the page shows instead (an error message, a different wording)"),
		}}
}

// wordsPattern matches text case-insensitively, with word boundaries at
// its ends where they are word characters.
func wordsPattern(text string) *regexp.Regexp {
	p := regexp.QuoteMeta(text)
	if text == "" {
		return regexp.MustCompile(p)
	}
	isWord := func(r byte) bool {
		return r == '_' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
	}
	if isWord(text[0]) {
		p = `\b` + p
	}
	if isWord(text[len(text)-1]) {
		p += `\b`
	}
	return regexp.MustCompile("(?i)" + p)
}
