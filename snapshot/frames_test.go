package snapshot

import (
	"strings"
	"testing"
	"time"

	"github.com/retrace-dev/retrace/refs"
)

// A snapshot keeps the frames of the iframes it read, so the next one does
// not ask the page for them again, and still reads the right document when
// an iframe navigates (the same frame), is moved in the page (a new frame)
// or is replaced by another iframe.
func TestChildFramesKept(t *testing.T) {
	page := testPage(t, "")
	if _, err := page.Goto(fx.Page("frames.html")); err != nil {
		t.Fatal(err)
	}
	eng, reg := NewEngine(), refs.New()
	lookups := func() int {
		eng.mu.Lock()
		defer eng.mu.Unlock()
		return eng.frameLookups
	}
	// read captures until the tree shows want, within 5 s.
	read := func(want ...string) string {
		t.Helper()
		var text string
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			snap, err := eng.Capture(page, reg)
			if err != nil {
				t.Fatal(err)
			}
			text = snap.Text()
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(text, w)
			}
			if ok {
				return text
			}
		}
		t.Fatalf("no snapshot showed %q within 5s; the last:\n%s", want, text)
		return ""
	}
	eval := func(js string) {
		t.Helper()
		if _, err := page.Evaluate(js); err != nil {
			t.Fatal(err)
		}
	}
	read(`button "Same button"`, `button "Cross button"`)
	if n := lookups(); n != 2 {
		t.Fatalf("the first snapshot asked for %d frames, want 2", n)
	}
	read(`button "Same button"`, `button "Cross button"`)
	if n := lookups(); n != 2 {
		t.Errorf("the second snapshot asked the page for frames again: %d lookups", n)
	}

	// The same frame, another document.
	eval(`() => { document.getElementById('same').src = '/frame-inner.html?label=Again' }`)
	text := read(`button "Again button"`, `button "Cross button"`)
	if strings.Contains(text, "Same button") {
		t.Errorf("the old document of the navigated frame is read:\n%s", text)
	}
	if n := lookups(); n != 2 {
		t.Errorf("a frame that navigated was asked for again: %d lookups", n)
	}

	// Moved in the page: the iframe gets a new frame, whose document loads anew.
	eval(`() => { const f = document.getElementById('cross'); f.src = f.src.replace('label=Cross', 'label=Moved'); document.body.prepend(f) }`)
	read(`button "Again button"`, `button "Moved button"`)

	// Replaced by another iframe: a new ref, a new frame.
	eval(`() => { const old = document.getElementById('same'); const f = document.createElement('iframe');
		f.title = 'Newer'; f.src = '/frame-inner.html?label=Newer'; old.replaceWith(f) }`)
	text = read(`iframe "Newer"`, `button "Newer button"`, `button "Moved button"`)
	if strings.Contains(text, "Again button") {
		t.Errorf("the removed iframe's document is read:\n%s", text)
	}
	if n := lookups(); n < 4 {
		t.Errorf("a moved and a new iframe were not asked for: %d lookups", n)
	}
}
