package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/snapshot"
)

// The tools that act with the mouse and keyboard: click, type, hover,
// press_key, drag. Each describes itself as an op; the pipeline (act.go)
// does the rest.

type clickArgs struct {
	Ref         string   `json:"ref" jsonschema:"Ref of the element from browser_snapshot, like e12"`
	Element     string   `json:"element,omitempty" jsonschema:"Description, for messages"`
	DoubleClick bool     `json:"doubleClick,omitempty" jsonschema:"Double-click"`
	Button      string   `json:"button,omitempty" jsonschema:"left, right or middle"`
	Modifiers   []string `json:"modifiers,omitempty" jsonschema:"Keys held, like Shift"`
	snapshotArg
	roleArg
}

// clickModifiers are the keys browser_click can hold.
var clickModifiers = map[string]playwright.KeyboardModifier{
	"alt": *playwright.KeyboardModifierAlt, "control": *playwright.KeyboardModifierControl,
	"controlormeta": *playwright.KeyboardModifierControlOrMeta, "meta": *playwright.KeyboardModifierMeta,
	"shift": *playwright.KeyboardModifierShift,
}

// clickButtons are the mouse buttons browser_click can press.
var clickButtons = map[string]*playwright.MouseButton{
	"": playwright.MouseButtonLeft, "left": playwright.MouseButtonLeft,
	"right": playwright.MouseButtonRight, "middle": playwright.MouseButtonMiddle,
}

// plain reports whether the click is a single left click with no key held.
func (in clickArgs) plain() bool {
	return !in.DoubleClick && (in.Button == "" || strings.EqualFold(in.Button, "left")) && len(in.Modifiers) == 0
}

// check refuses a button or a key the click cannot use.
func (in clickArgs) check(tool string) error {
	bad := func(what, got, allowed string, fix llmerr.Arg) error {
		return &llmerr.Error{Code: llmerr.InvalidParams, Tool: tool, Ref: in.Ref,
			Message: fmt.Sprintf("%q is not a %s browser_click can use.", got, what), Cause: "it takes " + allowed,
			Actions: []llmerr.Action{llmerr.Call(tool, "with one of those", llmerr.A("ref", in.Ref), fix)}}
	}
	if _, ok := clickButtons[strings.ToLower(in.Button)]; !ok {
		return bad("mouse button", in.Button, "left, right or middle", llmerr.A("button", "right"))
	}
	for _, m := range in.Modifiers {
		if _, ok := clickModifiers[strings.ToLower(m)]; !ok {
			return bad("key to hold", m, "Alt, Control, ControlOrMeta, Meta or Shift", llmerr.A("modifiers", []string{"Shift"}))
		}
	}
	return nil
}

// verb is how the result says what the click did.
func (in clickArgs) verb() string {
	v := "Clicked"
	switch {
	case in.DoubleClick:
		v = "Double-clicked"
	case strings.EqualFold(in.Button, "right"):
		v = "Right-clicked"
	case strings.EqualFold(in.Button, "middle"):
		v = "Middle-clicked"
	}
	return v
}

type typeArgs struct {
	Ref     string `json:"ref" jsonschema:"Ref of an editable element from browser_snapshot"`
	Text    string `json:"text" jsonschema:"Text to put in the field"`
	Element string `json:"element,omitempty" jsonschema:"Description, for messages"`
	Submit  bool   `json:"submit,omitempty" jsonschema:"Press Enter afterwards"`
	Slowly  bool   `json:"slowly,omitempty" jsonschema:"Key by key"`
	snapshotArg
	roleArg
}

type hoverArgs struct {
	Ref     string `json:"ref" jsonschema:"Ref of the element from browser_snapshot"`
	Element string `json:"element,omitempty" jsonschema:"Description, for messages"`
	snapshotArg
	roleArg
}

type pressArgs struct {
	Key string `json:"key" jsonschema:"Key or combination, like Enter, ArrowDown, Control+A"`
	snapshotArg
	roleArg
}

