package failurelog

import (
	"strings"
	"testing"
)

func TestDecideAndClear(t *testing.T) {
	var l Log
	l.Record(Entry{Kind: FrameTimeout, Reason: ReasonTimeout, FrameURL: "http://a/slow", Ref: "e4", Doc: 1})
	l.Record(Entry{Kind: AuthLoad, Reason: ReasonMissing, Role: "admin", AuthFile: "a.json", Detail: "no file at that path"})
	d := Decide(l.Entries())
	if d.Fatal != nil || len(d.Warnings) != 2 {
		t.Fatalf("decision = %+v", d)
	}
	text := Render(d.Warnings)
	for _, want := range []string{"Warnings:\n- The content of iframe [ref=e4] (http://a/slow) is missing: it did not answer in time",
		`browser_snapshot(ref="e4")`, `browser_save_auth(role="admin")`} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	// A main-frame failure is the decision's error.
	l.Record(Entry{Kind: FrameInjection, MainFrame: true, Reason: ReasonUnknown, Doc: 1})
	if d := Decide(l.Entries()); d.Fatal == nil || d.Fatal.Kind != FrameInjection {
		t.Errorf("main-frame failure not fatal: %+v", d)
	}
	// A navigation clears the frames; auth stays until it works.
	l.Frames()
	if es := l.Entries(); len(es) != 1 || es[0].Kind != AuthLoad {
		t.Errorf("after navigation: %+v", es)
	}
	l.AuthWorks()
	if len(l.Entries()) != 0 {
		t.Errorf("auth entries outlived working auth: %+v", l.Entries())
	}
}
