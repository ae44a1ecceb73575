package server

import (
	"testing"
	"unicode/utf8"
)

// FuzzNormalizeKey normalises arbitrary key names and combinations.
// normalizeKey never panics; it returns a key exactly when it gives no
// reason; the key it returns is made of single characters and Playwright's
// key names joined by "+", and normalises to itself.
func FuzzNormalizeKey(f *testing.F) {
	for _, s := range []string{"Enter", "enter", "a", "A", "+", "Control+a", "Control + a", "ctrl+shift+K",
		"Control++", "Shift+", "+a", "++", "a++", "Meta+ArrowLeft", "cmd+space", "space", "F13", "F25",
		"Control+Alt+Delete", "Ctrl+é", "é", "\xff", "\xff\xfe", " ", "  ", "Control+ ", "Enter\n",
		"pgdn", "Numpad5", "KeyZ", "Digit0", "Control+Shift+Alt+Meta+a", "a+b+c", "Escape+Escape"} {
		f.Add(s)
	}
	canonical := map[string]bool{}
	for _, n := range keyNames {
		canonical[n] = true
	}
	f.Fuzz(func(t *testing.T, key string) {
		got, why := normalizeKey(key)
		if (got == "") == (why == "") {
			t.Fatalf("normalizeKey(%q) = %q, %q: want a key or a reason, not both or neither", key, got, why)
		}
		if got == "" {
			return
		}
		if utf8.RuneCountInString(got) > 1 {
			for _, p := range fuzzKeyParts(got) {
				if utf8.RuneCountInString(p) != 1 && !canonical[p] {
					t.Fatalf("normalizeKey(%q) = %q, with the part %q that is no key", key, got, p)
				}
			}
		}
		if again, why := normalizeKey(got); again != got {
			t.Fatalf("normalizeKey(%q) = %q, which normalises to %q, %q", key, got, again, why)
		}
	})
}

// fuzzKeyParts splits a normalised combination at each "+" that is not
// the plus key itself (a "+" right after a separator, or at the start).
func fuzzKeyParts(s string) []string {
	var parts []string
	start := 0
	for i := 1; i < len(s); i++ {
		if s[i] == '+' && i > start {
			parts = append(parts, s[start:i])
			start = i + 1
			i++ // the next byte starts a part, even if it is "+"
		}
	}
	return append(parts, s[start:])
}
