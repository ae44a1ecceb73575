package server

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// A reader of the locator code browser_generate_locator returns, so tests
// act through exactly the locator a user would paste into a Playwright
// test. It reads the subset the server writes (see locator.go and
// tool_structure.go) and rejects anything else.

// locatorCall is one method call of a locator chain; each argument is a
// string or an object literal whose values are strings or booleans.
type locatorCall struct {
	method string
	args   []any
}

// parseLocatorCode reads code like
// page.getByRole('listitem').filter({ hasText: 'Team' }).getByRole('button')
// into its calls, after "page".
func parseLocatorCode(code string) ([]locatorCall, error) {
	p := &codeReader{src: code}
	if !p.word("page") {
		return nil, fmt.Errorf("locator %q does not start with page", code)
	}
	var calls []locatorCall
	for p.skip(); p.i < len(p.src); p.skip() {
		if !p.eat('.') {
			return nil, p.errorf("want '.'")
		}
		name := p.ident()
		if name == "" {
			return nil, p.errorf("want a method name")
		}
		if !p.eat('(') {
			return nil, p.errorf("want '(' after %s", name)
		}
		var args []any
		for !p.eat(')') {
			if len(args) > 0 && !p.eat(',') {
				return nil, p.errorf("want ',' or ')'")
			}
			v, err := p.value(true)
			if err != nil {
				return nil, err
			}
			args = append(args, v)
		}
		calls = append(calls, locatorCall{name, args})
	}
	if len(calls) == 0 {
		return nil, fmt.Errorf("locator %q calls nothing on page", code)
	}
	return calls, nil
}

// codeReader reads JavaScript literals from src, from position i on.
type codeReader struct {
	src string
	i   int
}

func (p *codeReader) errorf(format string, args ...any) error {
	return fmt.Errorf("locator %q at offset %d: %s", p.src, p.i, fmt.Sprintf(format, args...))
}

func (p *codeReader) skip() {
	for p.i < len(p.src) && strings.ContainsRune(" \t\n", rune(p.src[p.i])) {
		p.i++
	}
}

