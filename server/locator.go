package server

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/playwright-community/playwright-go"
)

// candidate is a locator as a user writes it (code) and as Playwright's
// selector engine reads it (selector), to check it on the page.
type candidate struct {
	code, selector string
}

func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`).Replace(s) + "'"
}

func attrSel(v string, exact bool) string {
	q := `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
	if exact {
		return q + "s"
	}
	return q + "i"
}

func textSel(v string, exact bool) string {
	data, _ := json.Marshal(v)
	if exact {
		return string(data) + "s"
	}
	return string(data) + "i"
}

func byRole(role, name string) candidate {
	if name == "" {
		return candidate{fmt.Sprintf("getByRole(%s)", jsString(role)), "internal:role=" + role}
	}
	return candidate{fmt.Sprintf("getByRole(%s, { name: %s, exact: true })", jsString(role), jsString(name)),
		fmt.Sprintf("internal:role=%s[name=%s]", role, attrSel(name, true))}
}

func byTestID(attr, v string) candidate {
	if attr == "data-testid" {
		return candidate{fmt.Sprintf("getByTestId(%s)", jsString(v)), fmt.Sprintf("internal:testid=[data-testid=%s]", attrSel(v, true))}
	}
	css := fmt.Sprintf(`[%s=%q]`, attr, v)
	return candidate{fmt.Sprintf("locator(%s)", jsString(css)), css}
}

func (c candidate) then(n candidate) candidate {
	return candidate{c.code + "." + n.code, c.selector + " >> " + n.selector}
}

// testIDOf returns the first test-id style attribute of n.
func testIDOf(n nodeInfo) (string, string) {
	for _, a := range []string{"data-testid", "data-test-id", "data-test", "data-cy", "data-qa"} {
		if v, ok := n.Attrs[a]; ok && v != "" {
			return a, v
		}
	}
	return "", ""
}

// framePrefix is the locator of the iframes leading to frame, "" for the
// main frame.
func framePrefix(frame playwright.Frame) (candidate, error) {
	var parts []candidate
	for f := frame; f.ParentFrame() != nil; f = f.ParentFrame() {
		el, err := f.FrameElement()
		if err != nil {
			return candidate{}, err
		}
		av, err := evalJSON[[2]string](el, `(f) => {
  for (const a of ['title', 'name', 'id', 'src']) {
    const v = f.getAttribute(a);
    if (v) return JSON.stringify([a, v]);
  }
  return JSON.stringify(['', String([...f.parentNode.children].filter(c => c.localName === 'iframe').indexOf(f) + 1)]);
}`)
		if err != nil {
			return candidate{}, err
		}
		css := fmt.Sprintf(`iframe[%s=%q]`, av[0], av[1])
		if av[0] == "" {
			css = fmt.Sprintf("iframe:nth-of-type(%s)", av[1])
		}
		parts = append([]candidate{{fmt.Sprintf("locator(%s).contentFrame()", jsString(css)), css + " >> internal:control=enter-frame"}}, parts...)
	}
	if len(parts) == 0 {
		return candidate{}, nil
	}
	p := parts[0]
	for _, q := range parts[1:] {
		p = p.then(q)
	}
	return p, nil
}

// looksGenerated reports whether an id looks made by a framework (and so
// changes between builds): many digits, colons, a long hex run, a
// framework's prefix.
func looksGenerated(id string) bool {
	digits := 0
	for _, r := range id {
		if r >= '0' && r <= '9' {
			digits++
		}
	}
	return strings.ContainsAny(id, ":") || digits >= 4 || longHex.MatchString(id) ||
		strings.HasPrefix(id, "react-") || strings.HasPrefix(id, "ember")
}

// longHex is a run of 8 or more hex digits, as in hashed ids.
var longHex = regexp.MustCompile(`[0-9a-fA-F]{8,}`)

// cssIdent escapes an id for a CSS #id selector, as CSS.escape does for
// the characters ids hold: a leading digit, a digit after a leading "-",
// and a lone "-" are escaped.
func cssIdent(id string) string {
	if id == "-" {
		return `\-`
	}
	var b strings.Builder
	for i, r := range id {
		digit := r >= '0' && r <= '9'
		if digit && (i == 0 || (i == 1 && id[0] == '-')) {
			fmt.Fprintf(&b, `\%x `, r)
			continue
		}
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || r == '_' || r == '-' || digit || r > 127 {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, `\%x `, r)
		}
	}
	return b.String()
}

// nodeInfo is one element as structureJS describes it.
type nodeInfo struct {
	Tag   string            `json:"tag"`
	Role  string            `json:"role"`
	Name  string            `json:"name"`
	Attrs map[string]string `json:"attrs"`
	Class string            `json:"class"`
}

// repeatInfo is the repeated structure an element belongs to: the item
// (the element or an ancestor) whose siblings share its tag and classes.
type repeatInfo struct {
	Level     int        `json:"level"` // 0: the element itself, n: its n-th ancestor
	Item      nodeInfo   `json:"item"`
	Container nodeInfo   `json:"container"`
	Count     int        `json:"count"`
	Texts     []string   `json:"texts"` // each item's distinguishing text
	Self      int        `json:"self"`  // index of the element's item
	Key       string     `json:"key"`   // a line of text only the element's item has
	Siblings  []nodeInfo `json:"-"`
}

