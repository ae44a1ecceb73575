package server

import (
	"context"
	"fmt"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/snapshot"
)

// Pages that render only what is in view: virtualised lists (react-window,
// TanStack Virtual, Virtuoso) keep a few dozen of their thousand rows in
// the DOM, so an element the agent looks for may not exist until its part
// of the list is scrolled to. browser_find scrolls such lists for it, and
// PageDown reaches a scrolling pane on a page that does not scroll itself.

// scrollersJS returns the elements of the main document that scroll
// vertically and are in view: the document itself first when it scrolls,
// then the largest panes.
const scrollersJS = `() => {
  const out = [];
  const root = document.scrollingElement || document.documentElement;
  const can = el => el.scrollHeight - el.clientHeight > 4;
  if (can(root) && getComputedStyle(document.documentElement).overflowY !== 'hidden') out.push(root);
  const all = document.body ? document.body.getElementsByTagName('*') : [];
  const panes = [];
  for (let i = 0; i < all.length && i < 20000; i++) {
    const el = all[i];
    if (el.clientHeight < 60 || !can(el)) continue;
    const oy = getComputedStyle(el).overflowY;
    if (oy !== 'auto' && oy !== 'scroll' && oy !== 'overlay') continue;
    const r = el.getBoundingClientRect();
    if (r.width < 40 || r.bottom <= 0 || r.top >= innerHeight) continue;
    panes.push([r.width * Math.min(r.height, innerHeight), el]);
  }
  panes.sort((a, b) => b[0] - a[0]);
  for (const p of panes.slice(0, 4)) out.push(p[1]);
  return out;
}`

// scrollStepJS scrolls el (down by most of its height, or to a position)
// and waits two frames for the page to render what came into view. It
// reports whether elements were added under it meanwhile: a list that
// renders as it scrolls does, a plain long page does not.
const scrollStepJS = `async (el, to) => {
  const root = el === (document.scrollingElement || document.documentElement);
  let added = 0;
  const count = recs => { for (const r of recs) for (const n of r.addedNodes) if (n.nodeType === 1) added++; };
  const mo = new MutationObserver(count);
  mo.observe(root ? document.body : el, {childList: true, subtree: true});
  const before = el.scrollTop;
  const top = to < 0 ? before + Math.max(40, Math.floor(el.clientHeight * 0.85)) : to;
  el.scrollTo({top, behavior: 'instant'});
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  await new Promise(r => setTimeout(r, 30));
  count(mo.takeRecords());
  mo.disconnect();
  return JSON.stringify({added, top: el.scrollTop, moved: el.scrollTop !== before,
    end: el.scrollTop + el.clientHeight >= el.scrollHeight - 2});
}`

// scrollerNameJS names a scroller for a result: the page, or the pane by
// its tag and id (or class), with the label of the list it holds.
const scrollerNameJS = `el => {
  if (el === (document.scrollingElement || document.documentElement)) return 'the page';
  let s = '<' + el.localName + (el.id ? ' id="' + el.id + '"' : (el.classList[0] ? ' class="' + el.classList[0] + '"' : '')) + '>';
  const list = el.matches('[aria-label]') ? el : el.querySelector('ul[aria-label], ol[aria-label], table[aria-label], [role][aria-label]');
  if (list) {
    const role = list.getAttribute('role') || {UL: 'list', OL: 'list', TABLE: 'table'}[list.tagName] || 'region';
    s += ' (' + role + ' ' + JSON.stringify(list.getAttribute('aria-label')) + ')';
  }
  return 'the scrolling area ' + s;
}`

// scrollStep is what scrollStepJS reports.
type scrollStep struct {
	Added int     `json:"added"`
	Top   float64 `json:"top"`
	Moved bool    `json:"moved"`
	End   bool    `json:"end"`
}

// findScrollBudget bounds how long browser_find scrolls for a match.
const findScrollBudget = 10 * time.Second

// scrolledFind is a match browser_find found by scrolling: the snapshot
// it is in, and what was scrolled, how far.
type scrolledFind struct {
	snap  *snapshot.Snapshot
	where string
	by    float64
}

