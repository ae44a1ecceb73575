package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/llmerr"
)

type hoverArgs struct {
	Ref     string   `json:"ref" jsonschema:"Ref of the element from browser_snapshot"`
	Element string   `json:"element,omitempty" jsonschema:"Element description, for messages"`
	Role    roleName `json:"role,omitempty" jsonschema:"Role to act as (default: current)"`
}

type pressArgs struct {
	Key  string   `json:"key" jsonschema:"Key or combination, like Enter, ArrowDown, Control+A"`
	Role roleName `json:"role,omitempty" jsonschema:"Role to act as (default: current)"`
}

type dragArgs struct {
	StartRef string   `json:"startRef" jsonschema:"Ref of the element to drag"`
	EndRef   string   `json:"endRef" jsonschema:"Ref of the element to drop it on"`
	Role     roleName `json:"role,omitempty" jsonschema:"Role to act as (default: current)"`
}

type uploadArgs struct {
	Ref   string   `json:"ref" jsonschema:"Ref of a file input, or of the button that opens the file chooser"`
	Paths []string `json:"paths" jsonschema:"Absolute paths of the files; empty clears the selection"`
	Role  roleName `json:"role,omitempty" jsonschema:"Role to act as (default: current)"`
}

type formField struct {
	Ref   string `json:"ref" jsonschema:"Ref of the field"`
	Value string `json:"value" jsonschema:"Text, option label or value, or true/false for a checkbox or radio"`
}

type fillFormArgs struct {
	Fields []formField `json:"fields" jsonschema:"Fields to fill, in order"`
	Role   roleName    `json:"role,omitempty" jsonschema:"Role to act as (default: current)"`
}

