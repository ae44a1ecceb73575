package llmerr

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzClassify classifies arbitrary error messages in arbitrary situations.
// Classify never panics, always returns a catalogued code with a cause and
// at least one step, keeps the raw message's first line (at most 300
// characters) in details, renders in both styles and encodes as JSON; an
// *Error inside the chain comes back unchanged.
func FuzzClassify(f *testing.F) {
	for _, s := range []struct {
		msg, tool, url string
		nav            bool
	}{
		{"net::ERR_CONNECTION_REFUSED at http://127.0.0.1:1/", "browser_navigate", "http://127.0.0.1:1/", true},
		{"net::ERR_SOMETHING_NEW", "browser_navigate", "", true},
		{"Timeout 3000ms exceeded.\n=========================== logs", "browser_navigate", "https://example.com/", true},
		{"Timeout 3000ms exceeded.", "browser_click", "", false},
		{"Target page, context or browser has been closed", "browser_type", "", false},
		{"Page crashed", "browser_snapshot", "", false},
		{"Execution context was destroyed, most likely because of a navigation", "browser_click", "", false},
		{"Frame was detached", "browser_hover", "", false},
		{"Element is not attached to the DOM", "browser_click", "", false},
		{"<div class=\"overlay\"> intercepts pointer events", "browser_click", "", false},
		{"element is not visible", "browser_type", "", false},
		{"Error: Element is not an <input>, <textarea> or [contenteditable] element", "browser_type", "", false},
		{"", "", "", false},
		{"\n", "browser_click", "", false},
		{strings.Repeat("é", 400), "browser_click", "", false},
		{"\xff\xfe net::ERR_", "browser_navigate", "\xff", true},
	} {
		f.Add(s.msg, s.tool, s.url, s.nav, int64(3000), "e12")
	}
	f.Fuzz(func(t *testing.T, msg, tool, url string, nav bool, timeoutMs int64, ref string) {
		s := Situation{Tool: tool, Ref: ref, URL: url, Navigating: nav, Timeout: time.Duration(timeoutMs) * time.Millisecond}
		if Classify(nil, s) != nil {
			t.Fatal("Classify(nil) is not nil")
		}
		e := Classify(errors.New(msg), s)
		if e == nil {
			t.Fatalf("Classify(%q) = nil", msg)
		}
		if !slices.Contains(Codes(), e.Code) || Lookup(e.Code).Code != e.Code {
			t.Fatalf("Classify(%q): code %q is not in the catalogue", msg, e.Code)
		}
		if e.Cause == "" || len(e.Actions) == 0 || e.Tool != tool {
			t.Errorf("Classify(%q): incomplete error %+v", msg, e)
		}
		raw, _ := e.Details["raw"].(string)
		if raw != FirstLine(msg) || strings.Contains(raw, "\n") || utf8.RuneCountInString(raw) > 301 {
			t.Errorf("Classify(%q): details.raw = %q", msg, raw)
		}
		if e.Text(StyleRecovery) == "" {
			t.Errorf("Classify(%q): empty plan", msg)
		}
		_ = e.Text(StylePlain)
		if _, err := json.Marshal(e.Structured()); err != nil {
			t.Errorf("Classify(%q): structured form does not encode: %v", msg, err)
		}

		// An error already classified is passed through, wrapped or not.
		known := &Error{Code: StaleRef, Message: msg}
		if got := Classify(fmt.Errorf("%s: %w", msg, known), s); got != known || got.Tool != tool {
			t.Errorf("Classify(wrapped *Error) = %+v, want the same error with tool %q", got, tool)
		}
	})
}
