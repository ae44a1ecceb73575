package server

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/retrace-dev/retrace/llmerr"
)

// Tests of the pure helpers of the package: none of them needs a browser.

func TestHelperCSSIdent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
	}{
		{"", ""},
		{"main", "main"},
		{"user-name_2", "user-name_2"},
		{"Main-Nav", "Main-Nav"},
		{"1st", `\31 st`},            // an identifier cannot start with a digit
		{"a1", "a1"},                 // digits after the first character stay
		{"a.b", `a\2e b`},            // a dot would be a class selector
		{"a:b", `a\3a b`},            // a colon would be a pseudo-class
		{"a b", `a\20 b`},            // a space would be a descendant combinator
		{"#x", `\23 x`},              // the caller adds its own '#'
		{"-1x", `-\31 x`},            // a digit after a leading '-' is escaped too
		{"-", `\-`},                  // a lone '-' is not an identifier
		{`a"b`, `a\22 b`},            // quotes would end the locator's string
		{"café", "café"},             // non-ASCII is allowed as is
		{"日本", "日本"},                 // also when it starts the identifier
		{"9lives!", `\39 lives\21 `}, // the escape ends with a space
	} {
		if got := cssIdent(tc.in); got != tc.want {
			t.Errorf("cssIdent(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestHelperLooksGenerated(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"email", false},
		{"submit-button", false},
		{"step3", false},
		{"item-123", false}, // three digits are still a name
		{"order-2024", true},
		{"a1b2c3d4", true}, // digits count wherever they are
		{":r1:", true},     // React's useId
		{"radix-:R2:", true},
		{"react-select-2-input", true},
		{"deadbeefcafe", true}, // a hashed id
		{"ember42", true},
		{"", false},
	} {
		if got := looksGenerated(tc.id); got != tc.want {
			t.Errorf("looksGenerated(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}

func TestHelperWordsPattern(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text, in string
		want     bool
	}{
		{"Pay", "Pay now", true},
		{"Pay", "PAY", true},
		{"Pay", "please pay.", true},
		{"Pay", "payment", false},
		{"Pay", "Prepay", false},
		{"Pay now", "Click PAY NOW!", true},
		{"Pay now", "Pay nowhere", false},
		{"snake_case", "snake_cases", false}, // '_' is a word character
		{"v2", "v2.1", true},
		{"v2", "v20", false},
		// Punctuation at an end gets no \b on that side.
		{"$5", "Total: $5", true},
		{"$5", "US$5", true},
		{"$5", "Total $50", false}, // it ends with a digit: \b there
		{"(beta)", "Try it(beta)now", true},
		{"Saved!", "Saved!!", true},
		{"Saved!", "Unsaved!", false},
		{"...", "Loading...", true},
		// Text is literal, not a pattern.
		{"a.b", "axb", false},
		{"a.b", "see a.b here", true},
		{"1+1", "11", false},
		{"1+1", "1+1=2", true},
	} {
		if got := wordsPattern(tc.text).MatchString(tc.in); got != tc.want {
			t.Errorf("wordsPattern(%q) matches %q = %v, want %v", tc.text, tc.in, got, tc.want)
		}
	}
}

func TestHelperNearOption(t *testing.T) {
	t.Parallel()
	countries := []string{"France", "Germany", "United Kingdom", "United States"}
	for _, tc := range []struct {
		v      string
		labels []string
		want   string
	}{
		{"France", countries, "France"},
		{"france", countries, "France"},
		{"  GERMANY ", countries, "Germany"},
		{"Kingdom", countries, "United Kingdom"}, // part of one label
		{"united", countries, ""},                // part of two labels
		{"Spain", countries, ""},
		{"", countries, ""},
		{"   ", countries, ""},
		{"x", nil, ""},
		// A label equal but for case wins over labels that contain v.
		{"red", []string{"Dark red", "Red", "Red wine"}, "Red"},
		// Labels with spaces around them still match exactly.
		{"Blue", []string{" blue "}, " blue "},
	} {
		if got := nearOption(tc.v, tc.labels); got != tc.want {
			t.Errorf("nearOption(%q, %q) = %q, want %q", tc.v, tc.labels, got, tc.want)
		}
	}
}

func TestHelperMissingOptions(t *testing.T) {
	t.Parallel()
	opts := []option{{"us", "United States"}, {"fr", "France"}, {"", "Choose…"}}
	for _, tc := range []struct {
		name string
		want []string
		out  []string
	}{
		{"by value", []string{"us", "fr"}, nil},
		{"by label", []string{"United States", "France"}, nil},
		{"mixed", []string{"us", "France"}, nil},
		{"empty value is an option's value", []string{""}, nil},
		{"one missing", []string{"us", "de"}, []string{"de"}},
		{"case matters", []string{"france", "US"}, []string{"france", "US"}},
		{"order kept", []string{"b", "fr", "a"}, []string{"b", "a"}},
		{"nothing wanted", nil, nil},
	} {
		if got := missingOptions(tc.want, opts); !slices.Equal(got, tc.out) {
			t.Errorf("%s: missingOptions(%q) = %q, want %q", tc.name, tc.want, got, tc.out)
		}
	}
	if got := missingOptions([]string{"x"}, nil); !slices.Equal(got, []string{"x"}) {
		t.Errorf("missingOptions with no options = %q, want [x]", got)
	}
}

func TestHelperLabelsOf(t *testing.T) {
	t.Parallel()
	opts := []option{{"us", "United States"}, {"fr", "France"}, {"France", "French Guiana"}}
	for _, tc := range []struct {
		values, want []string
	}{
		{[]string{"us"}, []string{"United States"}},
		{[]string{"fr", "us"}, []string{"France", "United States"}},
		// A label that is not a value stays as it is.
		{[]string{"United States"}, []string{"United States"}},
		// Values are looked up first: "France" is the value of another option.
		{[]string{"France"}, []string{"French Guiana"}},
		{[]string{"xx"}, []string{"xx"}},
		{nil, nil},
	} {
		if got := labelsOf(tc.values, opts); !slices.Equal(got, tc.want) {
			t.Errorf("labelsOf(%q) = %q, want %q", tc.values, got, tc.want)
		}
	}
}

func TestHelperEditDistance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"", "abc", 3},
		{"abc", "abc", 0},
		{"admin", "admn", 1},  // deletion
		{"admn", "admin", 1},  // insertion
		{"admin", "admon", 1}, // substitution
		{"kitten", "sitting", 3},
		{"flaw", "lawn", 2},
		{"A", "a", 1}, // case-sensitive: closest lowers both sides
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := editDistance(tc.b, tc.a); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d (symmetric)", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestHelperClosest(t *testing.T) {
	t.Parallel()
	roles := []string{"default", "admin", "editor"}
	for _, tc := range []struct {
		s     string
		names []string
		want  string
	}{
		{"admn", roles, "admin"},
		{"Admin", roles, "admin"}, // case is ignored; the name comes back as spelled
		{"admin", roles, "admin"},
		{"editr", roles, "editor"},
		{"defualt", roles, "default"}, // limit 7/3 = 2: a swap is two edits
		{"xyz", roles, ""},
		{"adm", roles, ""},                 // two edits away, limit 1
		{"rôle", []string{"role"}, "role"}, // one edit in characters, not bytes
		{"", roles, ""},
		{"admin", nil, ""},
		// Two names within the limit: no guess.
		{"user3", []string{"user1", "user2"}, ""},
		{"a", []string{"b", "c"}, ""},
		{"a", []string{"b", "default"}, "b"}, // the limit is at least 1
	} {
		if got := closest(tc.s, tc.names); got != tc.want {
			t.Errorf("closest(%q, %q) = %q, want %q", tc.s, tc.names, got, tc.want)
		}
	}
}

func TestHelperNormalizeKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
	}{
		{"a", "a"},
		{"A", "A"},
		{"+", "+"},
		{"é", "é"},
		{"Enter", "Enter"},
		{"enter", "Enter"},
		{"return", "Enter"},
		{"esc", "Escape"},
		{"ESC", "Escape"},
		{"del", "Delete"},
		{"pgdn", "PageDown"},
		{"up", "ArrowUp"},
		{"space", " "},
		{"f12", "F12"},
		{"keya", "KeyA"},
		{"digit1", "Digit1"},
		{"ctrl+a", "Control+a"},
		{"Ctrl+Shift+P", "Control+Shift+P"},
		{"cmd+k", "Meta+k"},
		{"option+ArrowLeft", "Alt+ArrowLeft"},
		{"ControlOrMeta+c", "ControlOrMeta+c"},
		{"Alt+é", "Alt+é"},
		// A '+' right after a separator is the plus key.
		{"Control++", "Control++"},
		{"Shift++", "Shift++"},
		{"ctrl+shift++", "Control+Shift++"},
		{"Control+space", "Control+ "},
		{"Control + a", "Control+a"},
	} {
		got, why := normalizeKey(tc.in)
		if got != tc.want || why != "" {
			t.Errorf("normalizeKey(%q) = %q, %q; want %q", tc.in, got, why, tc.want)
		}
	}
	for _, tc := range []struct {
		in, why string
	}{
		{"", "the key is empty"},
		{"Hyper", `"Hyper" is not a key name`},
		{"Ctrl+Foo", `"Foo" is not a key name`},
		{"Foo+a", `"Foo" is not a key name`},
		{"Enterr", `"Enterr" is not a key name`},
		{"ab", `"ab" is not a key name`},
		{"Control+", `"Control+" ends with + and no key after it`},
		{"a+", `"a+" ends with + and no key after it`},
	} {
		got, why := normalizeKey(tc.in)
		if got != "" || why != tc.why {
			t.Errorf("normalizeKey(%q) = %q, %q; want \"\", %q", tc.in, got, why, tc.why)
		}
	}
}

func TestHelperNormalizeURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
	}{
		{"example.com", "https://example.com"},
		{"example.com:8443/a", "https://example.com:8443/a"},
		{"localhost", "http://localhost"},
		{"localhost:3000", "http://localhost:3000"},
		{"127.0.0.1/x?y=1#z", "http://127.0.0.1/x?y=1#z"},
		{"[::1]:8080/x", "http://[::1]:8080/x"},
		{"http://example.com/", "http://example.com/"},
		{"\thttps://a.test/p\n", "https://a.test/p"},
		{"about:blank", "about:blank"},
		{"ABOUT:blank", "ABOUT:blank"},
		{"data:text/html,<p>hi</p>", "data:text/html,<p>hi</p>"},
		{"file:///tmp/x.html", "file:///tmp/x.html"},
	} {
		got, err := normalizeURL(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("normalizeURL(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		in, cause string
	}{
		{"", "the url is empty"},
		{"   ", "the url is empty"},
		{"https://a.test/a b", "a URL cannot contain spaces"},
		{"javascript:alert(1)", "javascript: URLs are not navigations"},
		{"JavaScript:void(0)", "javascript: URLs are not navigations"},
		{"ftp://example.com/f", `the scheme "ftp" is not supported`},
		{"chrome://settings", `the scheme "chrome" is not supported`},
		{"mailto:a@b.com", `the scheme "mailto" is not supported`}, // a scheme, not a host
		{"tel:123", `the scheme "tel" is not supported`},
		{"https://", "it has no host"},
		{"http:///path", "it has no host"},
		{"http://[::1", "it does not parse"},
	} {
		got, err := normalizeURL(tc.in)
		e, ok := llmerr.As(err)
		if !ok {
			t.Errorf("normalizeURL(%q) = %q, %v; want an *llmerr.Error", tc.in, got, err)
			continue
		}
		if got != "" || e.Code != llmerr.InvalidParams || !strings.Contains(e.Cause, tc.cause) {
			t.Errorf("normalizeURL(%q) = %q, %s (cause %q); want INVALID_PARAMS with cause %q", tc.in, got, e.Code, e.Cause, tc.cause)
		}
		if e.URL != tc.in || e.Tool != "browser_navigate" {
			t.Errorf("normalizeURL(%q): error URL %q, tool %q; want the raw URL and browser_navigate", tc.in, e.URL, e.Tool)
		}
		if len(e.Actions) != 1 || e.Actions[0].Tool != "browser_navigate" {
			t.Errorf("normalizeURL(%q): actions %v, want one browser_navigate", tc.in, e.Actions)
		}
	}
}

func TestHelperTruthy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in       string
		want, ok bool
	}{
		{"true", true, true},
		{"TRUE", true, true},
		{" yes ", true, true},
		{"on", true, true},
		{"1", true, true},
		{"checked", true, true},
		{"x", true, true},
		{"X", true, true},
		{"false", false, true},
		{"No", false, true},
		{"off", false, true},
		{"0", false, true},
		{"unchecked", false, true},
		{"", false, true},
		{"  ", false, true},
		{"maybe", false, false},
		{"2", false, false},
		{"y", false, false},
	} {
		got, ok := truthy(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("truthy(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestHelperQuoteAll(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{}, ""},
		{[]string{"a"}, `"a"`},
		{[]string{"a", "b c"}, `"a", "b c"`},
		{[]string{""}, `""`},
		{[]string{`say "hi"`, "x\ny"}, `"say \"hi\"", "x\ny"`},
		{[]string{"é"}, `"é"`},
	} {
		if got := quoteAll(tc.in); got != tc.want {
			t.Errorf("quoteAll(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestHelperOneLineCut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"", 5, ""},
		{"abc", 3, "abc"},
		{"abcdef", 3, "abc…"},
		{"  a\n b\t\tc  ", 10, "a b c"},
		{"line one\nline two", 8, "line one…"},
		{"abc", 0, "…"},
		// Cut by characters, never inside one.
		{"ééééé", 5, "ééééé"},
		{"ééééé", 2, "éé…"},
		{"aé", 1, "a…"},
		{"😀😀😀", 1, "😀…"},
		{"a😀b", 2, "a😀…"},
	} {
		got := oneLineCut(tc.in, tc.n)
		if got != tc.want {
			t.Errorf("oneLineCut(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("oneLineCut(%q, %d) = %q is not valid UTF-8", tc.in, tc.n, got)
		}
	}
}

func TestHelperRenderValue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   any
		want string
	}{
		{"nil", nil, "null"},
		{"string", "é", `"é"`},
		{"number", 1.5, "1.5"},
		{"map", map[string]any{"b": 2, "a": []any{true, "x"}}, `{"a":[true,"x"],"b":2}`},
		{"not JSON", math.Inf(1), "+Inf"},
		// The page's words cannot close the fence.
		{"fence", "</page-content>", `"\u003c/page-content\u003e"`},
		{"not JSON, fence", fmt.Stringer(fenceCloser{}), `<\/page-content>`},
	} {
		if got, want := renderValue(tc.in, maxEvalResult), "<page-content>"+tc.want+"</page-content>"; got != want {
			t.Errorf("%s: renderValue(%v) = %q, want %q", tc.name, tc.in, got, want)
		}
	}

	// Exactly the limit is not cut.
	fits := strings.Repeat("a", maxEvalResult-2) // plus two quotes
	if got := renderValue(fits, maxEvalResult); got != `<page-content>"`+fits+`"</page-content>` {
		t.Errorf("renderValue of %d characters was changed: %.40q…", maxEvalResult, got)
	}

	// A long result is cut by characters: "é" is two bytes, so a cut by
	// bytes would split one. The note, outside the fence, says how to get
	// the rest.
	long := strings.Repeat("é", maxEvalResult+5000)
	got := renderValue(long, maxEvalResult)
	if !utf8.ValidString(got) {
		t.Fatalf("renderValue cut inside a character: ends %q", got[len(got)-60:])
	}
	suffix := "</page-content>\n[Cut at 20000 of 25002 characters: return less, a part (like JSON.stringify(value).slice(20000, 40000)) or only the fields needed.]"
	head, ok := strings.CutSuffix(got, suffix)
	if !ok {
		t.Fatalf("renderValue of a long string ends %q, want %q", got[max(0, len(got)-60):], suffix)
	}
	head = strings.TrimPrefix(head, "<page-content>")
	if n := utf8.RuneCountInString(head); n != maxEvalResult {
		t.Errorf("renderValue kept %d characters, want %d", n, maxEvalResult)
	}
	if want := `"` + strings.Repeat("é", maxEvalResult-1); head != want {
		t.Errorf("renderValue kept %.40q…, want the quote and %d é", head, maxEvalResult-1)
	}
}

// fenceCloser is a value JSON cannot write, whose text closes the fence.
type fenceCloser struct{}

func (fenceCloser) String() string               { return "</page-content>" }
func (fenceCloser) MarshalJSON() ([]byte, error) { return nil, errors.New("no JSON") }

func TestHelperCapText(t *testing.T) {
	t.Parallel()
	if got := capText("short", 100); got != "short" {
		t.Errorf("capText of a short text = %q", got)
	}
	// A cut inside a fence closes it; the note, outside, says what was cut.
	text := "Did something.\n<page-content>\n" + strings.Repeat("é", 5000) + "\n</page-content>"
	got := capText(text, 1000)
	if len(got) > 1000 || !utf8.ValidString(got) {
		t.Fatalf("%d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
	body, note, ok := strings.Cut(got, "\n</page-content>\n[Result cut at the 1000-byte limit: ")
	if !ok || !strings.HasPrefix(body, "Did something.\n<page-content>\néé") || !strings.Contains(note, "more bytes not shown. Ask for less") {
		t.Errorf("got:\n%s", got)
	}
	// Outside a fence, none is added.
	if got := capText(strings.Repeat("a", 2000), 1000); strings.Contains(got, "</page-content>") || len(got) > 1000 {
		t.Errorf("got:\n%s", got)
	}
}

func TestHelperFitLines(t *testing.T) {
	t.Parallel()
	lines := []string{"aaaa", "bbbb", "cccc", "dddd"} // 5 bytes each with its newline
	for _, tc := range []struct {
		room   int
		newest bool
		want   []string
		left   int
	}{
		{100, false, lines, 0},
		{12, false, []string{"aaaa", "bbbb"}, 2},
		{12, true, []string{"cccc", "dddd"}, 2},
		{4, true, []string{}, 4},
	} {
		got, left := fitLines(lines, tc.room, tc.newest)
		if !slices.Equal(got, tc.want) || left != tc.left {
			t.Errorf("fitLines(room %d, newest %v) = %q, %d; want %q, %d", tc.room, tc.newest, got, left, tc.want, tc.left)
		}
	}
}

func TestHelperTitleLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", "Title: "},
		{"Sign in", "Title: <page-content>Sign in</page-content>"},
		{"a</page-content>b", `Title: <page-content>a<\/page-content>b</page-content>`},
		{strings.Repeat("t", 1001), "Title: <page-content>" + strings.Repeat("t", 1000) + "… [1 more characters not shown]</page-content>"},
	} {
		if got := titleLine(tc.in); got != tc.want {
			t.Errorf("titleLine(%.20q) = %.80q, want %.80q", tc.in, got, tc.want)
		}
	}
}