type dragArgs struct {
	StartRef string `json:"startRef" jsonschema:"Ref of the element to drag"`
	EndRef   string `json:"endRef" jsonschema:"Ref of the element to drop it on"`
	snapshotArg
	roleArg
}

// maxTypeText bounds browser_type's text: far above any real form value,
// far below what would stall the page. maxSlowText bounds it typed key by
// key, which takes a round trip per key.
const (
	maxTypeText = 100_000
	maxSlowText = 2_000
)

func (s *Server) addInputTools() {
	addTool(s, def("browser_click", "Click", destructive|openWorld, "Click an element (ref); waits for the page to settle."), s.click)
	addTool(s, def("browser_type", "Type text", destructive|openWorld, "Replace the text of an editable element (ref); optionally press Enter."), s.typeText)
	addTool(s, def("browser_hover", "Hover", harmless|openWorld, "Hover over an element (ref): opens menus and tooltips."), s.hover)
	addTool(s, def("browser_press_key", "Press a key", destructive|openWorld, "Press a key or combination in the focused element."), s.pressKey)
	addTool(s, def("browser_drag", "Drag and drop", destructive|openWorld, "Drag one element (startRef) onto another (endRef)."), s.drag)
}

// clickCheck is what snapshot.ClickCheckJS found; vw and vh are the size
// of the element's frame's viewport.
type clickCheck struct {
	opens, ready, scrolled bool
	x, y, vw, vh           float64
}

// checkClick runs snapshot.ClickCheckJS on el, in its own frame: the
// point it gives is in that frame's viewport. An element that does not
// answer in time is not ready.
func checkClick(el playwright.ElementHandle) clickCheck {
	v, ok := bounded(time.Second, func() any { v, _ := el.Evaluate(snapshot.ClickCheckJS); return v })
	m, _ := v.(map[string]any)
	if !ok || m == nil {
		return clickCheck{}
	}
	x, xok := snapshot.Number(m["x"])
	y, yok := snapshot.Number(m["y"])
	vw, _ := snapshot.Number(m["vw"])
	vh, _ := snapshot.Number(m["vh"])
	return clickCheck{opens: m["opens"] == true, ready: m["ready"] == true && xok && yok, scrolled: m["scrolled"] == true,
		x: x, y: y, vw: vw, vh: vh}
}

func (s *Server) click(ctx context.Context, c *call, in clickArgs) (*response, error) {
	if err := in.check(c.tool); err != nil {
		return nil, err
	}
	return s.run(ctx, c, c.refOp(in.Ref, nil, func(a *acting) error {
		t := a.targets[0]
		if !in.plain() {
			// Playwright's own click: its button, count and held keys.
			var mods []playwright.KeyboardModifier
			for _, m := range in.Modifiers {
				mods = append(mods, clickModifiers[strings.ToLower(m)])
			}
			button := clickButtons[strings.ToLower(in.Button)]
			if err := a.clearCover(t); err != nil {
				return err
			}
			var err error
			if in.DoubleClick {
				err = t.el.Dblclick(playwright.ElementHandleDblclickOptions{Timeout: a.timeout, Button: button, Modifiers: mods})
			} else {
				err = t.el.Click(playwright.ElementHandleClickOptions{Timeout: a.timeout, Button: button, Modifiers: mods})
			}
			if err != nil {
				return err
			}
			did := in.verb() + " %s"
			if len(mods) > 0 {
				did += " with " + strings.Join(in.Modifiers, "+") + " held"
			}
			if a.srv.recording() {
				var opts []string
				if in.Button != "" && strings.ToLower(in.Button) != "left" {
					opts = append(opts, "button: "+jsString(strings.ToLower(in.Button)))
				}
				if len(mods) > 0 {
					ms := make([]string, len(mods))
					for i, m := range mods {
						ms[i] = jsString(string(m))
					}
					opts = append(opts, "modifiers: ["+strings.Join(ms, ", ")+"]")
				}
				method, arg := "click", ""
				if in.DoubleClick {
					method = "dblclick"
				}
				if len(opts) > 0 {
					arg = "{ " + strings.Join(opts, ", ") + " }"
				}
				a.testCode("await %s.%s(%s);", a.locatorOf(t), method, arg)
			}
			a.res.addDid(did+".", describe(t.rec, in.Element))
			return nil
		}
		chk := checkClick(t.el)
		if chk.opens {
			a.opened = a.role.pageOpened()
		}
		if x, y, ok := a.pagePoint(t, chk); ok {
			// Ready now: the mouse clicks where the element is, without
			// Playwright's waits for stable animation frames and for its
			// hit-target check after the press (each a frame or more on a
			// large page).
			if err := a.within(func() error { return a.tab.Page.Mouse().Click(x, y) }); err != nil {
				return err
			}
		} else {
			if err := a.clearCover(t); err != nil {
				return err
			}
			if err := t.el.Click(playwright.ElementHandleClickOptions{Timeout: a.timeout}); err != nil {
				return err
			}
		}
		a.res.addDid("Clicked %s.", describe(t.rec, in.Element))
		if a.srv.recording() {
			a.testCode("await %s.click();", a.locatorOf(t))
		}
		return nil
	}))
}

