package snapshot

import (
	"strings"
	"testing"

	"github.com/retrace-dev/retrace/refs"
)

// TestClosedShadowRootRefs acts through refs on elements inside closed
// shadow roots (one nested in another), on a page that also tries to break
// how they are recorded: each ref resolves to its element, a click lands,
// and refs stay the same across snapshots.
func TestClosedShadowRootRefs(t *testing.T) {
	eng := NewEngine()
	page := testPage(t, eng.InitScript())
	if _, err := page.Goto(fx.Page("a11y/shadow-closed.html")); err != nil {
		t.Fatal(err)
	}
	reg := refs.New()
	snap, err := eng.Capture(page, reg)
	if err != nil {
		t.Fatal(err)
	}
	find := func(s *Snapshot, role, name string) refs.Record {
		t.Helper()
		for _, r := range s.Refs {
			if r.Role == role && r.Name == name {
				return r
			}
		}
		t.Fatalf("no %s %q in:\n%s", role, name, s.Text())
		return refs.Record{}
	}
	save := find(snap, "button", "Save settings")
	dark := find(snap, "button", "Dark mode")
	nick := find(snap, "textbox", "Nickname")

	el, err := eng.Resolve(save)
	if err != nil {
		t.Fatal(err)
	}
	if err := el.Click(); err != nil {
		t.Fatalf("click %s: %v", save.Ref, err)
	}
	if el, err = eng.Resolve(nick); err != nil {
		t.Fatal(err)
	}
	if err := el.Fill("ada"); err != nil {
		t.Fatalf("fill %s: %v", nick.Ref, err)
	}
	if el, err = eng.Resolve(dark); err != nil {
		t.Fatal(err)
	}
	if _, err := el.Evaluate("e => e.addEventListener('click', () => e.setAttribute('aria-pressed', 'true'))"); err != nil {
		t.Fatal(err)
	}
	if err := el.Click(); err != nil {
		t.Fatalf("click %s: %v", dark.Ref, err)
	}

	again, err := eng.Capture(page, reg)
	if err != nil {
		t.Fatal(err)
	}
	text := again.Text()
	for _, want := range []string{
		"paragraph: saved",
		`textbox "Nickname" [ref=` + nick.Ref + `]: "ada"`,
		`button "Dark mode" [pressed] [ref=` + dark.Ref + `]`,
		`button "Save settings" [ref=` + save.Ref + `]`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("second snapshot lacks %q:\n%s", want, text)
		}
	}
}
