package server

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/llmerr"
)

// The tools that fill forms: select_option, fill_form, file_upload.

type selectArgs struct {
	Ref     string   `json:"ref" jsonschema:"Ref of a select element from browser_snapshot"`
	Values  []string `json:"values" jsonschema:"Options by value or label; several for a multiple select"`
	Element string   `json:"element,omitempty" jsonschema:"Description, for messages"`
	snapshotArg
	roleArg
}

type uploadArgs struct {
	Ref   string   `json:"ref" jsonschema:"Ref of a file input, or a button that opens a file chooser"`
	Paths []string `json:"paths" jsonschema:"Absolute paths of the files; empty clears the selection"`
	snapshotArg
	roleArg
}

type formField struct {
	Ref   string `json:"ref" jsonschema:"Ref of the field"`
	Value string `json:"value" jsonschema:"Text, option label or value, or true/false"`
}

type fillFormArgs struct {
	Fields []formField `json:"fields" jsonschema:"Fields to fill, in order"`
	snapshotArg
	roleArg
}

func (s *Server) addFormTools() {
	addTool(s, def("browser_select_option", "Select options", destructive|openWorld, "Select options of a select element by value or label."), s.selectOption)
	addTool(s, def("browser_fill_form", "Fill a form", destructive|openWorld, "Fill several fields in one call (text, checkbox, radio, select)."), s.fillForm)
	addTool(s, def("browser_file_upload", "Upload files", destructive|openWorld, "Choose files for a file input or chooser button (ref), from --allowed-dirs."), s.fileUpload)
}

func (s *Server) selectOption(ctx context.Context, c *call, in selectArgs) (*response, error) {
	if len(in.Values) == 0 {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool, Ref: in.Ref,
			Message: "values is empty: name at least one option.",
			Cause:   "no option was given",
			Actions: []llmerr.Action{llmerr.Call("browser_snapshot", "read the select's options (they follow its line)")}}
	}
	return s.run(ctx, c, c.refOp(in.Ref, []llmerr.Arg{llmerr.A("values", in.Values)}, func(a *acting) error {
		t := a.targets[0]
		// Check the options first: Playwright would wait the whole timeout
		// for an option that is not there.
		opts, isSelect, err := selectOptions(t.el)
		if err != nil {
			return err
		}
		if !isSelect {
			return &llmerr.Error{Code: llmerr.ElementNotInteractable, Tool: c.tool, Ref: in.Ref, Element: t.rec.Element(),
				Message: fmt.Sprintf("%s is not a native select.", describe(t.rec, in.Element)),
				Cause:   "browser_select_option works on <select> elements; custom dropdowns open with a click",
				Actions: []llmerr.Action{llmerr.Call("browser_click", "open the dropdown, then click the option in a new snapshot", llmerr.A("ref", in.Ref))}}
		}
		if missing := missingOptions(in.Values, opts); len(missing) > 0 {
			return optionNotFound(c.tool, t, in.Element, in.Values, missing, opts, func(values []string) llmerr.Action {
				return c.step(llmerr.A("ref", in.Ref), llmerr.A("values", values))
			})
		}
		chosen, err := t.el.SelectOption(playwright.SelectOptionValues{ValuesOrLabels: &in.Values},
			playwright.ElementHandleSelectOptionOptions{Timeout: a.timeout})
		if err != nil {
			return err
		}
		a.res.addDid("Selected %s in %s.", quoteAll(labelsOf(chosen, opts)), describe(t.rec, in.Element))
		if a.srv.recording() {
			vs := make([]string, len(chosen))
			for i, v := range chosen {
				vs[i] = jsString(v)
			}
			a.testCode("await %s.selectOption([%s]);", a.locatorOf(t), strings.Join(vs, ", "))
		}
		a.setValue(t.rec.Ref, "")
		return nil
	}))
}

// isFileInputJS reports whether the element is an <input type=file>.
const isFileInputJS = `(el) => el instanceof HTMLInputElement && el.type === 'file'`