// pagePoint is where the mouse can act on t at once, in the page's
// viewport, from what checkClick found: ok is false when t is not ready
// for it, and Playwright's own click or hover must wait and explain. In a
// child frame, the point goes up through each iframe to the page's
// viewport, where the mouse is; not after a scroll: the browser sends an
// event to a frame of another site (its own process) by where that frame
// was on the last frame drawn, which a scroll just now has not reached.
func (a *acting) pagePoint(t *target, chk clickCheck) (x, y float64, ok bool) {
	if !chk.ready || (!t.rec.MainFrame && chk.scrolled) {
		return 0, 0, false
	}
	x, y, ok = chk.x, chk.y, true
	if !t.rec.MainFrame {
		x, y, ok = a.role.eng.PagePoint(t.rec, x, y, chk.vw, chk.vh)
	}
	if ok {
		a.srv.quickMouse.Add(1)
	}
	return x, y, ok
}

// coverSeen is how long an overlay with its own close control must stay
// over an element before a click calls it in the way.
const coverSeen = 300 * time.Millisecond

// clearCover looks, before a click that is not ready, at what covers its
// element, so that the click neither waits its whole timeout on something
// that will not move nor fails on something that will: a notice (a toast,
// a snackbar) goes by itself, so the click waits for it, up to noticeWait,
// and says so (still there, the error's plan waits for its text to go);
// an overlay with a control that closes it (a cookie banner, a modal)
// stays until closed, so once seen over the element for coverSeen, the
// click fails now with the plan that closes it. Anything else is left to
// Playwright's click, which waits and explains.
func (a *acting) clearCover(t *target) error {
	if !t.rec.MainFrame {
		return nil
	}
	eng := a.role.eng
	cov, err := eng.Cover(t.rec)
	if err != nil || cov == nil {
		return nil
	}
	switch {
	case cov.Live:
		start := time.Now()
		gone := pollUntil(a.ctx, start.Add(noticeWait), func() bool {
			c, err := eng.Cover(t.rec)
			return err == nil && (c == nil || !c.Live || c.Text != cov.Text)
		})
		if !gone {
			e := llmerr.Classify(fmt.Errorf("<%s> intercepts pointer events", cov.Tag),
				llmerr.Situation{Tool: a.c.tool, Ref: t.rec.Ref, Element: t.rec.Element(), URL: a.tab.Page.URL()})
			e.Code = llmerr.ElementNotInteractable
			e.Message = fmt.Sprintf("Could not act on %s: another element covers it.", describe(t.rec, ""))
			a.role.explainCover(e, t, 0)
			return e
		}
		what := "a notice"
		if cov.Text != "" {
			what += fmt.Sprintf(" (%q)", cov.Text)
		}
		a.res.notes = append(a.res.notes, fmt.Sprintf("Waited %s for %s over it to go.",
			time.Since(start).Round(100*time.Millisecond), what))
	case dismissible(cov):
		moved := pollUntil(a.ctx, time.Now().Add(coverSeen), func() bool {
			c, err := eng.Cover(t.rec)
			return err == nil && (c == nil || c.Tag != cov.Tag || c.ID != cov.ID)
		})
		if !moved {
			return fmt.Errorf("<%s> intercepts pointer events", cov.Tag)
		}
	}
	return nil
}

