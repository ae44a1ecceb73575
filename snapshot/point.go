package snapshot

import (
	"time"

	"github.com/retrace-dev/retrace/refs"
)

// Where the mouse acts on an element at once, without Playwright's waits:
// ClickCheckJS looks at the element in its own frame, and PagePoint takes
// its point up through the iframes above it to the page's viewport, where
// the mouse is.

// pointHelpersJS are the page functions both checks share: whether an
// element, or one holding it, is being animated, and the element at a
// point of the document, through open shadow roots.
const pointHelpersJS = `
  const moving = (el) => {
    if (typeof document.getAnimations !== 'function') return false;
    for (const an of document.getAnimations()) {
      const t = an.playState === 'running' && an.effect && an.effect.target;
      if (t && (t === el || (typeof t.contains === 'function' && t.contains(el)))) return true;
    }
    return false;
  };
  const hitAt = (x, y) => {
    let hit = document.elementFromPoint(x, y);
    while (hit && hit.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  };`

// ClickCheckJS looks at an element before a click or a hover, in one round
// trip, in the element's own frame. opens: the click follows a link or
// submits a form into another window (target=_blank or a named one).
// ready: the element can take the mouse now with no waiting, at x, y
// (client coordinates of its frame, after scrolling it into view when
// needed, which scrolled says): connected, enabled, not animating, and
// the element that point hits is it or inside it. vw and vh are the size
// of its frame's viewport. Anything else, or any doubt, leaves ready
// false, and Playwright's click waits and explains instead.
const ClickCheckJS = `(el) => {` + pointHelpersJS + `
  const r = { opens: false, ready: false, scrolled: false, x: 0, y: 0, vw: innerWidth, vh: innerHeight };
  try {
    const other = (t) => !!t && !['_self', '_parent', '_top'].includes(t.toLowerCase());
    const a = el.closest('a[href], area[href]');
    if (a) r.opens = other(a.getAttribute('target'));
    else if (el.form && (el.type === 'submit' || el.type === 'image')) r.opens = other(el.getAttribute('formtarget') || el.form.getAttribute('target'));
    if (!el.isConnected || el.matches(':disabled') || el.closest('[aria-disabled="true"]')) return r;
    if (moving(el)) return r;
    const box = () => { for (const q of el.getClientRects()) if (q.width >= 1 && q.height >= 1) return q; return null; };
    let q = box();
    if (!q) return r;
    const w = innerWidth, h = innerHeight;
    if (q.left < 0 || q.top < 0 || q.right > w || q.bottom > h) {
      el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
      r.scrolled = true;
      q = box();
      if (!q) return r;
    }
    const x = q.left + q.width / 2, y = q.top + q.height / 2;
    if (!(x >= 0 && y >= 0 && x < w && y < h)) return r;
    for (let n = hitAt(x, y); n; n = n.parentNode || n.host) {
      if (n === el) { r.ready = true; r.x = x; r.y = y; break; }
    }
  } catch (e) { r.ready = false; }
  return r;
}`

