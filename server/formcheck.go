package server

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/snapshot"
)

// Form checks. A click on a form's submit control that leaves the tab on
// its page may have been refused by the form's own validation, in the
// browser or on the server: the page then marks fields aria-invalid (or
// the browser's constraints fail) and shows a message beside each. The
// result names those fields with their messages and, where fixing one
// needs no words (a checkbox to check, an option the message names), the
// call that does it, then the submit again.

// hasInvalidJS reports whether the clicked element's form shows a field as
// invalid: cheap, so only such clicks pay for the full check.
const hasInvalidJS = `(el) => {
  const f = el.form;
  if (!f || typeof f.querySelector !== 'function') return false;
  if (f.querySelector('[aria-invalid]:not([aria-invalid="false"]):not([aria-invalid=""])')) return true;
  return !f.noValidate && !el.hasAttribute('formnovalidate') && !!f.querySelector('input:invalid, select:invalid, textarea:invalid');
}`

// maxInvalidFields bounds the fields a result lists.
const maxInvalidFields = 6

// reportInvalid adds the form check to the result of a click that left the
// tab on its document.
func (a *acting) reportInvalid() {
	if a.c.tool != "browser_click" || len(a.targets) != 1 || a.tab.Closed() {
		return
	}
	t := a.targets[0]
	if t.tab != a.tab {
		return
	}
	has, ok := bounded(time.Second, func() bool { v, err := t.el.Evaluate(hasInvalidJS); return err == nil && v == true })
	if !ok || !has {
		return
	}
	// A capture first, so the fields the page just marked have refs.
	if _, err := a.role.capture(a.tab.Page); err != nil {
		return
	}
	fields, err := a.role.eng.Invalid(t.rec)
	if err != nil || len(fields) == 0 {
		return
	}
	again := t.again(t.rec.Ref)
	again.Why = "submit the form again"
	a.res.invalid = invalidReport(fields, again)
	rf := &refusedForm{tab: a.tab, submit: again, line: describe(t.rec, ""), of: map[string]string{}, pending: map[string]bool{}}
	for _, f := range fields {
		if f.Ref == "" {
			continue
		}
		rf.pending[f.Ref] = true
		rf.of[f.Ref] = f.Ref
		for _, r := range f.Radios {
			// Any radio of the group sets it.
			rf.of[r.Ref] = f.Ref
		}
	}
	a.role.refused = rf
	// The steps are the next move; the generic hint would only compete.
	a.res.hint = ""
}

// invalidReport renders the invalid fields and the calls that fix them.
func invalidReport(fields []snapshot.Field, submit llmerr.Action) []string {
	n := len(fields)
	verb := "field is"
	if n != 1 {
		verb = "fields are"
	}
	lines := []string{fmt.Sprintf("The form was not accepted: %d %s marked invalid.", n, verb)}
	var steps []llmerr.Action
	for _, f := range fields[:min(n, maxInvalidFields)] {
		what := fmt.Sprintf("%s %q", f.Role, f.Name)
		line := "- " + what
		if f.Ref != "" {
			line += " [ref=" + f.Ref + "]"
		}
		if f.Message != "" {
			line += ": " + pageText(f.Message)
		}
		lines = append(lines, line)
		if choices := choicesOf(f); len(choices) > 0 {
			lines = append(lines, "  choices: "+pageText(strings.Join(choices, " | ")))
		}
		if fix, ok := fieldFix(f, what); ok {
			steps = append(steps, fix)
		}
	}
	if n > maxInvalidFields {
		lines = append(lines, fmt.Sprintf("[%d more: browser_snapshot() shows them all]", n-maxInvalidFields))
	}
	lines = append(lines, "To send it:")
	for i, s := range append(steps, submit) {
		lines = append(lines, fmt.Sprintf("%d. %s — %s", i+1, s.Call(), s.Why))
	}
	return lines
}

// fieldFix is the call that fixes field f without words of the agent's
// own, or a call with a placeholder where it needs them. ok is false when
// the field offers no call (no ref, or a choice the message does not make).
func fieldFix(f snapshot.Field, what string) (llmerr.Action, bool) {
	if f.Ref == "" && len(f.Radios) == 0 {
		return llmerr.Action{}, false
	}
	switch {
	case f.Type == "checkbox":
		if f.Checked {
			return llmerr.Action{}, false
		}
		return llmerr.Call("browser_click", "check "+what, llmerr.A("ref", f.Ref)), true
	case f.Type == "select":
		var live []snapshot.Option
		for _, o := range f.Options {
			if !o.Disabled && o.Value != "" {
				live = append(live, o)
			}
		}
		labels := make([]string, len(live))
		for i, o := range live {
			labels[i] = o.Label
		}
		pick := chosen(f.Message, labels)
		if pick < 0 {
			// The choice is the agent's: the field's line lists them.
			return llmerr.Action{}, false
		}
		why := fmt.Sprintf("choose %q, the option the message names", live[pick].Label)
		if len(live) == 1 {
			why = fmt.Sprintf("choose %q, its only option", live[pick].Label)
		}
		return llmerr.Call("browser_select_option", why, llmerr.A("ref", f.Ref), llmerr.A("values", []string{optionArg(live[pick])})), true
	case f.Type == "radio":
		var live []snapshot.Radio
		for _, r := range f.Radios {
			if r.Ref != "" {
				live = append(live, r)
			}
		}
		names := make([]string, len(live))
		for i, r := range live {
			names[i] = r.Name
		}
		pick := chosen(f.Message, names)
		if pick < 0 {
			return llmerr.Action{}, false
		}
		return llmerr.Call("browser_click", fmt.Sprintf("choose radio %q", live[pick].Name), llmerr.A("ref", live[pick].Ref)), true
	}
	return llmerr.Call("browser_type", "the text the message asks for in "+what, llmerr.A("ref", f.Ref), llmerr.A("text", "…")), true
}