func (s *Server) fileUpload(ctx context.Context, c *call, in uploadArgs) (*response, error) {
	paths, err := s.checkUpload(c.tool, in.Paths)
	if err != nil {
		return nil, err
	}
	return s.run(ctx, c, c.refOp(in.Ref, []llmerr.Arg{llmerr.A("paths", in.Paths)}, func(a *acting) error {
		t := a.targets[0]
		names := make([]string, len(paths))
		for i, p := range paths {
			names[i] = filepath.Base(p)
		}
		if isFile, err := evalAs[bool](t.el, isFileInputJS); err != nil {
			return err
		} else if isFile {
			err = t.el.SetInputFiles(paths, playwright.ElementHandleSetInputFilesOptions{Timeout: a.timeout})
			if err != nil {
				return err
			}
		} else {
			// A button that opens the file chooser: click it and answer.
			chooser, err := t.tab.Page.ExpectFileChooser(func() error {
				return t.el.Click(playwright.ElementHandleClickOptions{Timeout: a.timeout})
			}, playwright.PageExpectFileChooserOptions{Timeout: a.timeout})
			if err != nil {
				return &llmerr.Error{Code: llmerr.ElementNotInteractable, Tool: c.tool, Ref: in.Ref, Element: t.rec.Element(),
					Message: fmt.Sprintf("%s is not a file input, and clicking it opened no file chooser.", describe(t.rec, "")),
					Cause:   "browser_file_upload needs an <input type=file> or a control that opens one",
					Actions: []llmerr.Action{llmerr.Call("browser_find", "look for the upload control", llmerr.A("text", "upload"))}}
			}
			if err := chooser.SetFiles(paths, playwright.FileChooserSetFilesOptions{Timeout: a.timeout}); err != nil {
				return err
			}
		}
		if len(paths) == 0 {
			a.res.addDid("Cleared the files of %s.", describe(t.rec, ""))
		} else {
			a.res.addDid("Chose %d file%s (%s) for %s.", len(paths), plural(len(paths), "s"), strings.Join(names, ", "), describe(t.rec, ""))
		}
		return nil
	}))
}

// fieldKindJS says how to fill an element: text, checkbox, radio, select,
// or "" when it takes no value.
const fieldKindJS = `(el) => {
  if (el instanceof HTMLSelectElement) return 'select';
  if (el instanceof HTMLInputElement) {
    if (el.type === 'checkbox' || el.type === 'radio') return el.type;
    if (['button', 'submit', 'reset', 'image', 'file', 'hidden'].includes(el.type)) return '';
    return 'text';
  }
  if (el instanceof HTMLTextAreaElement || el.isContentEditable) return 'text';
  const r = el.getAttribute('role');
  if (r === 'checkbox' || r === 'switch') return 'checkbox';
  if (r === 'radio') return 'radio';
  if (r === 'textbox' || r === 'searchbox' || r === 'combobox') return 'text';
  return '';
}`

func truthy(v string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "on", "1", "checked", "x":
		return true, true
	case "false", "no", "off", "0", "unchecked", "":
		return false, true
	}
	return false, false
}

func (s *Server) fillForm(ctx context.Context, c *call, in fillFormArgs) (*response, error) {
	if len(in.Fields) == 0 {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool,
			Message: "fields is empty.", Cause: "name at least one field with its ref and value",
			Actions: []llmerr.Action{llmerr.Call("browser_snapshot", "find the fields' refs")}}
	}
	// A plan's retry is this tool with the fields not yet filled, field i
	// changed as the plan found it should be.
	rest := func(i int, f formField) llmerr.Action {
		return c.step(llmerr.A("fields", append([]formField{f}, in.Fields[i+1:]...)))
	}
	// field is the index of the field being filled, for the error's words;
	// started is set once the pipeline has resolved the first field.
	field, started := 0, false
	fieldErr := func(err error) error {
		e, ok := llmerr.As(err)
		if !ok {
			e = llmerr.Classify(err, llmerr.Situation{Tool: c.tool, Ref: in.Fields[field].Ref, Timeout: s.cfg.ActionTimeout})
		}
		done := "no field was filled"
		if field > 0 {
			done = fmt.Sprintf("fields 1 to %d were filled", field)
		}
		e.Message = fmt.Sprintf("Field %d of %d (ref %s) failed, %s: %s", field+1, len(in.Fields), in.Fields[field].Ref, done, e.Message)
		e.Tool = c.tool
		return e
	}
	o := op{refs: []string{in.Fields[0].Ref}, retry: c.step(llmerr.A("fields", in.Fields)),
		again: func(_ int, ref string) llmerr.Action { return rest(0, formField{Ref: ref, Value: in.Fields[0].Value}) }}
	o.do = func(a *acting) error {
		started = true
		var lines []string
		for i, f := range in.Fields {
			field = i
			t := a.targets[0]
			if i > 0 {
				var err error
				t, err = c.resolve(a.role, f.Ref, func(ref string) llmerr.Action { return rest(i, formField{Ref: ref, Value: f.Value}) })
				if err != nil {
					return fieldErr(err)
				}
			}
			t.again = func(ref string) llmerr.Action { return rest(i, formField{Ref: ref, Value: f.Value}) }
			if s.recording() {
				a.locatorOf(t)
			}
			line, err := s.fillField(c, a, t, f, func(v string) llmerr.Action { return rest(i, formField{Ref: f.Ref, Value: v}) })
			if err != nil {
				if _, ok := llmerr.As(err); !ok {
					err = a.role.explain(err, c.tool, t, t.rec.URL, s.cfg.ActionTimeout)
				}
				return fieldErr(err)
			}
			typed := ""
			if d, ok := strings.CutPrefix(line, typedInto); ok {
				typed = f.Value
				// Text fields typed one after another share a line: what
				// went in is the text given (the change report says when a
				// field shows something else).
				if n := len(lines); n > 0 && strings.HasPrefix(lines[n-1], "- "+typedInto) {
					lines[n-1] += ", " + d
					line = ""
				}
			}
			if line != "" {
				lines = append(lines, "- "+line)
			}
			a.setValue(t.rec.Ref, typed)
			a.filled = &t.rec
		}
		a.res.addDid("Filled %d field%s:\n%s", len(in.Fields), plural(len(in.Fields), "s"), strings.Join(lines, "\n"))
		return nil
	}
	res, err := s.run(ctx, c, o)
	if e, ok := llmerr.As(err); ok && !started && e.Ref == in.Fields[0].Ref {
		// The first field's ref did not resolve: nothing was filled.
		return nil, fieldErr(e)
	}
	return res, err
}