// framePointJS places a point of a child frame's viewport in the viewport
// of the document that holds its iframe (b.element(ref)): the iframe's
// content box offset, when the point is inside that box and the parent's
// viewport, the iframe is what is there and it is not moving. Nothing is
// scrolled: see PagePoint. CSS zoom scales the offset and the point; a
// transform other than a move, on the iframe or above it, or a content
// box that is not the child's viewport (vw by vh, as the child measured
// it), is not mapped. It gives its own viewport's size for the next frame
// up.
const framePointJS = `({b, ref, x, y, vw, vh}) => {` + pointHelpersJS + `
  const r = { ok: false, x: 0, y: 0, vw: innerWidth, vh: innerHeight };
  try {
    const f = b.element(ref);
    if (!f || !f.isConnected) return r;
    // A transform on the iframe or above it (other than a move) does not
    // map points by offset and scale.
    for (let e = f; e; ) {
      const cs = getComputedStyle(e);
      if ((cs.rotate && cs.rotate !== 'none') || (cs.scale && cs.scale !== 'none')) return r;
      const t = cs.transform;
      if (t && t !== 'none') {
        const m = /^matrix\(([^,]+),([^,]+),([^,]+),([^,]+),/.exec(t.replace(/\s+/g, ''));
        if (!m || +m[1] !== 1 || +m[2] !== 0 || +m[3] !== 0 || +m[4] !== 1) return r;
      }
      if (e.parentElement) { e = e.parentElement; continue; }
      const root = e.getRootNode();
      e = root && root.host ? root.host : null;
    }
    const q = f.getBoundingClientRect();
    // CSS zoom on the iframe or above scales its box on screen alike both
    // ways; the child's viewport fills its content box.
    if (!(f.offsetWidth > 0 && f.offsetHeight > 0)) return r;
    const k = q.width / f.offsetWidth;
    if (!(k > 0) || Math.abs(q.height / f.offsetHeight - k) > 0.01) return r;
    const cs = getComputedStyle(f);
    const pl = parseFloat(cs.paddingLeft) || 0, pt = parseFloat(cs.paddingTop) || 0;
    const pr = parseFloat(cs.paddingRight) || 0, pb = parseFloat(cs.paddingBottom) || 0;
    const w = f.clientWidth - pl - pr, h = f.clientHeight - pt - pb;
    if (Math.abs(w - vw) > 1 || Math.abs(h - vh) > 1) return r;
    if (!(x >= 0 && y >= 0 && x < vw && y < vh)) return r;
    const px = q.left + (f.clientLeft + pl + x) * k, py = q.top + (f.clientTop + pt + y) * k;
    if (!(px >= 0 && py >= 0 && px < innerWidth && py < innerHeight)) return r;
    // An iframe that moves would be gone from the point by the click.
    if (hitAt(px, py) !== f || moving(f)) return r;
    r.ok = true; r.x = px; r.y = py;
  } catch (e) { r.ok = false; }
  return r;
}`

// PagePoint maps the point (x, y) of the viewport of the frame rec was
// issued in (vw by vh, as that frame measured it) to the page's (the main
// frame's) viewport, through the iframe of each frame above it, one round
// trip per frame: where a mouse event lands on that point. ok is false
// when the engine does not know an iframe's place (the frame was not read
// by a snapshot), an iframe moved out of its document, is transformed,
// scaled or moving, the point falls outside an iframe's box or its
// parent's viewport (nothing is scrolled here: a scroll just before a
// click would not reach a frame of another site in time), or something
// covers the iframe there.
func (e *Engine) PagePoint(rec refs.Record, x, y, vw, vh float64) (px, py float64, ok bool) {
	e.mu.Lock()
	d := e.docs[rec.Doc]
	e.mu.Unlock()
	for d != nil && !d.main {
		e.mu.Lock()
		up, ref, current := d.up, d.upRef, e.current[d.frame] == d
		e.mu.Unlock()
		if up == nil || !current || up.gone || up.handle == nil {
			return 0, 0, false
		}
		v, err := withTimeout(time.Second, func() (any, error) {
			return up.frame.Evaluate(framePointJS, map[string]any{"b": up.handle, "ref": ref, "x": x, "y": y, "vw": vw, "vh": vh})
		})
		m, _ := v.(map[string]any)
		if err != nil || m == nil || m["ok"] != true {
			return 0, 0, false
		}
		var xok, yok, wok, hok bool
		x, xok = Number(m["x"])
		y, yok = Number(m["y"])
		vw, wok = Number(m["vw"])
		vh, hok = Number(m["vh"])
		if !xok || !yok || !wok || !hok {
			return 0, 0, false
		}
		d = up
	}
	return x, y, d != nil
}

// Number is a number a page function returned: playwright-go gives a
// whole number as an int and any other as a float64.
func Number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	}
	return 0, false
}
