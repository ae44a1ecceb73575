package snapshot

import (
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/refs"
)

// Changed tells a page that may differ from its baseline from one that
// cannot: a click that changes nothing leaves it unchanged; a DOM change,
// a value typed, a change inside a shadow root or a child frame, or a new
// document count as changes.
func TestChanged(t *testing.T) {
	t.Parallel()
	eng := NewEngine()
	page := testPage(t, eng.InitScript())
	if _, err := page.Goto(fx.Page("watch.html")); err != nil {
		t.Fatal(err)
	}
	reg := refs.New()
	baseline := func() *Snapshot {
		t.Helper()
		s, err := eng.CaptureBaseline(page, reg)
		if err != nil {
			t.Fatal(err)
		}
		if eng.Changed(page) {
			t.Fatalf("changed right after its baseline:\n%s", s.Text())
		}
		return s
	}
	if !eng.Changed(page) {
		t.Fatal("a page with no baseline counts as unchanged")
	}
	base := baseline()
	for _, step := range []struct {
		name    string
		act     func() error
		changed bool
	}{
		{"a click that changes nothing", func() error { return page.Locator("#noop").Click() }, false},
		{"a snapshot that is not a baseline", func() error { _, err := eng.Capture(page, reg); return err }, false},
		{"a click that adds a button", func() error { return page.Locator("#add").Click() }, true},
		{"typing", func() error { return page.Locator("#name").Fill("ada") }, true},
		{"a change inside a shadow root", func() error {
			_, err := page.Evaluate(`() => document.getElementById('host').shadowRoot.querySelector('button').textContent = 'Renamed'`)
			return err
		}, true},
		{"a new document", func() error { _, err := page.Reload(); return err }, true},
	} {
		if err := step.act(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got := eng.Changed(page); got != step.changed {
			t.Errorf("%s: Changed = %v, want %v", step.name, got, step.changed)
		}
		if step.changed {
			now := baseline()
			if now.Doc == base.Doc && Diff(base, now).Empty() {
				t.Errorf("%s: counted as a change, but the snapshots do not differ", step.name)
			}
			base = now
		}
	}

	// A change in a cross-origin child frame.
	if _, err := page.Goto(fx.Page("frames.html")); err != nil {
		t.Fatal(err)
	}
	base = baseline()
	var child playwright.Frame
	for _, f := range page.Frames() {
		if f != page.MainFrame() && strings.Contains(f.URL(), "frame-inner") {
			child = f
		}
	}
	if child == nil {
		t.Fatalf("no child frame in frames.html: %v", len(page.Frames()))
	}
	if _, err := child.Evaluate(`() => document.body.append(Object.assign(document.createElement('button'), {textContent: 'In frame'}))`); err != nil {
		t.Fatal(err)
	}
	if !eng.Changed(page) {
		t.Error("a change inside a child frame is not seen")
	}
	now := baseline()
	if got := Diff(base, now).Render(0, false); !strings.Contains(got, `button "In frame" [ref=`) {
		t.Errorf("the frame's new button is not in the changes:\n%s", got)
	}
}

// A page that replaced MutationObserver before the bridge was built
// cannot hide its changes: it always counts as changed.
func TestChangedWithAFakeObserver(t *testing.T) {
	t.Parallel()
	eng := NewEngine()
	page := testPage(t, "") // no init script: the bridge comes after the page's
	if err := page.SetContent(`<script>window.MutationObserver = class { observe() {} disconnect() {} takeRecords() { return [] } }</script><button>B</button>`); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.CaptureBaseline(page, refs.New()); err != nil {
		t.Fatal(err)
	}
	if !eng.Changed(page) {
		t.Error("a page with a fake MutationObserver counts as unchanged")
	}
}