// dismissible reports whether cov has a control that closes it.
func dismissible(cov *snapshot.Cover) bool {
	for _, k := range cov.Refs {
		if dismissWords.MatchString(k.Name) && (k.Role == "button" || k.Role == "link") {
			return true
		}
	}
	for _, k := range cov.Controls {
		if dismissWords.MatchString(k.Name) {
			return true
		}
	}
	return false
}

func (s *Server) typeText(ctx context.Context, c *call, in typeArgs) (*response, error) {
	if n := utf8.RuneCountInString(in.Text); n > maxTypeText {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool, Ref: in.Ref,
			Message: fmt.Sprintf("The text is %d characters long; browser_type takes at most %d.", n, maxTypeText),
			Cause:   "the text argument is too long",
			Actions: []llmerr.Action{llmerr.Call(c.tool, "with a shorter text", llmerr.A("ref", in.Ref), llmerr.A("text", "…"))},
		}
	}
	if n := utf8.RuneCountInString(in.Text); in.Slowly && n > maxSlowText {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool, Ref: in.Ref,
			Message: fmt.Sprintf("The text is %d characters long; typed slowly, browser_type takes at most %d.", n, maxSlowText),
			Cause:   "key by key, a long text would outlast the action timeout",
			Actions: []llmerr.Action{llmerr.Call(c.tool, "without slowly, which puts the text in at once", llmerr.A("ref", in.Ref), llmerr.A("text", in.Text))},
		}
	}
	args := []llmerr.Arg{llmerr.A("text", in.Text)}
	if in.Submit {
		args = append(args, llmerr.A("submit", true))
	}
	if in.Slowly {
		args = append(args, llmerr.A("slowly", true))
	}
	return s.run(ctx, c, c.refOp(in.Ref, args, func(a *acting) error {
		t := a.targets[0]
		if in.Slowly {
			// Emptied, then key by key: keydown, keypress, input and keyup
			// for each, as a page that listens to keys (a search box, a
			// mask) expects.
			if err := t.el.Fill("", playwright.ElementHandleFillOptions{Timeout: a.timeout}); err != nil {
				return err
			}
			if err := t.el.Type(in.Text, playwright.ElementHandleTypeOptions{Timeout: a.timeout}); err != nil {
				return err
			}
		} else if err := t.el.Fill(in.Text, playwright.ElementHandleFillOptions{Timeout: a.timeout}); err != nil {
			return err
		}
		a.res.addDid("Typed %d characters into %s.", utf8.RuneCountInString(in.Text), describe(t.rec, in.Element))
		a.setValue(t.rec.Ref, in.Text)
		if a.srv.recording() {
			loc := a.locatorOf(t)
			if in.Slowly {
				a.testCode("await %s.fill('');", loc)
				a.testCode("await %s.pressSequentially(%s);", loc, jsString(in.Text))
			} else {
				a.testCode("await %s.fill(%s);", loc, jsString(in.Text))
			}
			a.testCode("await expect(%s).toHaveValue(%s);", loc, jsString(in.Text))
			if in.Submit {
				a.testCode("await %s.press('Enter');", loc)
			}
		}
		if in.Submit {
			if err := t.el.Press("Enter", playwright.ElementHandlePressOptions{Timeout: a.timeout}); err != nil {
				return err
			}
			a.res.addDid("Pressed Enter.")
		}
		return nil
	}))
}

