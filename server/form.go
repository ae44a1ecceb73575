package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/llmerr"
)

type selectArgs struct {
	Ref     string   `json:"ref" jsonschema:"Ref of a select element from browser_snapshot"`
	Values  []string `json:"values" jsonschema:"Options by value or label; several for a multiple select"`
	Element string   `json:"element,omitempty" jsonschema:"Element description, for messages"`
	Role    roleName `json:"role,omitempty" jsonschema:"Role to act as (default: current)"`
}

func (s *Server) addFormTools() {
	addTool(s, &mcp.Tool{
		Name:        "browser_select_option",
		Description: "Select options of a select element by value or label. Reports what changed.",
		Annotations: &mcp.ToolAnnotations{Title: "Select options", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
	}, s.selectOption)
}

// optionsJS lists a select's options as [value, label] pairs, as a JSON
// string (the page's Array methods may be replaced).
const optionsJS = `(s) => {
  if (!(s instanceof HTMLSelectElement)) return '';
  let out = '[';
  for (let i = 0; i < s.options.length; i++) {
    const o = s.options[i];
    out += (i ? ',' : '') + '[' + JSON.stringify(o.value) + ',' + JSON.stringify(o.label || o.text) + ']';
  }
  return out + ']';
}`

func (s *Server) selectOption(ctx context.Context, c *call, in selectArgs) (*result, error) {
	if len(in.Values) == 0 {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool, Ref: in.Ref,
			Message: "values is empty: name at least one option.",
			Cause:   "no option was given",
			Actions: []llmerr.Action{llmerr.Call("browser_snapshot", "read the select's options (they follow its line)")}}
	}
	return s.act(ctx, c, in.Ref, []llmerr.Arg{llmerr.A("values", in.Values)}, func(t *target, timeout *float64) (string, error) {
		// Check the options first: Playwright would wait the whole timeout
		// for an option that is not there.
		raw, err := t.el.Evaluate(optionsJS)
		if err != nil {
			return "", err
		}
		list, _ := raw.(string)
		if list == "" {
			return "", &llmerr.Error{Code: llmerr.ElementNotInteractable, Tool: c.tool, Ref: in.Ref, Element: t.rec.Element(),
				Message: fmt.Sprintf("%s is not a native select.", describe(t.rec, in.Element)),
				Cause:   "browser_select_option works on <select> elements; custom dropdowns open with a click",
				Actions: []llmerr.Action{llmerr.Call("browser_click", "open the dropdown, then click the option in a new snapshot", llmerr.A("ref", in.Ref))}}
		}
		opts := parseOptions(list)
		if missing := missingOptions(in.Values, opts); len(missing) > 0 {
			return "", optionNotFound(c.tool, t, in, missing, opts)
		}
		chosen, err := t.el.SelectOption(playwright.SelectOptionValues{ValuesOrLabels: &in.Values},
			playwright.ElementHandleSelectOptionOptions{Timeout: timeout})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Selected %s in %s.", quoteAll(labelsOf(chosen, opts)), describe(t.rec, in.Element)), nil
	})
}

func missingOptions(want []string, opts [][2]string) []string {
	var missing []string
	for _, w := range want {
		found := false
		for _, o := range opts {
			if o[0] == w || o[1] == w {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, w)
		}
	}
	return missing
}

// optionNotFound lists the options there are and, when one is a near match
// (case, spacing, part of the label), makes it the retry.
func optionNotFound(tool string, t *target, in selectArgs, missing []string, opts [][2]string) *llmerr.Error {
	var labels []string
	for _, o := range opts {
		labels = append(labels, o[1])
	}
	shown := labels
	if len(shown) > 20 {
		shown = shown[:20]
	}
	e := &llmerr.Error{Code: llmerr.OptionNotFound, Tool: tool, Ref: in.Ref, Element: t.rec.Element(),
		Message: fmt.Sprintf("%s has no option %s.", describe(t.rec, in.Element), quoteAll(missing)),
		Cause:   fmt.Sprintf("its options are %s", quoteAll(shown)),
		Details: map[string]any{"options": labels, "missing": missing}}
	if len(labels) > len(shown) {
		e.Cause += fmt.Sprintf(" and %d more", len(labels)-len(shown))
	}
	fixed := make([]string, 0, len(in.Values))
	for _, v := range in.Values {
		if near := nearOption(v, labels); near != "" {
			fixed = append(fixed, near)
		} else if !contains(missing, v) {
			fixed = append(fixed, v)
		}
	}
	if len(fixed) == len(in.Values) {
		e.Actions = []llmerr.Action{llmerr.Call(tool, "with the option as the page spells it", llmerr.A("ref", in.Ref), llmerr.A("values", fixed))}
	} else {
		e.Actions = []llmerr.Action{llmerr.Call(tool, "with one of the options listed above", llmerr.A("ref", in.Ref), llmerr.A("values", []string{labels[0]}))}
	}
	return e
}

func nearOption(v string, labels []string) string {
	lv := strings.ToLower(strings.TrimSpace(v))
	for _, l := range labels {
		if strings.ToLower(strings.TrimSpace(l)) == lv {
			return l
		}
	}
	var hit string
	for _, l := range labels {
		if lv != "" && strings.Contains(strings.ToLower(l), lv) {
			if hit != "" {
				return "" // ambiguous
			}
			hit = l
		}
	}
	return hit
}

func labelsOf(values []string, opts [][2]string) []string {
	out := make([]string, 0, len(values))
	for _, v := range values {
		label := v
		for _, o := range opts {
			if o[0] == v {
				label = o[1]
				break
			}
		}
		out = append(out, label)
	}
	return out
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
