package snapshot

import (
	"fmt"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/refs"
)

// TestGoneDocumentsAreDropped navigates one tab through many documents, each
// with two iframes, and snapshots each: the engine and the registry keep a
// bounded number of them, the bridges of gone documents are disposed, a
// ref from the page before still names its element, and one from long ago
// is still stale, never unknown.
func TestGoneDocumentsAreDropped(t *testing.T) {
	page := testPage(t, "")
	eng, reg := NewEngine(), refs.New()
	var first []string // the "Outer button" ref of each document
	var handles []playwright.JSHandle
	perLoad := 0 // refs in one load's snapshot, frames included
	const loads = keepGone + 8
	for i := range loads {
		if _, err := page.Goto(fmt.Sprintf("%s/frames.html?load=%d", fx.URL, i)); err != nil {
			t.Fatal(err)
		}
		snap, err := eng.Capture(page, reg)
		if err != nil {
			t.Fatal(err)
		}
		ref := ""
		for _, r := range snap.Refs {
			if r.Name == "Outer button" {
				ref = r.Ref
			}
		}
		if ref == "" {
			t.Fatalf("load %d: no Outer button in %v", i, snap.Refs)
		}
		first = append(first, ref)
		perLoad = len(snap.Refs)
		rec, _ := reg.Lookup(ref)
		eng.mu.Lock()
		handles = append(handles, eng.docs[rec.Doc].handle)
		eng.mu.Unlock()
	}

	eng.mu.Lock()
	docs := len(eng.docs)
	eng.mu.Unlock()
	// Each load is three documents: the page and its two frames.
	if live := 3; docs > keepGone+live {
		t.Errorf("the engine holds %d documents after %d loads, want at most %d", docs, loads, keepGone+live)
	}
	if reg.Len() > (keepGone/3+2)*perLoad {
		t.Errorf("the registry holds %d records after %d loads", reg.Len(), loads)
	}

	// The bridge of the first document was disposed; the current one works.
	if _, err := handles[0].Evaluate(`b => typeof b`); err == nil {
		t.Errorf("the bridge of a gone document still answers")
	}
	if _, err := handles[loads-1].Evaluate(`b => typeof b`); err != nil {
		t.Errorf("the current bridge: %v", err)
	}

	// From the page before: the record is kept, and says what navigated.
	rec, err := reg.Lookup(first[loads-2])
	if err != nil {
		t.Fatalf("Lookup of the ref from the page before: %v", err)
	}
	_, err = eng.Resolve(rec)
	if e, ok := llmerr.As(err); !ok || e.Code != llmerr.StaleRef || e.Element == nil || e.Element.Name != "Outer button" {
		t.Errorf("Resolve of the ref from the page before = %v, want STALE_REF naming the button", err)
	}
	// From long ago: only known to be stale, and where.
	_, err = reg.Lookup(first[0])
	if e, ok := llmerr.As(err); !ok || e.Code != llmerr.StaleRef || !strings.Contains(e.URL, "frames.html") {
		t.Errorf("Lookup of the first ref = %v, want STALE_REF with its page", err)
	}

	// An element handle lives until Release.
	rec, _ = reg.Lookup(first[loads-1])
	el, err := eng.Resolve(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := el.Click(); err != nil {
		t.Fatalf("click before Release: %v", err)
	}
	eng.Release()
	if _, err := el.Evaluate(`e => e.tagName`); err == nil {
		t.Errorf("an element handle still answers after Release")
	}
}
