package server

import (
	"encoding/json"
	"fmt"
)

// evaluator is what page functions run on: an element or a frame.
type evaluator interface {
	Evaluate(expression string, arg ...any) (any, error)
}

// evalJSON runs a page function that returns a JSON string and decodes it
// into T. Page scripts build the string themselves (JSON.stringify captured
// before the page's own code could replace Array methods), which also
// decodes faster than Playwright's serialisation of an object. A result
// that is not a string or does not decode is an error, never a zero value.
func evalJSON[T any](on evaluator, js string, arg ...any) (T, error) {
	var out T
	s, err := evalAs[string](on, js, arg...)
	if err != nil {
		return out, err
	}
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return out, fmt.Errorf("decoding the page function's answer: %w", err)
	}
	return out, nil
}

// evalAs runs a page function that returns a plain value (a bool, a
// string) and checks its type.
func evalAs[T any](on evaluator, js string, arg ...any) (T, error) {
	var out T
	raw, err := on.Evaluate(js, arg...)
	if err != nil {
		return out, err
	}
	v, ok := raw.(T)
	if !ok {
		return out, fmt.Errorf("the page function returned %T, not %T", raw, out)
	}
	return v, nil
}
