package refs

import (
	"strings"
	"testing"

	"github.com/retrace-dev/retrace/llmerr"
)

func TestLookup(t *testing.T) {
	r := New()
	if r.Next() != 1 {
		t.Fatalf("first ref number = %d", r.Next())
	}
	r.BeginSnapshot()
	r.Observe(4, []Record{{Ref: "e1", Role: "button", Name: "Save"}, {Ref: "e3", Role: "link"}})
	rec, err := r.Lookup(" e1 ")
	if err != nil || rec.Name != "Save" || rec.Snapshot != 1 {
		t.Fatalf("Lookup(e1) = %+v, %v", rec, err)
	}
	// The counter never goes back, even if a caller reports a lower number.
	r.Observe(2, nil)
	if r.Next() != 4 {
		t.Errorf("counter went back to %d", r.Next())
	}
	for ref, cause := range map[string]string{
		"e2":          "no element in this session",
		"e7":          "go up to e3",
		"button.x":    "CSS selector",
		"ref=e1":      "without [ref=",
		"E1x":         "letter e followed by a number",
		"Save":        "text or a description",
		"e0":          "letter e followed by a number",
		"":            "no ref was given",
		"e1234567890": "letter e followed by a number",
	} {
		_, err := r.Lookup(ref)
		e, ok := llmerr.As(err)
		if !ok || e.Code != llmerr.UnknownRef {
			t.Errorf("Lookup(%q) = %v, want UNKNOWN_REF", ref, err)
			continue
		}
		if !strings.Contains(e.Cause, cause) {
			t.Errorf("Lookup(%q) cause = %q, want it to mention %q", ref, e.Cause, cause)
		}
	}
}
