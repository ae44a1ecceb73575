package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/snapshot"
)

type evaluateArgs struct {
	Function string `json:"function" jsonschema:"JavaScript function, like () => document.title, or (el) => el.value with ref"`
	Ref      string `json:"ref,omitempty" jsonschema:"Pass this element to the function"`
	roleArg
}

// maxEvalResult bounds the JSON returned to the model, in characters.
const maxEvalResult = 20000

func (s *Server) addEvaluateTools() {
	if s.cfg.NoEvaluate {
		return
	}
	addTool(s, def("browser_evaluate", "Evaluate JavaScript", destructive|openWorld, "Run a JavaScript function in the page (or on an element, ref); returns its result as JSON."), s.evaluate)
}

func (s *Server) evaluate(ctx context.Context, c *call, in evaluateArgs) (*response, error) {
	fn := strings.TrimSpace(in.Function)
	if fn == "" {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool,
			Message: "function is empty.", Cause: "no script was given",
			Actions: []llmerr.Action{llmerr.Call(c.tool, "for example", llmerr.A("function", "() => document.title"))}}
	}
	fail := func(err error, url string) error {
		e := llmerr.Classify(err, llmerr.Situation{Tool: c.tool, Ref: in.Ref, URL: url})
		if e.Code != llmerr.InternalError {
			return e
		}
		// What is left is the script's own failure: a throw or a syntax error.
		// Its message is the page's words: fenced, and cut.
		msg := snapshot.Clip(strings.TrimPrefix(llmerr.FirstLine(err.Error()), "playwright: "), snapshot.MaxText)
		return &llmerr.Error{Code: llmerr.EvaluationFailed, Tool: c.tool, Ref: in.Ref, URL: url, Err: err,
			Message: "The script threw: " + snapshot.Fenced(msg),
			Cause:   "the function ran in the page (or did not parse) and threw; the page itself is unchanged by the failure",
			Actions: []llmerr.Action{
				llmerr.Call("browser_snapshot", "check that what the script reads exists"),
				llmerr.Call(c.tool, "with the script fixed", llmerr.A("function", in.Function)),
			},
			Note:    "Retrying the same script will throw the same way.",
			Details: map[string]any{"exception": msg}}
	}
	// A script can change the page like any action, so it runs through
	// the pipeline and its result says what changed.
	do := func(a *acting) error {
		on, url := evaluator(a.tab.Page), a.tab.Page.URL()
		if len(a.targets) > 0 {
			on, url = a.targets[0].el, a.targets[0].rec.URL
		}
		// Bounded: a promise that never settles, or a page whose thread
		// never yields, must not hold the role.
		type out struct {
			v   any
			err error
		}
		o, ok := boundedOr(s.cfg.ActionTimeout, a.tab.Gone(), func() out { v, err := on.Evaluate(fn); return out{v, err} })
		switch {
		case !ok && a.tab.Crashed():
			return a.crashed()
		case !ok && a.tab.Closed():
			if err := a.role.lostUnder(c.tool, url); err != nil {
				return err
			}
			return llmerr.Classify(errors.New("target page, context or browser has been closed"), llmerr.Situation{Tool: c.tool, URL: url})
		case ok && o.err != nil:
			return fail(o.err, url)
		case !ok:
			if !answers(a.tab) {
				return busyPage(c.tool, url, nil)
			}
			return &llmerr.Error{Code: llmerr.ActionTimeout, Tool: c.tool, URL: url, Timeout: s.cfg.ActionTimeout,
				Message: fmt.Sprintf("The script did not finish within %s.", s.cfg.ActionTimeout),
				Cause:   "it returned a promise that did not settle in time (it may wait for something that never happens)",
				Actions: []llmerr.Action{llmerr.Call(c.tool, "with a script that resolves sooner, or race it with a timeout", llmerr.A("function", in.Function))},
				Note:    "The script may still be running in the page."}
		}
		a.res.addDid("Result: %s", renderValue(o.v, min(maxEvalResult, s.cfg.MaxResultBytes/4)))
		return nil
	}
	if in.Ref != "" {
		return s.run(ctx, c, c.refOp(in.Ref, []llmerr.Arg{llmerr.A("function", in.Function)}, do))
	}
	return s.run(ctx, c, op{retry: c.step(llmerr.A("function", in.Function)), do: do})
}

// renderValue writes an evaluation result as JSON, fenced as the page's
// words, and cut to limit characters with a note that says how to get the
// rest.
func renderValue(v any, limit int) string {
	text := fmt.Sprint(v)
	if data, err := json.Marshal(v); err == nil {
		text = string(data)
	}
	k := 0
	for i := range text {
		if k == limit {
			return fmt.Sprintf("%s\n[Cut at %d of %d characters: return less, a part (like JSON.stringify(value).slice(%d, %d)) or only the fields needed.]",
				snapshot.Fenced(text[:i]), limit, utf8.RuneCountInString(text), limit, 2*limit)
		}
		k++
	}
	return snapshot.Fenced(text)
}
