package server

import (
	"fmt"
	"slices"
	"strings"

	"github.com/samber/lo"

	"github.com/retrace-dev/retrace/llmerr"
)

// option is one option of a select: its value and its label.
type option struct{ value, label string }

// optionsJS lists a select's options as [value, label] pairs, as a JSON
// string; null when the element is not a select.
const optionsJS = `(s) => {
  if (!(s instanceof HTMLSelectElement)) return 'null';
  let out = '[';
  for (let i = 0; i < s.options.length; i++) {
    const o = s.options[i];
    out += (i ? ',' : '') + '[' + JSON.stringify(o.value) + ',' + JSON.stringify(o.label || o.text) + ']';
  }
  return out + ']';
}`

// selectOptions reads a select's options; ok is false when el is not a
// native select.
func selectOptions(el evaluator) (opts []option, ok bool, err error) {
	pairs, err := evalJSON[[][2]string](el, optionsJS)
	if err != nil || pairs == nil {
		return nil, false, err
	}
	return lo.Map(pairs, func(p [2]string, _ int) option { return option{p[0], p[1]} }), true, nil
}

// missingOptions returns the wanted values that are neither an option's
// value nor its label.
func missingOptions(want []string, opts []option) []string {
	return lo.Reject(want, func(w string, _ int) bool {
		return slices.ContainsFunc(opts, func(o option) bool { return o.value == w || o.label == w })
	})
}

// optionNotFound lists the options there are and, when every value has a
// near match (case, spacing, part of the label), makes again with the
// corrected values the first step.
func optionNotFound(tool string, t *target, human string, values, missing []string, opts []option, again func(values []string) llmerr.Action) *llmerr.Error {
	labels := lo.Map(opts, func(o option, _ int) string { return o.label })
	shown := labels[:min(20, len(labels))]
	e := &llmerr.Error{Code: llmerr.OptionNotFound, Tool: tool, Ref: t.rec.Ref, Element: t.rec.Element(),
		Message: fmt.Sprintf("%s has no option %s.", describe(t.rec, human), quoteAll(missing)),
		Cause:   fmt.Sprintf("its options are %s", quoteAll(shown)),
		Details: map[string]any{"options": labels, "missing": missing}}
	if len(labels) > len(shown) {
		e.Cause += fmt.Sprintf(" and %d more", len(labels)-len(shown))
	}
	fixed := make([]string, 0, len(values))
	for _, v := range values {
		// Only what is missing is corrected: a value the select has stays.
		if !slices.Contains(missing, v) {
			fixed = append(fixed, v)
		} else if near := nearOption(v, labels); near != "" {
			fixed = append(fixed, near)
		}
	}
	var step llmerr.Action
	switch {
	case len(fixed) == len(values):
		step = again(fixed)
		step.Why = "with the option as the page spells it"
	case len(labels) > 0:
		step = again(labels[:1])
		step.Why = "with one of the options listed above"
	default:
		step = llmerr.Call("browser_snapshot", "the select has no options yet: see what the page shows")
	}
	e.Actions = []llmerr.Action{step}
	return e
}

// nearOption returns the one label that v names but for case and spacing,
// or that contains v; "" when there is none or several.
func nearOption(v string, labels []string) string {
	lv := strings.ToLower(strings.TrimSpace(v))
	if i := slices.IndexFunc(labels, func(l string) bool { return strings.ToLower(strings.TrimSpace(l)) == lv }); i >= 0 {
		return labels[i]
	}
	if lv == "" {
		return ""
	}
	hits := lo.Filter(labels, func(l string, _ int) bool { return strings.Contains(strings.ToLower(l), lv) })
	if len(hits) != 1 {
		return ""
	}
	return hits[0]
}

// labelsOf names the chosen values by their labels.
func labelsOf(values []string, opts []option) []string {
	return lo.Map(values, func(v string, _ int) string {
		if i := slices.IndexFunc(opts, func(o option) bool { return o.value == v }); i >= 0 {
			return opts[i].label
		}
		return v
	})
}