func (p *codeReader) eat(c byte) bool {
	p.skip()
	if p.i < len(p.src) && p.src[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *codeReader) ident() string {
	p.skip()
	start := p.i
	for p.i < len(p.src) {
		c := p.src[p.i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || p.i > start && c >= '0' && c <= '9') {
			break
		}
		p.i++
	}
	return p.src[start:p.i]
}

func (p *codeReader) word(w string) bool {
	start := p.i
	if p.ident() == w {
		return true
	}
	p.i = start
	return false
}

// value reads a quoted string, true or false, or (when objects is set) an
// object literal of those.
func (p *codeReader) value(objects bool) (any, error) {
	p.skip()
	if p.i >= len(p.src) {
		return nil, p.errorf("want a value")
	}
	switch c := p.src[p.i]; {
	case c == '\'' || c == '"':
		return p.str()
	case c == '{' && objects:
		p.i++
		obj := map[string]any{}
		for !p.eat('}') {
			if len(obj) > 0 && !p.eat(',') {
				return nil, p.errorf("want ',' or '}'")
			}
			if p.eat('}') { // a trailing comma
				break
			}
			key := p.ident()
			if key == "" || !p.eat(':') {
				return nil, p.errorf("want key: value")
			}
			if _, dup := obj[key]; dup {
				return nil, p.errorf("%s given twice", key)
			}
			v, err := p.value(false)
			if err != nil {
				return nil, err
			}
			obj[key] = v
		}
		return obj, nil
	case p.word("true"):
		return true, nil
	case p.word("false"):
		return false, nil
	}
	return nil, p.errorf("want a string, a boolean or an object")
}

// str reads a quoted string with the escapes jsString writes.
func (p *codeReader) str() (string, error) {
	q := p.src[p.i]
	p.i++
	var b strings.Builder
	for p.i < len(p.src) {
		c := p.src[p.i]
		p.i++
		switch c {
		case q:
			return b.String(), nil
		case '\\':
			if p.i >= len(p.src) {
				return "", p.errorf("unterminated string")
			}
			e := p.src[p.i]
			p.i++
			switch e {
			case '\\', '\'', '"':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			default:
				return "", p.errorf(`unknown escape \%c`, e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", p.errorf("unterminated string")
}

// locatorScope is where the next call of a chain applies: the page, a
// locator or a frame locator (exactly one is set). Playwright gives each its
// own option types, hence the switches.
type locatorScope struct {
	page  playwright.Page
	loc   playwright.Locator
	frame playwright.FrameLocator
}

// locatorStep is one checked call of a chain, ready to apply.
type locatorStep func(locatorScope) locatorScope

// The kinds of scope a chain passes through.
const (
	onPage = iota
	onLocator
	onFrame
)

// compileLocatorCode parses code and checks every call against the subset
// the server writes, and against what it is called on, without a page:
// code outside the subset is an error, never a guess.
func compileLocatorCode(code string) ([]locatorStep, error) {
	calls, err := parseLocatorCode(code)
	if err != nil {
		return nil, err
	}
	var steps []locatorStep
	kind := onPage
	for _, c := range calls {
		step, next, err := compileCall(c, kind)
		if err != nil {
			return nil, fmt.Errorf("locator %q: %s: %w", code, c.method, err)
		}
		steps, kind = append(steps, step), next
	}
	if kind != onLocator {
		return nil, fmt.Errorf("locator %q ends on a frame, not an element", code)
	}
	return steps, nil
}

// locatorFromCode turns locator code into the playwright-go locator it
// stands for on page.
func locatorFromCode(page playwright.Page, code string) (playwright.Locator, error) {
	steps, err := compileLocatorCode(code)
	if err != nil {
		return nil, err
	}
	s := locatorScope{page: page}
	for _, step := range steps {
		s = step(s)
	}
	return s.loc, nil
}

// callArgs checks c's arguments: one string first when wantString, then
// at most one options object with only the keys in opts, of their kinds.
func callArgs(c locatorCall, wantString bool, opts map[string]reflect.Kind) (string, map[string]any, error) {
	args := c.args
	var s string
	if wantString {
		if len(args) == 0 {
			return "", nil, fmt.Errorf("wants a string argument")
		}
		v, ok := args[0].(string)
		if !ok {
			return "", nil, fmt.Errorf("first argument is %T, not a string", args[0])
		}
		s, args = v, args[1:]
	}
	o := map[string]any{}
	if len(args) > 0 {
		m, ok := args[0].(map[string]any)
		if !ok || opts == nil {
			return "", nil, fmt.Errorf("unexpected argument %v", args[0])
		}
		for k, v := range m {
			if kind, known := opts[k]; !known || reflect.TypeOf(v).Kind() != kind {
				return "", nil, fmt.Errorf("option %s: %v is not supported", k, v)
			}
		}
		o, args = m, args[1:]
	}
	if len(args) > 0 {
		return "", nil, fmt.Errorf("%d arguments too many", len(args))
	}
	return s, o, nil
}

// compileCall checks one call made on a scope of kind and returns it as a
// step, with the kind of scope it leads to.
func compileCall(c locatorCall, kind int) (locatorStep, int, error) {
	str, bl := reflect.String, reflect.Bool
	if kind == onFrame && (c.method == "filter" || c.method == "contentFrame") {
		return nil, 0, fmt.Errorf("not a method of a frame locator")
	}
	switch c.method {
	case "getByTestId":
		id, _, err := callArgs(c, true, nil)
		return func(s locatorScope) locatorScope {
			var x interface{ GetByTestId(any) playwright.Locator } = s.page
			if s.loc != nil {
				x = s.loc
			} else if s.frame != nil {
				x = s.frame
			}
			return locatorScope{loc: x.GetByTestId(id)}
		}, onLocator, err
	case "locator":
		css, _, err := callArgs(c, true, nil)
		return func(s locatorScope) locatorScope {
			switch {
			case s.loc != nil:
				return locatorScope{loc: s.loc.Locator(css)}
			case s.frame != nil:
				return locatorScope{loc: s.frame.Locator(css)}
			}
			return locatorScope{loc: s.page.Locator(css)}
		}, onLocator, err
	case "getByRole":
		role, o, err := callArgs(c, true, map[string]reflect.Kind{"name": str, "exact": bl})
		r, name, exact := playwright.AriaRole(role), o["name"], boolOpt(o["exact"])
		return func(s locatorScope) locatorScope {
			switch {
			case s.loc != nil:
				return locatorScope{loc: s.loc.GetByRole(r, playwright.LocatorGetByRoleOptions{Name: name, Exact: exact})}
			case s.frame != nil:
				return locatorScope{loc: s.frame.GetByRole(r, playwright.FrameLocatorGetByRoleOptions{Name: name, Exact: exact})}
			}
			return locatorScope{loc: s.page.GetByRole(r, playwright.PageGetByRoleOptions{Name: name, Exact: exact})}
		}, onLocator, err
	case "getByLabel":
		text, o, err := callArgs(c, true, map[string]reflect.Kind{"exact": bl})
		exact := boolOpt(o["exact"])
		return func(s locatorScope) locatorScope {
			switch {
			case s.loc != nil:
				return locatorScope{loc: s.loc.GetByLabel(text, playwright.LocatorGetByLabelOptions{Exact: exact})}
			case s.frame != nil:
				return locatorScope{loc: s.frame.GetByLabel(text, playwright.FrameLocatorGetByLabelOptions{Exact: exact})}
			}
			return locatorScope{loc: s.page.GetByLabel(text, playwright.PageGetByLabelOptions{Exact: exact})}
		}, onLocator, err
	case "getByText":
		text, o, err := callArgs(c, true, map[string]reflect.Kind{"exact": bl})
		exact := boolOpt(o["exact"])
		return func(s locatorScope) locatorScope {
			switch {
			case s.loc != nil:
				return locatorScope{loc: s.loc.GetByText(text, playwright.LocatorGetByTextOptions{Exact: exact})}
			case s.frame != nil:
				return locatorScope{loc: s.frame.GetByText(text, playwright.FrameLocatorGetByTextOptions{Exact: exact})}
			}
			return locatorScope{loc: s.page.GetByText(text, playwright.PageGetByTextOptions{Exact: exact})}
		}, onLocator, err
	case "filter":
		_, o, err := callArgs(c, false, map[string]reflect.Kind{"hasText": str})
		if err == nil && (kind != onLocator || o["hasText"] == nil) {
			err = fmt.Errorf("wants a locator and { hasText }")
		}
		return func(s locatorScope) locatorScope {
			return locatorScope{loc: s.loc.Filter(playwright.LocatorFilterOptions{HasText: o["hasText"]})}
		}, onLocator, err
	case "contentFrame":
		_, _, err := callArgs(c, false, nil)
		if err == nil && kind != onLocator {
			err = fmt.Errorf("wants a locator of an iframe")
		}
		return func(s locatorScope) locatorScope {
			return locatorScope{frame: s.loc.ContentFrame()}
		}, onFrame, err
	}
	return nil, 0, fmt.Errorf("not a method the server writes")
}

func boolOpt(v any) *bool {
	if b, ok := v.(bool); ok {
		return playwright.Bool(b)
	}
	return nil
}

func TestParseLocatorCode(t *testing.T) {
	t.Parallel()
	good := []struct {
		code string
		want []locatorCall
	}{
		{"page.getByTestId('checkout')", []locatorCall{{"getByTestId", []any{"checkout"}}}},
		{`page.locator('[data-cy="help"]')`, []locatorCall{{"locator", []any{`[data-cy="help"]`}}}},
		{`page.getByText('It\'s a \\ "test"\n', { exact: true })`,
			[]locatorCall{{"getByText", []any{"It's a \\ \"test\"\n", map[string]any{"exact": true}}}}},
		{"page.getByRole('listitem').filter({ hasText: 'Team' }).getByRole('button', { name: 'Buy', exact: true })",
			[]locatorCall{{"getByRole", []any{"listitem"}}, {"filter", []any{map[string]any{"hasText": "Team"}}},
				{"getByRole", []any{"button", map[string]any{"name": "Buy", "exact": true}}}}},
		{`page.locator('iframe[title="Payment"]').contentFrame().getByLabel('Card', { exact: false })`,
			[]locatorCall{{"locator", []any{`iframe[title="Payment"]`}}, {"contentFrame", nil},
				{"getByLabel", []any{"Card", map[string]any{"exact": false}}}}},
	}
	for _, tc := range good {
		got, err := parseLocatorCode(tc.code)
		if err != nil {
			t.Errorf("parseLocatorCode(%q): %v", tc.code, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseLocatorCode(%q) = %#v, want %#v", tc.code, got, tc.want)
		}
	}
	for _, code := range []string{
		"", "page", "frame.getByRole('button')", "page.getByRole(button)", "page.getByRole('button'",
		"page.getByRole('button') x", "page.getByText('a\\tb')", "page.getByText('open", "page.getByRole('a', { name 'b' })",
		"page.getByRole('a', { name: 'b', name: 'c' })", "page..getByRole('a')", "page.getByRole('a', { exact: 1 })",
	} {
		if calls, err := parseLocatorCode(code); err == nil {
			t.Errorf("parseLocatorCode(%q) = %v, want an error", code, calls)
		}
	}
	// Code that parses but is not what the server writes is refused too.
	for _, code := range []string{
		"page.getByRole('button').nth(1)", "page.getByTestId('a', { exact: true })", "page.getByRole('button', { hasText: 'x' })",
		"page.filter({ hasText: 'x' })", "page.contentFrame()", "page.locator('iframe').contentFrame()",
		"page.getByRole('button', { name: true })", "page.getByTestId()", "page.locator('a').filter({})",
	} {
		if _, err := compileLocatorCode(code); err == nil {
			t.Errorf("compileLocatorCode(%q) succeeded, want an error", code)
		}
	}
}