func (s *Server) hover(ctx context.Context, c *call, in hoverArgs) (*response, error) {
	return s.run(ctx, c, c.refOp(in.Ref, nil, func(a *acting) error {
		t := a.targets[0]
		if x, y, ok := a.pagePoint(t, checkClick(t.el)); ok {
			// As a click: the mouse goes there now, without Playwright's
			// waits for stable animation frames.
			if err := a.within(func() error { return a.tab.Page.Mouse().Move(x, y) }); err != nil {
				return err
			}
		} else if err := t.el.Hover(playwright.ElementHandleHoverOptions{Timeout: a.timeout}); err != nil {
			return err
		}
		a.res.addDid("Hovered over %s.", describe(t.rec, in.Element))
		if a.srv.recording() {
			a.testCode("await %s.hover();", a.locatorOf(t))
		}
		return nil
	}))
}

func (s *Server) pressKey(ctx context.Context, c *call, in pressArgs) (*response, error) {
	key, why := normalizeKey(in.Key)
	if why != "" {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool,
			Message: fmt.Sprintf("%q is not a key Playwright can press: %s.", in.Key, why),
			Cause:   "keys are single characters or names like Enter, Escape, Tab, ArrowDown, PageUp, F5, Backspace, joined with + for combinations (Control+A, Shift+Tab)",
			Actions: []llmerr.Action{llmerr.Call(c.tool, "for example", llmerr.A("key", "Enter"))}}
	}
	return s.run(ctx, c, op{retry: c.step(llmerr.A("key", key)), do: func(a *acting) error {
		if err := a.pressScrolling(key); err != nil {
			return err
		}
		a.testCode("await page.keyboard.press(%s);", jsString(key))
		return nil
	}})
}

func (s *Server) drag(ctx context.Context, c *call, in dragArgs) (*response, error) {
	args := func(start, end string) llmerr.Action {
		return c.step(llmerr.A("startRef", start), llmerr.A("endRef", end))
	}
	o := op{refs: []string{in.StartRef, in.EndRef}, retry: args(in.StartRef, in.EndRef),
		again: func(i int, ref string) llmerr.Action {
			if i == 0 {
				return args(ref, in.EndRef)
			}
			return args(in.StartRef, ref)
		}}
	o.do = func(a *acting) error {
		from, to := a.targets[0], a.targets[1]
		if from.tab != to.tab {
			return &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool,
				Message: "startRef and endRef are in different tabs.", Cause: "a drag happens within one page",
				Actions: []llmerr.Action{llmerr.Call("browser_tabs", "see the tabs", llmerr.A("action", "list"))}}
		}
		center := func(t *target) (float64, float64, error) {
			a.failedAt = t
			if err := t.el.ScrollIntoViewIfNeeded(playwright.ElementHandleScrollIntoViewIfNeededOptions{Timeout: a.timeout}); err != nil {
				return 0, 0, err
			}
			box, err := t.el.BoundingBox()
			if err != nil {
				return 0, 0, err
			}
			if box == nil {
				return 0, 0, errors.New("element is not visible")
			}
			return box.X + box.Width/2, box.Y + box.Height/2, nil
		}
		// Mouse calls take no timeout: the whole gesture is bounded.
		err := a.within(func() error {
			x0, y0, err := center(from)
			if err != nil {
				return err
			}
			mouse := a.tab.Page.Mouse()
			if err := mouse.Move(x0, y0); err != nil {
				return err
			}
			if err := mouse.Down(); err != nil {
				return err
			}
			// The target's position is read after the press: the page may
			// have moved things when the drag began.
			x1, y1, err := center(to)
			if err == nil {
				err = mouse.Move(x1, y1, playwright.MouseMoveOptions{Steps: playwright.Int(10)})
			}
			if uerr := mouse.Up(); err == nil {
				err = uerr
			}
			return err
		})
		if err != nil {
			return err
		}
		a.res.addDid("Dragged %s onto %s.", describe(from.rec, ""), describe(to.rec, ""))
		return nil
	}
	return s.run(ctx, c, o)
}
