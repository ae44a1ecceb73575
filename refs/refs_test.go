package refs

import (
	"fmt"
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

func TestDrop(t *testing.T) {
	r := New()
	r.BeginSnapshot()
	r.Observe(6, []Record{{Ref: "e1", Role: "button", Name: "Old", Doc: 1, URL: "http://a/"},
		{Ref: "e2", Role: "link", Doc: 1, URL: "http://a/"}, {Ref: "e3", Role: "button", Name: "Kept", Doc: 2, URL: "http://b/"},
		{Ref: "e5", Role: "link", Doc: 1, URL: "http://a/#x"}})
	r.Drop(1)
	if r.Len() != 1 {
		t.Errorf("Len = %d after dropping document 1, want 1", r.Len())
	}
	if rec, err := r.Lookup("e3"); err != nil || rec.Name != "Kept" {
		t.Errorf("Lookup(e3), inside the dropped range but live = %+v, %v", rec, err)
	}
	for ref, want := range map[string]llmerr.Code{"e1": llmerr.StaleRef, "e5": llmerr.StaleRef, "e4": llmerr.StaleRef, "e6": llmerr.UnknownRef} {
		_, err := r.Lookup(ref)
		e, ok := llmerr.As(err)
		if !ok || e.Code != want {
			t.Errorf("Lookup(%s) = %v, want %s", ref, err, want)
			continue
		}
		if want == llmerr.StaleRef && (e.URL != "http://a/#x" || !strings.Contains(e.Message, "replaced") || e.Text(llmerr.StyleRecovery) == "") {
			t.Errorf("Lookup(%s): URL %q, message %q; want the page it was issued on, replaced", ref, e.URL, e.Message)
		}
	}
	// The counter is untouched: dropped refs are never issued again.
	if r.Next() != 6 {
		t.Errorf("Next = %d after Drop, want 6", r.Next())
	}
}

// TestDropBounded drops many documents: the registry keeps a bounded number
// of ranges, and every dropped ref still reads as stale.
func TestDropBounded(t *testing.T) {
	r := New()
	next := 1
	for doc := DocID(1); doc <= 3*maxGone; doc++ {
		r.BeginSnapshot()
		recs := make([]Record, 3)
		for i := range recs {
			recs[i] = Record{Ref: fmt.Sprintf("e%d", next), Role: "button", Doc: doc, URL: fmt.Sprintf("http://a/%d", doc)}
			next++
		}
		next += int(doc % 3) // numbers a bridge skipped
		r.Observe(next, recs)
		r.Drop(doc)
	}
	if r.Len() != 0 || len(r.gone) > maxGone {
		t.Fatalf("Len %d, %d ranges; want 0 and at most %d", r.Len(), len(r.gone), maxGone)
	}
	for _, ref := range []string{"e1", "e2000", fmt.Sprintf("e%d", next-3)} {
		if _, err := r.Lookup(ref); err == nil || !strings.Contains(err.Error(), string(llmerr.StaleRef)) {
			t.Errorf("Lookup(%s) = %v, want STALE_REF", ref, err)
		}
	}
	if _, err := r.Lookup(fmt.Sprintf("e%d", next-3)); err != nil {
		if e, _ := llmerr.As(err); e.URL != fmt.Sprintf("http://a/%d", 3*maxGone) {
			t.Errorf("the newest dropped ref names %q, want its page", e.URL)
		}
	}
}