// typedInto starts the line of a text field fill_form typed into.
const typedInto = "typed into "

// fillField fills one field as its kind asks and returns the line saying
// what it did; withValue is the retry with another value for this field.
func (s *Server) fillField(c *call, a *acting, t *target, f formField, withValue func(string) llmerr.Action) (string, error) {
	kind, err := evalAs[string](t.el, fieldKindJS)
	if err != nil {
		return "", err
	}
	switch kind {
	case "text":
		if err := t.el.Fill(f.Value, playwright.ElementHandleFillOptions{Timeout: a.timeout}); err != nil {
			return "", err
		}
		if a.srv.recording() {
			a.testCode("await %s.fill(%s);", a.locatorOf(t), jsString(f.Value))
			a.testCode("await expect(%s).toHaveValue(%s);", a.locatorOf(t), jsString(f.Value))
		}
		return typedInto + describe(t.rec, ""), nil
	case "checkbox", "radio":
		on, ok := truthy(f.Value)
		if !ok {
			step := withValue("true")
			step.Why = "with true or false for it"
			return "", &llmerr.Error{Code: llmerr.InvalidParams, Ref: f.Ref, Element: t.rec.Element(),
				Message: fmt.Sprintf("%q is not a value for a %s; use true or false.", f.Value, kind), Cause: "a checkbox or radio is checked or not",
				Actions: []llmerr.Action{step}}
		}
		if err := t.el.SetChecked(on, playwright.ElementHandleSetCheckedOptions{Timeout: a.timeout}); err != nil {
			return "", err
		}
		if a.srv.recording() {
			a.testCode("await %s.setChecked(%v);", a.locatorOf(t), on)
			if on {
				a.testCode("await expect(%s).toBeChecked();", a.locatorOf(t))
			} else {
				a.testCode("await expect(%s).not.toBeChecked();", a.locatorOf(t))
			}
		}
		return fmt.Sprintf("%s %s", map[bool]string{true: "checked", false: "unchecked"}[on], describe(t.rec, "")), nil
	case "select":
		opts, _, err := selectOptions(t.el)
		if err != nil {
			return "", err
		}
		if missing := missingOptions([]string{f.Value}, opts); len(missing) > 0 {
			return "", optionNotFound(c.tool, t, "", []string{f.Value}, missing, opts, func(values []string) llmerr.Action {
				return withValue(values[0])
			})
		}
		chosen, err := t.el.SelectOption(playwright.SelectOptionValues{ValuesOrLabels: &[]string{f.Value}},
			playwright.ElementHandleSelectOptionOptions{Timeout: a.timeout})
		if err != nil {
			return "", err
		}
		if a.srv.recording() && len(chosen) > 0 {
			a.testCode("await %s.selectOption(%s);", a.locatorOf(t), jsString(chosen[0]))
		}
		return fmt.Sprintf("selected %s in %s", quoteAll(labelsOf(chosen, opts)), describe(t.rec, "")), nil
	}
	return "", &llmerr.Error{Code: llmerr.ElementNotInteractable, Ref: f.Ref, Element: t.rec.Element(),
		Message: fmt.Sprintf("%s is not a field that takes a value.", describe(t.rec, "")),
		Cause:   "browser_fill_form fills text fields, checkboxes, radios and selects",
		Actions: []llmerr.Action{llmerr.Call("browser_click", "if it is a button, click it instead", llmerr.A("ref", f.Ref))}}
}