type structureInfo struct {
	Self      nodeInfo    `json:"self"`
	Ancestors []nodeInfo  `json:"ancestors"` // nearest first
	Repeat    *repeatInfo `json:"repeat"`
	Frames    []nodeInfo  `json:"-"`
}

// structureJS describes an element, its ancestors and its repeated
// structure, as a JSON string.
const structureJS = `(el) => {
  const IDS = ['data-testid', 'data-test-id', 'data-test', 'data-cy', 'data-qa', 'id', 'aria-label', 'name'];
  const implicit = (e) => {
    const t = e.localName;
    const map = {nav: 'navigation', main: 'main', header: 'banner', footer: 'contentinfo', form: 'form', ul: 'list', ol: 'list',
      li: 'listitem', table: 'table', tr: 'row', td: 'cell', th: 'columnheader', article: 'article', aside: 'complementary',
      dialog: 'dialog', button: 'button', select: 'combobox', textarea: 'textbox', h1: 'heading', h2: 'heading', h3: 'heading',
      h4: 'heading', h5: 'heading', h6: 'heading', fieldset: 'group', img: 'img'};
    if (t === 'a') return e.hasAttribute('href') ? 'link' : '';
    if (t === 'input') {
      const ty = (e.getAttribute('type') || 'text').toLowerCase();
      return {checkbox: 'checkbox', radio: 'radio', button: 'button', submit: 'button', reset: 'button', range: 'slider',
        search: 'searchbox', number: 'spinbutton'}[ty] || 'textbox';
    }
    if (t === 'section') return (e.hasAttribute('aria-label') || e.hasAttribute('aria-labelledby')) ? 'region' : '';
    return map[t] || '';
  };
  const short = (s, n) => { s = (s || '').replace(/\s+/g, ' ').trim(); return s.length > n ? s.slice(0, n) + '…' : s; };
  const nameOf = (e) => {
    if (e.hasAttribute('aria-label')) return short(e.getAttribute('aria-label'), 60);
    const lb = e.getAttribute('aria-labelledby');
    if (lb) return short(lb.split(/\s+/).map(id => (document.getElementById(id) || {}).textContent || '').join(' '), 60);
    if (e.labels && e.labels.length) return short(e.labels[0].textContent, 60);
    const r = e.getAttribute('role') || implicit(e);
    if (['button', 'link', 'heading', 'listitem', 'cell', 'columnheader', 'row', 'checkbox', 'radio', 'tab', 'menuitem', 'option'].includes(r))
      return short(e.innerText || e.textContent, 60);
    const leg = e.localName === 'fieldset' && e.querySelector('legend');
    return leg ? short(leg.textContent, 60) : '';
  };
  const info = (e) => {
    const attrs = {};
    for (const a of IDS) if (e.hasAttribute(a)) attrs[a] = short(e.getAttribute(a), 80);
    return {tag: e.localName, role: e.getAttribute('role') || implicit(e), name: nameOf(e), attrs,
      class: short(typeof e.className === 'string' ? e.className : '', 60)};
  };
  const parentOf = (e) => e.parentElement || (e.parentNode && e.parentNode.host) || null;
  const sig = (e) => e.localName + '|' + [...e.classList].sort().join('.');
  const ancestors = [];
  for (let p = parentOf(el); p && p.localName !== 'html'; p = parentOf(p)) ancestors.push(info(p));
  let repeat = null;
  let level = 0;
  for (let e = el; e && e.parentElement && e.localName !== 'body'; e = e.parentElement, level++) {
    const same = [...e.parentElement.children].filter(c => sig(c) === sig(e));
    if (same.length < 2) continue;
    const texts = same.map(c => short(c.innerText || c.textContent, 50));
    // The item's own words: its first line of text no sibling has (text
    // filters match within one text node's run, so a whole line is safe).
    const lines = (c) => (c.innerText || c.textContent || '').split('\n').map(l => l.replace(/\s+/g, ' ').trim()).filter(Boolean);
    const others = new Set(same.filter(c => c !== e).flatMap(lines));
    const key = lines(e).find(l => !others.has(l)) || '';
    repeat = {level, item: info(e), container: info(e.parentElement), count: same.length,
      texts: texts.slice(0, 10), self: same.indexOf(e), key: short(key, 50)};
    break;
  }
  return JSON.stringify({self: info(el), ancestors, repeat});
}`

func (n nodeInfo) String() string {
	var b strings.Builder
	b.WriteString("<" + n.Tag)
	if n.Class != "" {
		fmt.Fprintf(&b, " class=%q", n.Class)
	}
	b.WriteString(">")
	if n.Role != "" {
		b.WriteString(" " + n.Role)
		if n.Name != "" {
			fmt.Fprintf(&b, " %q", n.Name)
		}
	}
	for _, a := range []string{"data-testid", "data-test-id", "data-test", "data-cy", "data-qa", "id", "name", "aria-label"} {
		if v, ok := n.Attrs[a]; ok {
			fmt.Fprintf(&b, " %s=%q", a, v)
		}
	}
	return b.String()
}
