package refs

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/retrace-dev/retrace/llmerr"
)

// wellFormed is the ref syntax, written apart from the registry's own
// pattern so the two are checked against each other.
var wellFormed = regexp.MustCompile(`^e[1-9][0-9]{0,8}$`)

// FuzzLookup looks up arbitrary strings in a registry that has issued e1,
// e2 and e5 (counter at e8) and in one that has issued nothing. A lookup
// never panics, succeeds exactly for an issued ref (spaces around it
// allowed), and otherwise is an UNKNOWN_REF naming the ref with a cause
// that renders.
func FuzzLookup(f *testing.F) {
	for _, s := range []string{"e1", " e2\n", "e5", "e3", "e7", "e8", "e999999999", "e1234567890", "e0", "e01",
		"E1", "", " ", "[ref=e1]", "ref=e1", "#submit", "button.primary", "//div[1]", "Save button", "e", "e-1",
		"e1\x00", "e\u0661", "\xffe1", "e+1"} {
		f.Add(s)
	}
	issued := map[string]bool{"e1": true, "e2": true, "e5": true}
	const next = 8
	f.Fuzz(func(t *testing.T, s string) {
		r := New()
		r.BeginSnapshot()
		r.Observe(next, []Record{{Ref: "e1", Role: "button", Name: "Save"}, {Ref: "e2", Role: "link"},
			{Ref: "e5", Role: "textbox", MainFrame: false}})
		empty := New()

		ref := strings.TrimSpace(s)
		rec, err := r.Lookup(s)
		if issued[ref] {
			if err != nil || rec.Ref != ref || rec.Snapshot != 1 {
				t.Fatalf("Lookup(%q) = %+v, %v; want the record of %s", s, rec, err, ref)
			}
		} else {
			checkUnknown(t, s, ref, err)
			e, _ := llmerr.As(err)
			if wellFormed.MatchString(ref) {
				n, _ := strconv.Atoi(ref[1:])
				want := "no element in this session"
				if n >= next {
					want = fmt.Sprintf("go up to e%d", next-1)
				}
				if !strings.Contains(e.Cause, want) {
					t.Errorf("Lookup(%q): cause %q, want it to say %q", s, e.Cause, want)
				}
			}
		}

		_, err = empty.Lookup(s)
		checkUnknown(t, s, ref, err)
		if e, _ := llmerr.As(err); wellFormed.MatchString(ref) && !strings.Contains(e.Cause, "no snapshot") {
			t.Errorf("empty registry, Lookup(%q): cause %q, want it to say no snapshot was taken", s, e.Cause)
		}
	})
}

// checkUnknown checks that err is a renderable UNKNOWN_REF about ref.
func checkUnknown(t *testing.T, s, ref string, err error) {
	t.Helper()
	e, ok := llmerr.As(err)
	if !ok || e.Code != llmerr.UnknownRef {
		t.Fatalf("Lookup(%q) = %v, want UNKNOWN_REF", s, err)
	}
	if e.Ref != ref || e.Cause == "" || e.Message == "" || len(e.Actions) == 0 {
		t.Errorf("Lookup(%q): incomplete error %+v", s, e)
	}
	if e.Text(llmerr.StyleRecovery) == "" || e.Text(llmerr.StylePlain) == "" {
		t.Errorf("Lookup(%q): empty rendering", s)
	}
	_ = e.Structured()
}
