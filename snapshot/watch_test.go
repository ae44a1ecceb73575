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
		if changed, same := eng.Changed(page); changed || !same {
			t.Fatalf("changed right after its baseline (changed %v, same document %v):\n%s", changed, same, s.Text())
		}
		return s
	}
	if changed, same := eng.Changed(page); !changed || same {
		t.Fatal("a page with no baseline counts as unchanged, or as the same document")
	}
	base := baseline()
	for _, step := range []struct {
		name          string
		act           func() error
		changed, same bool
	}{
		{"a click that changes nothing", func() error { return page.Locator("#noop").Click() }, false, true},
		{"a snapshot that is not a baseline", func() error { _, err := eng.Capture(page, reg); return err }, false, true},
		{"a click that adds a button", func() error { return page.Locator("#add").Click() }, true, true},
		{"typing", func() error { return page.Locator("#name").Fill("ada") }, true, true},
		{"a change inside a shadow root", func() error {
			_, err := page.Evaluate(`() => document.getElementById('host').shadowRoot.querySelector('button').textContent = 'Renamed'`)
			return err
		}, true, true},
		{"a pushState route change", func() error {
			_, err := page.Evaluate(`() => { history.pushState({}, '', '?view=2'); document.body.append('View 2') }`)
			return err
		}, true, true},
		{"a new document", func() error { _, err := page.Reload(); return err }, true, false},
	} {
		if err := step.act(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if changed, same := eng.Changed(page); changed != step.changed || same != step.same {
			t.Errorf("%s: Changed = %v, same document %v; want %v, %v", step.name, changed, same, step.changed, step.same)
		}
		if step.changed {
			now := baseline()
			if (now.Doc == base.Doc) != step.same {
				t.Errorf("%s: the snapshots' documents: %v and %v", step.name, base.Doc, now.Doc)
			}
			if step.same && Diff(base, now).Empty() {
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
	if changed, same := eng.Changed(page); !changed || !same {
		t.Errorf("a change inside a child frame: changed %v, same document %v", changed, same)
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
	if changed, _ := eng.Changed(page); !changed {
		t.Error("a page with a fake MutationObserver counts as unchanged")
	}
}
