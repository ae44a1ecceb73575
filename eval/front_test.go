package eval

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func newTestFront(t *testing.T, events *eventLog) *front {
	t.Helper()
	f, err := newFront(events)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

func get(ctx context.Context, t *testing.T, u string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestFrontsKeepRunsApart: runs going at once each see only the events
// their own pages reported, though the fixture keeps one log.
func TestFrontsKeepRunsApart(t *testing.T) {
	events := newEventLog(fx)
	a, b := newTestFront(t, events), newTestFront(t, events)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			f, e := a, "a"
			if i%2 == 1 {
				f, e = b, "b"
			}
			if code, body := get(context.Background(), t, f.URL+"/eval/event?e="+e); code != http.StatusNoContent {
				t.Errorf("event: %d %s", code, body)
			}
		})
	}
	// The auth scenarios' payment, logged by the fixture itself.
	sess := fx.NewSession("ada")
	req, _ := http.NewRequest(http.MethodPost, b.URL+"/eval/pay", strings.NewReader(url.Values{}.Encode()))
	req.AddCookie(&http.Cookie{Name: "session", Value: sess})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	wg.Wait()
	if got := a.Events(); len(got) != 10 || slices.ContainsFunc(got, func(e string) bool { return e != "a" }) {
		t.Errorf("front a saw %v, want 10 × a", got)
	}
	if got := b.Events(); len(got) != 11 || !slices.Contains(got, "paid") || slices.Contains(got, "a") {
		t.Errorf("front b saw %v, want 10 × b and paid", got)
	}
	if n := events.unattributed(); n != 0 {
		t.Errorf("%d events unattributed", n)
	}
}

// TestFrontSlowOncePerRun: each run's first load of a slow-once page hangs
// and its retry loads, whatever the other runs did.
func TestFrontSlowOncePerRun(t *testing.T) {
	events := newEventLog(fx)
	for _, f := range []*front{newTestFront(t, events), newTestFront(t, events)} {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		code, _ := get(ctx, t, f.URL+"/eval/slow-once/_pay.html")
		cancel()
		if code != 0 {
			t.Errorf("first load answered %d, want it to hang", code)
		}
		if code, body := get(context.Background(), t, f.URL+"/eval/slow-once/_pay.html"); code != http.StatusOK || !strings.Contains(body, "Pay") {
			t.Errorf("retry: %d %.80s", code, body)
		}
	}
}

// TestFrontNamesItsOrigins: a page that embeds the second origin names the
// run's, so the frame's requests go through the run's front too.
func TestFrontNamesItsOrigins(t *testing.T) {
	f := newTestFront(t, newEventLog(fx))
	_, body := get(context.Background(), t, f.URL+"/eval/_pay-xframe.html")
	if !strings.Contains(body, f.OtherURL+"/eval/_pay-inner.html") || strings.Contains(body, fx.OtherURL) {
		t.Errorf("the page names %q, want the front's %s", body, f.OtherURL)
	}
	if code, body := get(context.Background(), t, f.OtherURL+"/eval/_pay-inner.html"); code != http.StatusOK {
		t.Errorf("second origin: %d %.80s", code, body)
	}
}
