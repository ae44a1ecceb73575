package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/llmerr"
)

// Structural exploration, for agents that write tests: where an element
// sits (its ancestors and the repeated structure around it), and the most
// robust Playwright locator for it, checked against the live page.

type structureArgs struct {
	Ref  string   `json:"ref" jsonschema:"Ref of the element from browser_snapshot"`
	Role roleName `json:"role,omitempty" jsonschema:"Role to act as (default: current)"`
}

func (s *Server) addStructureTools() {
	addTool(s, &mcp.Tool{
		Name:        "browser_inspect",
		Description: "An element's ancestors up to the page (tag, role, name, test ids) and the repeated structure it belongs to. For writing tests.",
		Annotations: &mcp.ToolAnnotations{Title: "Inspect an element", ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, s.inspect)
	addTool(s, &mcp.Tool{
		Name:        "browser_generate_locator",
		Description: "The most robust Playwright locator for an element, verified to match exactly that element.",
		Annotations: &mcp.ToolAnnotations{Title: "Generate a locator", ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, s.generateLocator)
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

// structureOf resolves ref under the role's lock and describes its
// element; on success the caller releases the lock with unlock.
func (s *Server) structureOf(c *call, ref string) (*target, *structureInfo, func(), error) {
	r, unlock, err := c.lockRole()
	if err != nil {
		return nil, nil, nil, err
	}
	t, err := r.resolve(ref)
	if err != nil {
		unlock()
		return nil, nil, nil, r.withCandidates(err, c.tool, nil)
	}
	st, err := s.describeStructure(t)
	if err != nil {
		unlock()
		return nil, nil, nil, llmerr.Classify(err, llmerr.Situation{Tool: c.tool, Ref: ref, Element: t.rec.Element(), URL: t.rec.URL})
	}
	return t, st, unlock, nil
}

func (s *Server) describeStructure(t *target) (*structureInfo, error) {
	raw, err := t.el.Evaluate(structureJS)
	if err != nil {
		return nil, err
	}
	var st structureInfo
	str, _ := raw.(string)
	if err := json.Unmarshal([]byte(str), &st); err != nil {
		return nil, fmt.Errorf("reading the element's structure: %w", err)
	}
	return &st, nil
}

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

func (s *Server) inspect(ctx context.Context, c *call, in structureArgs) (*result, error) {
	t, st, unlock, err := s.structureOf(c, in.Ref)
	if err != nil {
		return nil, err
	}
	defer unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "Element: %s %s\n", describe(t.rec, ""), st.Self)
	if !t.rec.MainFrame {
		fmt.Fprintf(&b, "In a frame: %s\n", t.rec.URL)
	}
	b.WriteString("Ancestors (nearest first):\n")
	for i, a := range st.Ancestors {
		fmt.Fprintf(&b, "%d. %s\n", i+1, a)
	}
	if rp := st.Repeat; rp != nil {
		where := "The element"
		if rp.Level > 0 {
			where = fmt.Sprintf("Its ancestor %d (%s)", rp.Level, rp.Item)
		}
		fmt.Fprintf(&b, "Repeated structure: %s is item %d of %d with the same structure in %s. Their texts:\n", where, rp.Self+1, rp.Count, rp.Container)
		for i, tx := range rp.Texts {
			mark := ""
			if i == rp.Self {
				mark = "  ← this one"
			}
			fmt.Fprintf(&b, "- %q%s\n", tx, mark)
		}
		if rp.Count > len(rp.Texts) {
			fmt.Fprintf(&b, "- … and %d more\n", rp.Count-len(rp.Texts))
		}
	} else {
		b.WriteString("Repeated structure: none (no ancestor has siblings of the same structure).\n")
	}
	b.WriteString("browser_generate_locator(ref=\"" + in.Ref + "\") gives a verified locator.")
	return &result{text: b.String()}, nil
}

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

func (s *Server) generateLocator(ctx context.Context, c *call, in structureArgs) (*result, error) {
	t, st, unlock, err := s.structureOf(c, in.Ref)
	if err != nil {
		return nil, err
	}
	defer unlock()
	frame, err := t.el.OwnerFrame()
	if err != nil || frame == nil {
		return nil, fmt.Errorf("finding the element's frame: %v", err)
	}
	prefix, err := framePrefix(frame)
	if err != nil {
		return nil, err
	}
	role, name := t.rec.Role, t.rec.Name
	var cands []candidate
	if a, v := testIDOf(st.Self); a != "" {
		cands = append(cands, byTestID(a, v))
	}
	if role != "" && role != "generic" {
		cands = append(cands, byRole(role, name))
	}
	if name != "" && (role == "textbox" || role == "combobox" || role == "checkbox" || role == "radio" || role == "searchbox" || role == "spinbutton") {
		cands = append(cands, candidate{fmt.Sprintf("getByLabel(%s, { exact: true })", jsString(name)), "internal:label=" + textSel(name, true)})
	}
	if rp := st.Repeat; rp != nil && role != "" {
		self := byRole(role, name)
		if rp.Level == 0 {
			self = byRole(role, "")
		}
		// Scoped by the repeated item that holds it: by its test id, or
		// by the item's role (or tag) filtered by its own text.
		if a, v := testIDOf(rp.Item); a != "" {
			cands = append(cands, byTestID(a, v).then(self))
		}
		if rp.Key != "" {
			text := rp.Key
			item := candidate{fmt.Sprintf("locator(%s)", jsString(rp.Item.Tag)), rp.Item.Tag}
			if rp.Item.Role != "" {
				item = byRole(rp.Item.Role, "")
			}
			filtered := candidate{item.code + fmt.Sprintf(".filter({ hasText: %s })", jsString(text)),
				item.selector + " >> internal:has-text=" + textSel(text, false)}
			if rp.Level > 0 {
				filtered = filtered.then(self)
			}
			cands = append(cands, filtered)
		}
	}
	for _, a := range st.Ancestors {
		if at, v := testIDOf(a); at != "" && role != "" {
			cands = append(cands, byTestID(at, v).then(byRole(role, name)))
			break
		}
	}
	if id, ok := st.Self.Attrs["id"]; ok && id != "" && !looksGenerated(id) {
		cands = append(cands, candidate{fmt.Sprintf("locator(%s)", jsString("#"+cssIdent(id))), "#" + cssIdent(id)})
	}
	if name != "" {
		cands = append(cands, candidate{fmt.Sprintf("getByText(%s, { exact: true })", jsString(name)), "internal:text=" + textSel(name, true)})
	}
	var rejected []string
	for _, cand := range cands {
		full := cand
		if prefix.selector != "" {
			full = prefix.then(cand)
		}
		n, same, err := s.matches(t, full.selector)
		switch {
		case err != nil:
			rejected = append(rejected, fmt.Sprintf("page.%s: %s", full.code, firstLine(err.Error())))
		case n != 1:
			rejected = append(rejected, fmt.Sprintf("page.%s matches %d elements", full.code, n))
		case !same:
			rejected = append(rejected, fmt.Sprintf("page.%s matches another element", full.code))
		default:
			var b strings.Builder
			fmt.Fprintf(&b, "Locator for %s, verified on the page (exactly one match, this element):\npage.%s\n", describe(t.rec, ""), full.code)
			if len(rejected) > 0 {
				b.WriteString("Rejected first:\n")
				for _, r := range rejected {
					b.WriteString("- " + r + "\n")
				}
			}
			return &result{text: strings.TrimRight(b.String(), "\n")}, nil
		}
	}
	return nil, &llmerr.Error{Code: llmerr.ElementNotInteractable, Tool: c.tool, Ref: in.Ref, Element: t.rec.Element(), URL: t.rec.URL,
		Message: fmt.Sprintf("No robust locator matches only %s.", describe(t.rec, "")),
		Cause:   "every candidate matched several elements or none: " + strings.Join(rejected, "; "),
		Actions: []llmerr.Action{llmerr.Call("browser_inspect", "see its ancestors and test ids, to scope a locator by hand", llmerr.A("ref", in.Ref))},
		Note:    "Adding a data-testid to the element is the robust fix."}
}

// matches counts what selector matches in the page and whether the one
// match is the target element.
func (s *Server) matches(t *target, selector string) (int, bool, error) {
	loc := t.tab.Page.Locator(selector)
	n, err := loc.Count()
	if err != nil || n != 1 {
		return n, false, err
	}
	h, err := loc.ElementHandle(playwright.LocatorElementHandleOptions{Timeout: playwright.Float(float64(s.cfg.ActionTimeout.Milliseconds()))})
	if err != nil {
		return n, false, err
	}
	defer h.Dispose()
	frame, err := t.el.OwnerFrame()
	if err != nil {
		return n, false, err
	}
	same, err := frame.Evaluate(`({a, b}) => a === b`, map[string]any{"a": h, "b": t.el})
	return n, same == true, err
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
		raw, err := el.Evaluate(`(f) => {
  for (const a of ['title', 'name', 'id', 'src']) {
    const v = f.getAttribute(a);
    if (v) return JSON.stringify([a, v]);
  }
  return JSON.stringify(['', String([...f.parentNode.children].filter(c => c.localName === 'iframe').indexOf(f) + 1)]);
}`)
		if err != nil {
			return candidate{}, err
		}
		var av [2]string
		s, _ := raw.(string)
		_ = json.Unmarshal([]byte(s), &av)
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
// changes between builds): digits runs, colons, long hex.
func looksGenerated(id string) bool {
	digits := 0
	for _, r := range id {
		if r >= '0' && r <= '9' {
			digits++
		}
	}
	return strings.ContainsAny(id, ":") || digits >= 4 || strings.HasPrefix(id, "react-") || strings.HasPrefix(id, "ember")
}

func cssIdent(id string) string {
	var b strings.Builder
	for i, r := range id {
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || r == '_' || r == '-' || (i > 0 && r >= '0' && r <= '9') || r > 127 {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, `\%x `, r)
		}
	}
	return b.String()
}