func (s *Server) addInputTools() {
	addTool(s, &mcp.Tool{
		Name:        "browser_hover",
		Description: "Move the mouse over an element (ref), to open menus and tooltips. Reports what changed.",
		Annotations: &mcp.ToolAnnotations{Title: "Hover", DestructiveHint: ptr(false), OpenWorldHint: ptr(true)},
	}, s.hover)
	addTool(s, &mcp.Tool{
		Name:        "browser_press_key",
		Description: "Press a key or combination in the focused element of the current tab. Reports what changed.",
		Annotations: &mcp.ToolAnnotations{Title: "Press a key", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
	}, s.pressKey)
	addTool(s, &mcp.Tool{
		Name:        "browser_drag",
		Description: "Drag one element (startRef) onto another (endRef). Reports what changed.",
		Annotations: &mcp.ToolAnnotations{Title: "Drag and drop", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
	}, s.drag)
	addTool(s, &mcp.Tool{
		Name:        "browser_file_upload",
		Description: "Choose files for a file input or file chooser button (ref). Paths must be inside --allowed-dirs.",
		Annotations: &mcp.ToolAnnotations{Title: "Upload files", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
	}, s.fileUpload)
	addTool(s, &mcp.Tool{
		Name:        "browser_fill_form",
		Description: "Fill several fields in one call: text fields, checkboxes, radios and selects. Reports each field and what changed.",
		Annotations: &mcp.ToolAnnotations{Title: "Fill a form", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
	}, s.fillForm)
}

func (s *Server) hover(ctx context.Context, c *call, in hoverArgs) (*result, error) {
	return s.act(ctx, c, in.Ref, nil, func(t *target, timeout *float64) (string, error) {
		if err := t.el.Hover(playwright.ElementHandleHoverOptions{Timeout: timeout}); err != nil {
			return "", err
		}
		return fmt.Sprintf("Hovered over %s.", describe(t.rec, in.Element)), nil
	})
}

// keyNames are the key names Playwright knows besides single characters,
// by lower case.
var keyNames = func() map[string]string {
	m := map[string]string{}
	names := []string{"Backquote", "Minus", "Equal", "Backslash", "Backspace", "Tab", "Delete", "Escape",
		"ArrowDown", "End", "Enter", "Home", "Insert", "PageDown", "PageUp", "ArrowRight", "ArrowUp", "ArrowLeft",
		"Shift", "Control", "Alt", "Meta", "ShiftLeft", "ShiftRight", "ControlLeft", "ControlRight", "AltLeft", "AltRight",
		"MetaLeft", "MetaRight", "ControlOrMeta", "CapsLock", "Space", "NumLock", "ScrollLock", "Pause", "ContextMenu",
		"BracketLeft", "BracketRight", "Semicolon", "Quote", "Comma", "Period", "Slash", "IntlBackslash"}
	for i := 1; i <= 24; i++ {
		names = append(names, fmt.Sprintf("F%d", i))
	}
	for c := '0'; c <= '9'; c++ {
		names = append(names, "Digit"+string(c), "Numpad"+string(c))
	}
	for c := 'A'; c <= 'Z'; c++ {
		names = append(names, "Key"+string(c))
	}
	for _, n := range names {
		m[strings.ToLower(n)] = n
	}
	// What models write for the same keys.
	for alias, n := range map[string]string{"ctrl": "Control", "cmd": "Meta", "command": "Meta", "option": "Alt",
		"esc": "Escape", "return": "Enter", "del": "Delete", "up": "ArrowUp", "down": "ArrowDown", "left": "ArrowLeft",
		"right": "ArrowRight", "pgup": "PageUp", "pgdn": "PageDown", "space": " ", "spacebar": " "} {
		m[alias] = n
	}
	return m
}()

// normalizeKey checks a key or combination and writes it the way
// Playwright wants it; "" means it is not a key.
func normalizeKey(key string) (string, string) {
	if key == "" {
		return "", "the key is empty"
	}
	if utf8.RuneCountInString(key) == 1 {
		return key, ""
	}
	var parts []string
	rest := key
	for rest != "" {
		// A "+" right after a separator is the plus key itself.
		i := strings.Index(rest[1:], "+")
		part := rest
		if i >= 0 {
			part, rest = rest[:i+1], rest[i+2:]
		} else {
			rest = ""
		}
		parts = append(parts, part)
	}
	for i, p := range parts {
		if utf8.RuneCountInString(p) == 1 {
			continue
		}
		n, ok := keyNames[strings.ToLower(strings.TrimSpace(p))]
		if !ok {
			return "", fmt.Sprintf("%q is not a key name", p)
		}
		parts[i] = n
	}
	return strings.Join(parts, "+"), ""
}

func (s *Server) pressKey(ctx context.Context, c *call, in pressArgs) (*result, error) {
	key, why := normalizeKey(in.Key)
	if why != "" {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool,
			Message: fmt.Sprintf("%q is not a key Playwright can press: %s.", in.Key, why),
			Cause:   "keys are single characters or names like Enter, Escape, Tab, ArrowDown, PageUp, F5, Backspace, joined with + for combinations (Control+A, Shift+Tab)",
			Actions: []llmerr.Action{llmerr.Call(c.tool, "for example", llmerr.A("key", "Enter"))}}
	}
	r, tab, unlock, err := c.lockTab()
	if err != nil {
		return nil, err
	}
	defer unlock()
	before := pageState(tab)
	mark := tab.Mark()
	if err := tab.Page.Keyboard().Press(key); err != nil {
		return nil, llmerr.Classify(err, llmerr.Situation{Tool: c.tool, URL: before.url, Timeout: s.cfg.ActionTimeout})
	}
	t := &target{tab: tab, role: r, retry: &llmerr.Action{Tool: c.tool, Args: []llmerr.Arg{llmerr.A("key", key)}}}
	res := s.report(ctx, t, before, mark, fmt.Sprintf("Pressed %s.", key))
	if !tab.Closed() && pageState(tab).url != before.url {
		r.log.Frames()
		if err := r.checkSignedOut(pageState(tab).url); err != nil {
			return nil, err
		}
	}
	return s.withSnapshot(c, r, res), nil
}

func (s *Server) drag(ctx context.Context, c *call, in dragArgs) (*result, error) {
	r, unlock, err := c.lockRole()
	if err != nil {
		return nil, err
	}
	defer unlock()
	var ts [2]*target
	for i, ref := range []string{in.StartRef, in.EndRef} {
		t, err := r.resolve(ref)
		if err != nil {
			return nil, r.withCandidates(err, c.tool, nil)
		}
		ts[i] = t
	}
	from, to := ts[0], ts[1]
	if from.tab != to.tab {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool,
			Message: "startRef and endRef are in different tabs.", Cause: "a drag happens within one page",
			Actions: []llmerr.Action{llmerr.Call("browser_tabs", "see the tabs", llmerr.A("action", "list"))}}
	}
	timeout := playwright.Float(float64(s.cfg.ActionTimeout.Milliseconds()))
	before := pageState(from.tab)
	mark := from.tab.Mark()
	fail := func(err error, t *target) error {
		e := llmerr.Classify(err, llmerr.Situation{Tool: c.tool, Ref: t.rec.Ref, Element: t.rec.Element(), URL: before.url, Timeout: s.cfg.ActionTimeout})
		if e.Code == llmerr.ActionTimeout || e.Code == llmerr.ElementNotInteractable {
			r.diagnose(e, t, c.tool, []llmerr.Arg{llmerr.A("startRef", in.StartRef), llmerr.A("endRef", in.EndRef)})
		}
		return e
	}
	center := func(t *target) (float64, float64, error) {
		if err := t.el.ScrollIntoViewIfNeeded(playwright.ElementHandleScrollIntoViewIfNeededOptions{Timeout: timeout}); err != nil {
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
	x0, y0, err := center(from)
	if err != nil {
		return nil, fail(err, from)
	}
	mouse := from.tab.Page.Mouse()
	if err := mouse.Move(x0, y0); err != nil {
		return nil, fail(err, from)
	}
	if err := mouse.Down(); err != nil {
		return nil, fail(err, from)
	}
	// The target's position is read after the press: the page may have
	// moved things when the drag began.
	x1, y1, err := center(to)
	if err != nil {
		_ = mouse.Up()
		return nil, fail(err, to)
	}
	if err := mouse.Move(x1, y1, playwright.MouseMoveOptions{Steps: playwright.Int(10)}); err != nil {
		_ = mouse.Up()
		return nil, fail(err, to)
	}
	if err := mouse.Up(); err != nil {
		return nil, fail(err, to)
	}
	from.retry = &llmerr.Action{Tool: c.tool, Args: []llmerr.Arg{llmerr.A("startRef", in.StartRef), llmerr.A("endRef", in.EndRef)}}
	res := s.report(ctx, from, before, mark, fmt.Sprintf("Dragged %s onto %s.", describe(from.rec, ""), describe(to.rec, "")))
	return s.withSnapshot(c, r, res), nil
}

// uploadDirs returns the directories uploads may come from: --allowed-dirs,
// or the working directory and the temporary directory.
func (s *Server) uploadDirs() []string {
	dirs := s.cfg.UploadDirs
	if len(dirs) == 0 {
		wd, _ := os.Getwd()
		dirs = []string{wd, os.TempDir()}
	}
	var out []string
	for _, d := range dirs {
		if d == "" {
			continue
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		out = append(out, abs)
	}
	return out
}

// checkUpload resolves each path (symlinks included) and refuses one that
// is missing, a directory, or outside every allowed directory.
func (s *Server) checkUpload(tool string, paths []string) ([]string, error) {
	dirs := s.uploadDirs()
	bad := func(p, why string) error {
		return &llmerr.Error{Code: llmerr.InvalidParams, Tool: tool,
			Message: fmt.Sprintf("Cannot upload %s: %s.", p, why),
			Cause:   "files must exist inside the allowed directories: " + strings.Join(dirs, ", ") + " (set with --allowed-dirs)",
			Actions: []llmerr.Action{llmerr.Call(tool, "with files from an allowed directory", llmerr.A("ref", "…"), llmerr.A("paths", []string{filepath.Join(dirs[0], "file.txt")}))},
			Details: map[string]any{"allowedDirs": dirs}}
	}
	var out []string
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			return nil, bad(p, "the path is not absolute")
		}
		real, err := filepath.EvalSymlinks(filepath.Clean(p))
		if err != nil {
			return nil, bad(p, "there is no such file")
		}
		st, err := os.Stat(real)
		if err != nil {
			return nil, bad(p, "it cannot be read")
		}
		if st.IsDir() {
			return nil, bad(p, "it is a directory")
		}
		inside := slices.ContainsFunc(dirs, func(d string) bool {
			rel, err := filepath.Rel(d, real)
			return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
		})
		if !inside {
			return nil, bad(p, "it is outside the allowed directories")
		}
		out = append(out, real)
	}
	return out, nil
}

// isFileInputJS reports whether the element is an <input type=file>.
const isFileInputJS = `(el) => el instanceof HTMLInputElement && el.type === 'file'`

func (s *Server) fileUpload(ctx context.Context, c *call, in uploadArgs) (*result, error) {
	paths, err := s.checkUpload(c.tool, in.Paths)
	if err != nil {
		return nil, err
	}
	return s.act(ctx, c, in.Ref, []llmerr.Arg{llmerr.A("paths", in.Paths)}, func(t *target, timeout *float64) (string, error) {
		names := make([]string, len(paths))
		for i, p := range paths {
			names[i] = filepath.Base(p)
		}
		what := fmt.Sprintf("Chose %d file%s (%s) for %s.", len(paths), plural(len(paths), "s"), strings.Join(names, ", "), describe(t.rec, ""))
		if len(paths) == 0 {
			what = fmt.Sprintf("Cleared the files of %s.", describe(t.rec, ""))
		}
		if v, err := t.el.Evaluate(isFileInputJS); err == nil && v == true {
			return what, t.el.SetInputFiles(paths, playwright.ElementHandleSetInputFilesOptions{Timeout: timeout})
		}
		// A button that opens the file chooser: click it and answer.
		chooser, err := t.tab.Page.ExpectFileChooser(func() error {
			return t.el.Click(playwright.ElementHandleClickOptions{Timeout: timeout})
		}, playwright.PageExpectFileChooserOptions{Timeout: timeout})
		if err != nil {
			return "", &llmerr.Error{Code: llmerr.ElementNotInteractable, Tool: c.tool, Ref: in.Ref, Element: t.rec.Element(),
				Message: fmt.Sprintf("%s is not a file input, and clicking it opened no file chooser.", describe(t.rec, "")),
				Cause:   "browser_file_upload needs an <input type=file> or a control that opens one",
				Actions: []llmerr.Action{llmerr.Call("browser_find", "look for the upload control", llmerr.A("text", "upload"))}}
		}
		return what, chooser.SetFiles(paths, playwright.FileChooserSetFilesOptions{Timeout: timeout})
	})
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

func (s *Server) fillForm(ctx context.Context, c *call, in fillFormArgs) (*result, error) {
	if len(in.Fields) == 0 {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool,
			Message: "fields is empty.", Cause: "name at least one field with its ref and value",
			Actions: []llmerr.Action{llmerr.Call("browser_snapshot", "find the fields' refs")}}
	}
	r, unlock, err := c.lockRole()
	if err != nil {
		return nil, err
	}
	defer unlock()
	timeout := playwright.Float(float64(s.cfg.ActionTimeout.Milliseconds()))
	var lines []string
	var first *target
	var before state
	var startMark browser.Mark
	remaining := func(i int) []formField { return in.Fields[i:] }
	fieldErr := func(i int, err error) error {
		e, ok := llmerr.As(err)
		if !ok {
			e = llmerr.Classify(err, llmerr.Situation{Tool: c.tool, Ref: in.Fields[i].Ref, Timeout: s.cfg.ActionTimeout})
		}
		done := "no field was filled"
		if i > 0 {
			done = fmt.Sprintf("fields 1 to %d were filled", i)
		}
		e.Message = fmt.Sprintf("Field %d of %d (ref %s) failed, %s: %s", i+1, len(in.Fields), in.Fields[i].Ref, done, e.Message)
		e.Tool = c.tool
		// The retry is this tool with the fields not yet filled, the
		// failed one's ref replaced where the plan found its new one.
		rest := remaining(i)
		for k, a := range e.Actions {
			if a.Tool == c.tool {
				if ref, ok := argOf(a, "ref"); ok {
					fixed := append([]formField{{Ref: ref, Value: rest[0].Value}}, rest[1:]...)
					e.Actions[k] = llmerr.Action{Tool: c.tool, Why: a.Why, Args: []llmerr.Arg{llmerr.A("fields", fixed)}}
				}
			}
		}
		return e
	}
	for i, f := range in.Fields {
		t, err := r.resolve(f.Ref)
		if err != nil {
			return nil, fieldErr(i, r.withCandidates(err, c.tool, nil))
		}
		if first == nil {
			// What the form's fields change is reported once, at the end.
			first, before, startMark = t, pageState(t.tab), t.tab.Mark()
		}
		kind, _ := t.el.Evaluate(fieldKindJS)
		k, _ := kind.(string)
		var line string
		switch k {
		case "text":
			err = t.el.Fill(f.Value, playwright.ElementHandleFillOptions{Timeout: timeout})
			line = fmt.Sprintf("%s: typed %d characters", describe(t.rec, ""), utf8.RuneCountInString(f.Value))
		case "checkbox", "radio":
			on, ok := truthy(f.Value)
			if !ok {
				return nil, fieldErr(i, &llmerr.Error{Code: llmerr.InvalidParams, Ref: f.Ref, Element: t.rec.Element(),
					Message: fmt.Sprintf("%q is not a value for a %s; use true or false.", f.Value, k), Cause: "a checkbox or radio is checked or not",
					Actions: []llmerr.Action{llmerr.Call(c.tool, "with true or false for it", llmerr.A("fields", []formField{{Ref: f.Ref, Value: "true"}}))}})
			}
			err = t.el.SetChecked(on, playwright.ElementHandleSetCheckedOptions{Timeout: timeout})
			line = fmt.Sprintf("%s: %s", describe(t.rec, ""), map[bool]string{true: "checked", false: "unchecked"}[on])
		case "select":
			raw, _ := t.el.Evaluate(optionsJS)
			opts := parseOptions(raw)
			if missing := missingOptions([]string{f.Value}, opts); len(missing) > 0 {
				e := optionNotFound(c.tool, t, selectArgs{Ref: f.Ref, Values: []string{f.Value}}, missing, opts)
				return nil, fieldErr(i, e)
			}
			var chosen []string
			chosen, err = t.el.SelectOption(playwright.SelectOptionValues{ValuesOrLabels: &[]string{f.Value}},
				playwright.ElementHandleSelectOptionOptions{Timeout: timeout})
			line = fmt.Sprintf("%s: selected %s", describe(t.rec, ""), quoteAll(labelsOf(chosen, opts)))
		default:
			return nil, fieldErr(i, &llmerr.Error{Code: llmerr.ElementNotInteractable, Ref: f.Ref, Element: t.rec.Element(),
				Message: fmt.Sprintf("%s is not a field that takes a value.", describe(t.rec, "")),
				Cause:   "browser_fill_form fills text fields, checkboxes, radios and selects",
				Actions: []llmerr.Action{llmerr.Call("browser_click", "if it is a button, click it instead", llmerr.A("ref", f.Ref))}})
		}
		if err != nil {
			e := llmerr.Classify(err, llmerr.Situation{Tool: c.tool, Ref: f.Ref, Element: t.rec.Element(), URL: t.rec.URL, Timeout: s.cfg.ActionTimeout})
			if e.Code == llmerr.ActionTimeout || e.Code == llmerr.ElementNotInteractable {
				r.diagnose(e, t, c.tool, nil)
			}
			return nil, fieldErr(i, e)
		}
		lines = append(lines, "- "+line)
	}
	res := s.report(ctx, first, before, startMark, fmt.Sprintf("Filled %d field%s:\n%s", len(in.Fields), plural(len(in.Fields), "s"), strings.Join(lines, "\n")))
	return s.withSnapshot(c, r, res), nil
}

// argOf returns the value of a plan step's argument.
func argOf(a llmerr.Action, name string) (string, bool) {
	for _, x := range a.Args {
		if x.Name == name {
			s, ok := x.Value.(string)
			return s, ok
		}
	}
	return "", false
}

// parseOptions reads optionsJS's answer: [value, label] pairs.
func parseOptions(raw any) [][2]string {
	var opts [][2]string
	if s, ok := raw.(string); ok && s != "" {
		_ = json.Unmarshal([]byte(s), &opts)
	}
	return opts
}
