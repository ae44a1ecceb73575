package browser

import (
	"context"
	"time"

	"github.com/playwright-community/playwright-go"
)

// SettleLimits bound each stage of waiting for the page to settle after an
// action. None is a fixed sleep: each stage ends as soon as its condition
// holds.
type SettleLimits struct {
	// Navigation bounds waiting for a navigation the action started to reach
	// DOMContentLoaded.
	Navigation time.Duration
	// Network bounds waiting for requests the action started.
	Network time.Duration
	// DOMQuiet is how long the DOM must see no mutation; DOMMax bounds it.
	DOMQuiet time.Duration
	DOMMax   time.Duration
}

// DefaultSettleLimits returns the limits used after clicks and typing.
func DefaultSettleLimits(nav time.Duration) SettleLimits {
	return SettleLimits{Navigation: nav, Network: 1500 * time.Millisecond,
		DOMQuiet: 40 * time.Millisecond, DOMMax: time.Second}
}

// Settled says what the settle step saw.
type Settled struct {
	// Navigated is true when the main frame committed a new document.
	Navigated bool
	// LoadErr is set when a navigation started but did not load in time.
	LoadErr error
	// PendingRequests counts requests still running when waiting stopped.
	PendingRequests int
}

// domQuietJS resolves once the document has seen no mutation for quiet ms
// (after one animation frame, so pending renders land), or after max ms.
const domQuietJS = `(o) => new Promise((resolve) => {
  const start = performance.now();
  let last = start;
  const mo = new MutationObserver(() => { last = performance.now(); });
  mo.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  const check = () => {
    const now = performance.now();
    if (now - last >= o.quiet || now - start >= o.max) { mo.disconnect(); resolve(true); return; }
    setTimeout(check, Math.max(5, o.quiet - (now - last)));
  };
  requestAnimationFrame(() => setTimeout(check, 0));
})`

// Settle waits, within lim, for what the action since m started: a
// navigation of the main frame, its requests, and DOM mutations.
func (t *Tab) Settle(ctx context.Context, m Mark, lim SettleLimits) Settled {
	var s Settled
	// A navigation the action started can show up late: its request event
	// arrives after the action returned, or the page starts it from a
	// handler while the DOM goes quiet. Seen after a round, it gets one
	// more round on the new document.
	for round := 0; round < 2; round++ {
		if !t.settleRound(ctx, m, lim, &s) {
			return s
		}
		navReq, committed, _, _ := t.since(m)
		if !(navReq && !committed) && !(committed && !s.Navigated) {
			return s
		}
	}
	return s
}

// settleRound is one pass of Settle's stages; it reports false when a
// load failed and waiting is over.
func (t *Tab) settleRound(ctx context.Context, m Mark, lim SettleLimits, s *Settled) bool {
	navReq, committed, _, _ := t.since(m)
	if navReq && !committed {
		// Wait for the navigation to commit, or for its request to end
		// without one (a download, a 204, an error).
		t.waitUntil(ctx, lim.Navigation, func() bool {
			_, c, pending, _ := t.since(m)
			return c || pending == 0
		})
		_, committed, _, _ = t.since(m)
	}
	if committed {
		s.Navigated = true
		err := t.Page.WaitForLoadState(playwright.PageWaitForLoadStateOptions{
			State:   playwright.LoadStateDomcontentloaded,
			Timeout: playwright.Float(float64(lim.Navigation.Milliseconds())),
		})
		if err != nil {
			s.LoadErr = err
			return false
		}
	}
	// A request the action's handler started can be seen only after the
	// network wait looked (its event is late, or the handler awaited
	// something first); one seen after the DOM went quiet gets one more
	// wait, and the DOM the answer changes one more quiet window.
	for pass := 0; pass < 2; pass++ {
		t.waitUntil(ctx, lim.Network, func() bool {
			_, _, pending, _ := t.since(m)
			return pending == 0
		})
		_, _, s.PendingRequests, _ = t.since(m)
		t.domQuiet(ctx, lim)
		if _, _, pending, _ := t.since(m); pending == 0 || s.PendingRequests > 0 {
			break
		}
	}
	return true
}

// domQuiet waits, within lim, for the document to see no mutation for
// lim.DOMQuiet.
func (t *Tab) domQuiet(ctx context.Context, lim SettleLimits) {
	if lim.DOMMax > 0 && !t.Closed() {
		// An error here means the document changed again; the next round
		// or the result's URL says so, so it is not an error of the action.
		// A page whose main thread never yields would hold the call forever:
		// the wait is bounded, and an abandoned evaluation ends on its own.
		quiet := make(chan struct{})
		go func() {
			defer close(quiet)
			_, _ = t.Page.Evaluate(domQuietJS, map[string]any{
				// int, not int64: playwright-go sends an int64 as undefined.
				"quiet": int(lim.DOMQuiet.Milliseconds()), "max": int(lim.DOMMax.Milliseconds())})
		}()
		timer := time.NewTimer(lim.DOMMax + 300*time.Millisecond)
		defer timer.Stop()
		select {
		case <-quiet:
		case <-timer.C:
			// The page ran no timer in that time: its main thread is busy,
			// and the reads that follow should not wait long on it.
			t.Stuck.Store(true)
		case <-ctx.Done():
		}
	}
}

// waitUntil waits until cond holds, limit passes, or ctx ends. cond is re-checked on every tab event.
func (t *Tab) waitUntil(ctx context.Context, limit time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		// Take the wake channel before checking, so no event is missed.
		_, _, _, wake := t.since(Mark{})
		if cond() {
			return true
		}
		select {
		case <-wake:
		case <-deadline.C:
			return cond()
		case <-ctx.Done():
			return cond()
		}
	}
}
