package llmerr

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

func TestEveryCodeIsCatalogued(t *testing.T) {
	for _, c := range Codes() {
		e, ok := catalogue[c]
		if !ok {
			t.Errorf("%s has no catalogue entry", c)
			continue
		}
		if e.Title == "" || e.Category == "" {
			t.Errorf("%s: entry lacks title or category", c)
		}
		if !e.Retryable && e.NoRetryReason == "" {
			t.Errorf("%s is not retryable but does not say why in words", c)
		}
	}
	if len(catalogue) != len(Codes()) {
		t.Errorf("catalogue has %d entries, Codes lists %d", len(catalogue), len(Codes()))
	}
}

func TestRecoveryTextAndStructure(t *testing.T) {
	e := &Error{
		Code: StaleRef, Ref: "e7", Element: &Element{Role: "button", Name: "Save", Tag: "button"},
		URL:     "http://a/",
		Message: "Ref e7 points to an element that is no longer on the page.",
		Cause:   "it left the DOM",
		Actions: []Action{Call("browser_click", "retry on the new element", A("ref", "e9"))},
	}
	text := e.Text(StyleRecovery)
	for _, want := range []string{
		"Error: Stale element ref [STALE_REF]", `Ref: e7 (button "Save")`, "Cause: it left the DOM",
		"Action Required:\n1. browser_click(ref=\"e9\") — retry on the new element",
		"will not help",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	if got := e.Text(StylePlain); strings.Contains(got, "\n") || !strings.Contains(got, "no longer on the page") {
		t.Errorf("plain style = %q", got)
	}
	s := e.Structured()
	if s.Code != StaleRef || s.Category != CategoryState || s.Retryable || !s.RefsInvalidated || !s.SessionValid {
		t.Errorf("structured = %+v", s)
	}
	if len(s.Actions) != 1 || s.Actions[0].Args["ref"] != "e9" {
		t.Errorf("actions = %+v", s.Actions)
	}
	if s.Details["ref"] != "e7" {
		t.Errorf("details = %+v", s.Details)
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		raw  string
		sit  Situation
		code Code
		want string
	}{
		{"playwright: net::ERR_CONNECTION_REFUSED at http://127.0.0.1:1/", Situation{Tool: "browser_navigate", URL: "http://127.0.0.1:1/", Navigating: true},
			NavigationFailed, "nothing is listening"},
		{"playwright: timeout: Timeout 1500ms exceeded.", Situation{Tool: "browser_navigate", URL: "http://x/", Navigating: true, Timeout: 1500 * time.Millisecond},
			NavigationTimeout, "1.5s"},
		{"playwright: timeout: Timeout 3000ms exceeded.\nCall log:\n  - <div id=overlay> intercepts pointer events", Situation{Tool: "browser_click", Ref: "e3"},
			ElementNotInteractable, "covers it"},
		{"playwright: Element is not attached to the DOM", Situation{Tool: "browser_click", Ref: "e3"}, StaleRef, "re-rendered"},
		{"playwright: Target page, context or browser has been closed", Situation{Tool: "browser_click"}, BrowserClosed, "closed"},
		{"something odd", Situation{Tool: "browser_click"}, InternalError, "something odd"},
	}
	for _, tc := range cases {
		e := Classify(errors.New(tc.raw), tc.sit)
		if e.Code != tc.code {
			t.Errorf("Classify(%q) = %s, want %s", tc.raw, e.Code, tc.code)
			continue
		}
		if text := e.Text(StyleRecovery); !strings.Contains(text, tc.want) {
			t.Errorf("Classify(%q) text lacks %q:\n%s", tc.raw, tc.want, text)
		}
	}
	// A catalogued error passes through unchanged, even wrapped.
	orig := &Error{Code: UnknownRef, Message: "x"}
	if got := Classify(fmt.Errorf("wrap: %w", orig), Situation{}); got != orig {
		t.Errorf("Classify rewrapped a catalogued error: %+v", got)
	}
}

var update = flag.Bool("update", false, "rewrite docs/errors.md")

func TestErrorsDoc(t *testing.T) {
	const path = "../docs/errors.md"
	got := Markdown()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil || string(want) != got {
		t.Errorf("docs/errors.md is out of date with the catalogue; run: go test ./llmerr -run TestErrorsDoc -update")
	}
	for _, c := range Codes() {
		if _, ok := Examples()[c]; !ok {
			t.Errorf("%s has no example", c)
		}
	}
}