// optionArg is how a step names an option: by its label, or by its value
// when the label holds brackets or quotes, which would make the call hard
// to read back from the text (select_option takes either).
func optionArg(o snapshot.Option) string {
	if strings.ContainsAny(o.Label, "()[]{}\"\\") && o.Value != "" {
		return o.Value
	}
	return o.Label
}

// choicesOf lists what can be chosen in a select or radio group that has
// nothing chosen yet.
func choicesOf(f snapshot.Field) []string {
	var out []string
	for _, o := range f.Options {
		if !o.Disabled && o.Value != "" {
			out = append(out, o.Label)
		}
	}
	for _, r := range f.Radios {
		out = append(out, r.Name)
	}
	return out
}

// named returns the index of the one choice the message names, or -1 when
// it names none or several. A choice counts as named by its whole label
// or by the label's head before a parenthesis, a dash or a comma
// ("Standard delivery (3–5 days)" is named by "Standard delivery").
func named(message string, choices []string) int {
	msg := strings.ToLower(message)
	found := -1
	for i, c := range choices {
		c = strings.ToLower(strings.TrimSpace(c))
		head := c
		if j := strings.IndexAny(c, "(,–—"); j > 0 {
			head = c[:j]
		}
		if j := strings.Index(head, " - "); j > 0 {
			head = head[:j]
		}
		head = strings.TrimSpace(head)
		if len([]rune(head)) < 3 || !(hasWords(msg, c) || hasWords(msg, head)) {
			continue
		}
		if found >= 0 {
			return -1
		}
		found = i
	}
	return found
}

// hasWords reports whether s contains phrase as whole words ("card" is
// not in "cards").
func hasWords(s, phrase string) bool {
	return phrase != "" && wordsPattern(phrase).MatchString(s)
}

// chosen returns the choice the message names, the only choice when there
// is one, or -1.
func chosen(message string, choices []string) int {
	if i := named(message, choices); i >= 0 || len(choices) != 1 {
		return i
	}
	return 0
}

// refusedForm is a form the page refused: the fields it marked that are
// not set again yet, and the call that submits it.
type refusedForm struct {
	tab     *browser.Tab
	submit  llmerr.Action
	line    string            // the submit control's line, as a snapshot shows it
	of      map[string]string // a ref that sets a field (a radio sets its group) → the field
	pending map[string]bool
}

// noteResubmit tells, once an action has set every field the page refused,
// the call that submits the form again: the agent fixing a field knows the
// next step without reading the page for the button.
func (a *acting) noteResubmit(navigated bool) {
	rf := a.role.refused
	if rf == nil {
		return
	}
	if navigated || rf.tab != a.tab || a.tab.Closed() {
		a.role.refused = nil
		return
	}
	// A field is set by typing, choosing, or a click on a checkbox or
	// radio.
	touched := false
	set := func(ref string) {
		if f, ok := rf.of[ref]; ok {
			delete(rf.pending, f)
			touched = true
		}
	}
	for ref := range a.set {
		set(ref)
	}
	for _, t := range a.targets {
		if a.c.tool == "browser_click" {
			set(t.rec.Ref)
		}
	}
	if !touched || len(rf.pending) > 0 {
		return
	}
	a.role.refused = nil
	a.res.notes = append(a.res.notes, fmt.Sprintf("Every field the form refused has been set again: %s submits it (%s).", rf.submit.Call(), rf.line))
}

// noteSubmit names, in the result of browser_fill_form, the control that
// submits the form it filled (the form's default button), unless the page
// left, a refused form's note already names it, or the result shows it:
// the agent's next step, without reading the page for the button. A form
// with no submit control (a dialog's form whose buttons script answers)
// gets its buttons named instead, none of them called a submit.
func (a *acting) noteSubmit(navigated bool) {
	if a.filled == nil || navigated || a.tab.Closed() || a.role.refused != nil {
		return
	}
	c, buttons, err := a.role.eng.Submitter(*a.filled)
	if err != nil {
		return
	}
	shown := func(ref string) bool {
		mark := "[ref=" + ref + "]"
		return strings.Contains(a.res.changes, mark) || strings.Contains(a.res.snapshot, mark) ||
			slices.ContainsFunc(a.res.notes, func(n string) bool { return strings.Contains(n, mark) })
	}
	if c != nil {
		if !shown(c.Ref) {
			line := fmt.Sprintf("%s %q [ref=%s]", c.Role, c.Name, c.Ref)
			a.res.notes = append(a.res.notes, fmt.Sprintf("%s submits the form (%s).", llmerr.Call("browser_click", "", llmerr.A("ref", c.Ref)).Call(), line))
		}
		return
	}
	// No submit control: the form's own buttons, which its script answers,
	// are what an agent looks for next. Named, not called submits.
	var named []string
	for _, b := range buttons {
		if shown(b.Ref) {
			return // the result shows the form's buttons already
		}
		named = append(named, fmt.Sprintf("%s %q [ref=%s]", b.Role, b.Name, b.Ref))
	}
	if len(named) > 0 {
		a.res.notes = append(a.res.notes, "The form has no submit button; its buttons: "+strings.Join(named, ", ")+".")
	}
}
