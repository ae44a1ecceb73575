package snapshot

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/refs"
)

// TestTimedOutWalkStops checks that a walk the Go side gave up on stops in
// the page too, instead of keeping its main thread busy for an answer no
// one reads. The measure of "at once" is how long the whole walk takes in
// the page on this machine.
func TestTimedOutWalkStops(t *testing.T) {
	page := testPage(t, "")
	if _, err := page.Goto(fx.Page("huge.html?nodes=200000"), playwright.PageGotoOptions{
		WaitUntil: playwright.WaitUntilStateLoad, Timeout: playwright.Float(120000)}); err != nil {
		t.Fatal(err)
	}
	eng, reg := NewEngine(), refs.New()
	eng.WalkBudget, eng.AnswerGrace = 10*time.Minute, time.Minute
	if snap, err := eng.Capture(page, reg); err != nil || snap.Cut { // installs the bridge
		t.Fatalf("whole walk: %v (cut: %v)", err, snap != nil && snap.Cut)
	}
	d := eng.current[page.MainFrame()]
	ms, err := d.handle.Evaluate(`(b, a) => { const t = performance.now(); b.snapshotJSON(a); return performance.now() - t; }`,
		map[string]any{"nextRef": reg.Next()})
	if err != nil {
		t.Fatal(err)
	}
	full := pageTime(ms)

	// The bridge stops by itself once the caller's wait is over, and says so.
	out, err := d.handle.Evaluate(snapshotJS, map[string]any{"nextRef": reg.Next(), "abortAfterMs": 1})
	if err != nil {
		t.Fatal(err)
	}
	var res bridgeResult
	if s, _ := out.(string); json.Unmarshal([]byte(s), &res) != nil || !res.Aborted || len(res.Tree) != 0 {
		t.Fatalf("a walk past its abort time returned %.200v, want aborted and no tree", out)
	}

	// No walk budget: only the Go side's wait bounds the walk, and it gives
	// up long before the walk could end.
	eng.WalkBudget, eng.AnswerGrace = 0, full/10
	before, err := page.Evaluate(`performance.now()`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Capture(page, reg); !errors.Is(err, ErrPageBusy) {
		t.Fatalf("capture after %v: %v, want ErrPageBusy", eng.AnswerGrace, err)
	}
	after, err := page.Evaluate(`performance.now()`)
	if err != nil {
		t.Fatal(err)
	}
	busy := pageTime(after) - pageTime(before)
	t.Logf("whole walk %v; the capture gave up after %v and the page was free %v after it began", full, eng.AnswerGrace, busy)
	if busy > full/2 {
		t.Errorf("the page answered %v after a capture that gave up after %v (the whole walk takes %v): the walk went on", busy, eng.AnswerGrace, full)
	}

	// The walk budget reaches the page too: it cuts the walk, not the answer.
	eng.WalkBudget, eng.AnswerGrace = time.Millisecond, time.Minute
	if snap, err := eng.Capture(page, reg); err != nil || !snap.Cut {
		t.Errorf("capture with a 1 ms walk budget: %v (cut: %v), want a cut snapshot", err, snap != nil && snap.Cut)
	}
}

// pageTime turns milliseconds of the page's clock into a duration.
func pageTime(v any) time.Duration {
	switch x := v.(type) {
	case float64:
		return time.Duration(x * float64(time.Millisecond))
	case int:
		return time.Duration(x) * time.Millisecond
	}
	return 0
}