// scrollFind looks for q in the parts of the page that render as they
// scroll: each scroller in view is scrolled down a step; one that adds no
// elements is a plain page and is left as it was. Others are scrolled from
// the top to their end, the page read after each step, until q matches;
// the scroller is left where the match is, so its element stays in the
// DOM. Scrollers searched in vain are put back. searched names them.
func (r *role) scrollFind(ctx context.Context, tab *browser.Tab, q snapshot.Query) (found *scrolledFind, searched []string) {
	deadline := time.Now().Add(findScrollBudget)
	list, err := tab.Page.EvaluateHandle(scrollersJS)
	if err != nil {
		return nil, nil
	}
	defer list.Dispose()
	n, err := evalJSON[int](list, `a => JSON.stringify(a.length)`)
	if err != nil {
		return nil, nil
	}
	for i := range n {
		// On the page: a handle's own EvaluateHandle cannot return an
		// element in playwright-go.
		h, err := tab.Page.EvaluateHandle(`({a, i}) => a[i]`, map[string]any{"a": list, "i": i})
		if err != nil {
			continue
		}
		defer h.Dispose()
		el := h.AsElement()
		if el == nil {
			continue
		}
		start, err := evalJSON[float64](el, scrollTopJS)
		if err != nil {
			continue
		}
		step := func(to float64) (scrollStep, bool) {
			st, err := evalJSON[scrollStep](el, scrollStepJS, to)
			return st, err == nil
		}
		first, ok := step(-1)
		if !ok || !first.Moved || first.Added == 0 {
			// Nothing renders as it scrolls here.
			step(start)
			continue
		}
		name, _ := evalAs[string](el, scrollerNameJS)
		searched = append(searched, name)
		if start > 0 {
			// The match may be above: start from the top.
			if first, ok = step(0); !ok {
				continue
			}
		}
		for st := first; ctx.Err() == nil; {
			snap, err := r.capture(tab.Page)
			if err != nil {
				break
			}
			if _, total := snap.Find(q, 1); total > 0 {
				return &scrolledFind{snap: snap, where: name, by: st.Top - start}, searched
			}
			if st.End || time.Now().After(deadline) {
				break
			}
			if st, ok = step(-1); !ok || !st.Moved {
				break
			}
		}
		step(start)
		if time.Now().After(deadline) {
			searched[len(searched)-1] += fmt.Sprintf(" (as far as %s of scrolling reached)", findScrollBudget)
			break
		}
	}
	return nil, searched
}

// paneKeyJS is the scrolling pane a scrolling key would move, had the page
// given it focus: only when nothing has focus and the page itself cannot
// scroll that way (a layout whose document does not scroll). It returns
// the largest pane in view that can, or null.
const paneKeyJS = `key => {
  const a = document.activeElement;
  if (a && a !== document.body && a !== document.documentElement) return null;
  const down = key === 'PageDown' || key === 'End';
  const can = el => down ? el.scrollTop + el.clientHeight < el.scrollHeight - 2 : el.scrollTop > 0;
  const root = document.scrollingElement || document.documentElement;
  if (can(root) && getComputedStyle(document.documentElement).overflowY !== 'hidden') return null;
  let best = null, area = 0;
  const all = document.body ? document.body.getElementsByTagName('*') : [];
  for (let i = 0; i < all.length && i < 20000; i++) {
    const el = all[i];
    if (el.clientHeight < 60 || el.scrollHeight - el.clientHeight <= 4 || !can(el)) continue;
    const oy = getComputedStyle(el).overflowY;
    if (oy !== 'auto' && oy !== 'scroll' && oy !== 'overlay') continue;
    const r = el.getBoundingClientRect();
    const visible = Math.max(0, Math.min(r.bottom, innerHeight) - Math.max(r.top, 0)) * r.width;
    if (visible > area) { best = el; area = visible; }
  }
  return best;
}`

// paneScrollJS scrolls the pane as the key scrolls a page, unless the
// page's own handler of the key moved it already; it reports whether it
// scrolled.
const paneScrollJS = `(el, {key, top}) => {
  if (el.scrollTop !== top) return false;
  const page = Math.max(40, el.clientHeight * 0.875);
  const to = {PageDown: top + page, PageUp: top - page, Home: 0, End: el.scrollHeight}[key];
  el.scrollTo({top: to, behavior: 'instant'});
  return el.scrollTop !== top;
}`

// scrollKeys are the keys that scroll a page by itself.
var scrollKeys = map[string]bool{"PageDown": true, "PageUp": true, "Home": true, "End": true}

// pressScrolling presses key; when it is a scrolling key, nothing has
// focus and the page does not scroll that way, it scrolls the page's
// largest scrolling pane instead, as the key would after a click in the
// pane, and says so.
func (a *acting) pressScrolling(key string) error {
	var pane playwright.ElementHandle
	var top float64
	if scrollKeys[key] {
		if h, err := a.tab.Page.EvaluateHandle(paneKeyJS, key); err == nil {
			if pane = h.AsElement(); pane == nil {
				h.Dispose()
			} else {
				defer pane.Dispose()
				top, err = evalJSON[float64](pane, scrollTopJS)
				if err != nil {
					pane = nil
				}
			}
		}
	}
	if err := a.within(func() error { return a.tab.Page.Keyboard().Press(key) }); err != nil {
		return err
	}
	a.res.addDid("Pressed %s.", key)
	if pane == nil {
		return nil
	}
	if moved, err := evalAs[bool](pane, paneScrollJS, map[string]any{"key": key, "top": top}); err == nil && moved {
		name, _ := evalAs[string](pane, scrollerNameJS)
		a.res.addDid("Nothing had focus and the page itself does not scroll, so %s scrolled %s instead, as it would after a click in it.", key, name)
	}
	return nil
}

// scrolledBy says how far a scroll went, in words.
func scrolledBy(px float64) string {
	switch {
	case px > 0:
		return fmt.Sprintf("down %.0f px", px)
	case px < 0:
		return fmt.Sprintf("up %.0f px", -px)
	}
	return "back to where it was"
}

// scrollTopJS reads a scroller's position (as JSON: Playwright hands
// whole numbers back as int, fractions as float64).
const scrollTopJS = `el => JSON.stringify(el.scrollTop)`
