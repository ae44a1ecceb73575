package snapshot

import (
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/refs"
)

// TestFidelity compares the role and name retrace gives every interactive
// element with Chromium's own accessibility tree, read over CDP, across the
// whole fixture corpus. It lists every disagreement and fails below 99%
// agreement, or when too few elements were compared to mean anything.
//
// Both directions count: an element retrace gives a ref whose role or name
// differs from Chromium's, and an element Chromium exposes with an
// interactive role that the snapshot has no ref for.
func TestFidelity(t *testing.T) {
	const (
		minCompared  = 300
		minAgreement = 0.99
	)
	start := time.Now()
	ctx, err := browsers.NewContext(browser.ContextOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { browsers.ReleaseContext(ctx) })
	// As in the server: the bridge is built at document start, so pages that
	// replace built-ins (hostile.html) are read with the real ones.
	eng := NewEngine()
	script := eng.InitScript()
	if err := ctx.AddInitScript(playwright.Script{Content: &script}); err != nil {
		t.Fatal(err)
	}
	page, err := ctx.NewPage()
	if err != nil {
		t.Fatal(err)
	}
	cdp, err := ctx.NewCDPSession(page)
	if err != nil {
		t.Fatal(err)
	}

	var results []*fidelityResult
	for _, p := range fidelityCorpus(t) {
		r, err := fidelityPage(t, eng, page, cdp, p)
		if err != nil {
			// One broken page must not hide the report on the others.
			t.Errorf("%s: %v", p, err)
			continue
		}
		results = append(results, r)
	}

	var compared, agreed, skipped int
	var lines []string
	t.Logf("fidelity of roles and names against Chromium's accessibility tree")
	t.Logf("(compared: every ref, plus every element Chromium exposes as interactive in the main document without a ref)")
	for _, r := range results {
		compared += r.compared
		agreed += r.agreed
		skipped += r.skipped
		extra := ""
		if r.skipped > 0 {
			extra = fmt.Sprintf(" (%d refs in cross-origin frames not compared)", r.skipped)
		}
		t.Logf("  %-28s %4d compared, %4d agree%s", r.page, r.compared, r.agreed, extra)
		lines = append(lines, r.disagreements...)
	}
	pct := 0.0
	if compared > 0 {
		pct = float64(agreed) / float64(compared)
	}
	t.Logf("  %-28s %4d compared, %4d agree: %.2f%% (%s)", "total", compared, agreed, 100*pct,
		time.Since(start).Round(time.Millisecond))
	if skipped > 0 {
		// A cross-origin iframe runs in another renderer process: its document
		// is not in this page's CDP DOM and needs a CDP session of its own
		// target, which playwright-go does not expose for frames.
		t.Logf("%d refs inside cross-origin iframes were skipped: their documents belong to another CDP target", skipped)
	}
	if len(lines) == 0 {
		t.Logf("no disagreements")
	} else {
		t.Logf("%d disagreements (retrace vs chromium):", len(lines))
		for _, l := range lines {
			t.Logf("  %s", l)
		}
	}
	if compared < minCompared {
		t.Errorf("only %d elements compared, want at least %d: the corpus did not load or lost pages", compared, minCompared)
	}
	if pct < minAgreement {
		t.Errorf("agreement %.2f%% is below %.0f%%", 100*pct, 100*minAgreement)
	}
}

// fidelityCorpus returns every fixture page whose name does not start with
// "_" (those are only embedded by other pages), and the generated routes.
func fidelityCorpus(t *testing.T) []string {
	t.Helper()
	const dir = "../testdata/pages"
	var pages []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), "_") || filepath.Ext(path) != ".html" {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		pages = append(pages, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(pages)
	return append(pages, "table?rows=50", "long-form?fields=60", "soup?links=100")
}

type fidelityResult struct {
	page             string
	compared, agreed int
	skipped          int // refs inside cross-origin frames
	disagreements    []string
}

// axNode is what Chromium says about one DOM element.
type axNode struct {
	role, name string
	ignored    bool
}

func (a axNode) String() string {
	s := fmt.Sprintf("%s %q", a.role, a.name)
	if a.ignored {
		s += " [ignored]"
	}
	return s
}

// domElement is one element of the CDP DOM tree.
type domElement struct {
	tag   string
	attrs map[string]string
	// ua is set inside a user-agent shadow root: the parts Chromium builds
	// for a native control (a select's drop-down, a date input's fields).
	ua bool
}

func fidelityPage(t *testing.T, eng *Engine, page playwright.Page, cdp playwright.CDPSession, name string) (*fidelityResult, error) {
	t.Helper()
	res := &fidelityResult{page: name}
	u := fx.Page(name)
	if _, err := page.Goto(u, playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateLoad}); err != nil {
		return nil, err
	}
	snap, err := eng.Capture(page, refs.New())
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	mainOrigin := origin(snap.URL)

	// Mark every element that has a ref, so that it can be found in the CDP
	// DOM. Refs of same-origin iframes are compared too: their documents are
	// in this renderer process, so this page's CDP session sees them.
	var recs []refs.Record
	for _, rec := range snap.Refs {
		if !rec.MainFrame && origin(rec.URL) != mainOrigin {
			// Cross-origin iframe content lives in another renderer process
			// (another CDP target); this session cannot see it. Skipped, and
			// counted in the log.
			res.skipped++
			continue
		}
		el, err := eng.Resolve(rec)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", rec.Ref, err)
		}
		if _, err := el.Evaluate("(e, v) => e.setAttribute('data-fidelity', v)", rec.Ref); err != nil {
			return nil, fmt.Errorf("mark %s: %w", rec.Ref, err)
		}
		recs = append(recs, rec)
	}

	// Find the marked elements in the DOM as Chromium sees it. The tree is
	// walked here, not queried with DOM.querySelectorAll, because a selector
	// stops at shadow roots and frame documents; pierce:true puts both in
	// the tree.
	docRes, err := cdpCall(cdp, "DOM.getDocument", map[string]any{"depth": -1, "pierce": true})
	if err != nil {
		return nil, err
	}
	byRef := map[string]int{}     // ref -> backendNodeId
	elems := map[int]domElement{} // backendNodeId -> element
	walkDOM(docRes["root"], false, func(id int, e domElement) {
		elems[id] = e
		if ref, ok := e.attrs["data-fidelity"]; ok {
			byRef[ref] = id
			if _, hidden := e.attrs["data-expect-hidden"]; hidden {
				t.Errorf("%s: %s got ref %s although it is hidden", name, describe(e), ref)
			}
		}
	})

	// Chromium's tree of the main document, indexed by DOM node; nodes of
	// same-origin frames are asked for one by one below.
	ax := map[int]axNode{}
	full, err := cdpCall(cdp, "Accessibility.getFullAXTree", nil)
	if err != nil {
		return nil, err
	}
	for _, n := range list(full["nodes"]) {
		m := obj(n)
		if id := num(m["backendDOMNodeId"]); id != 0 {
			if _, seen := ax[id]; !seen {
				ax[id] = axOf(m)
			}
		}
	}

	marked := map[int]bool{}
	for _, rec := range recs {
		id, ok := byRef[rec.Ref]
		if !ok {
			t.Errorf("%s: %s (%s %q) was marked but is not in the CDP DOM", name, rec.Ref, rec.Role, rec.Name)
			continue
		}
		marked[id] = true
		a, ok := ax[id]
		if !ok {
			if a, err = partialAX(cdp, id); err != nil {
				return nil, fmt.Errorf("%s: %w", rec.Ref, err)
			}
		}
		res.compared++
		if !a.ignored && normRole(rec.Role) == chromiumRole(a.role) && sameName(rec.Name, a.name) {
			res.agreed++
			continue
		}
		res.disagreements = append(res.disagreements,
			fmt.Sprintf("%s: %s %s %q (retrace) vs %s (chromium) %s", name, rec.Ref, rec.Role, rec.Name, a, describe(elems[id])))
	}

	// The other direction: what Chromium exposes as interactive in the main
	// document (shadow roots included; same-origin frame documents are not
	// in getFullAXTree's answer) that the snapshot left out.
	var missed []string
	for id, a := range ax {
		e, ok := elems[id]
		if !ok || marked[id] || a.ignored || !chromiumInteractive[chromiumRole(a.role)] {
			continue
		}
		if e.tag == "option" || e.ua {
			// Native options are chosen through their select's ref, by
			// design; the inner parts of a native control (a date input's
			// day field, a select's drop-down) are acted on through the
			// control's ref.
			continue
		}
		res.compared++
		missed = append(missed, fmt.Sprintf("%s: (no ref) (retrace) vs %s (chromium) %s", name, a, describe(e)))
	}
	sort.Strings(missed)
	res.disagreements = append(res.disagreements, missed...)
	return res, nil
}

// chromiumInteractive are the roles the reverse check looks for: Chromium's
// spelling, after chromiumRole, of the roles retrace gives refs to.
var chromiumInteractive = map[string]bool{
	"button": true, "link": true, "checkbox": true, "radio": true, "switch": true, "tab": true,
	"menuitem": true, "menuitemcheckbox": true, "menuitemradio": true, "option": true,
	"textbox": true, "searchbox": true, "combobox": true, "listbox": true, "slider": true,
	"spinbutton": true, "treeitem": true, "iframe": true,
}

// chromiumSpelling maps roles Chromium spells differently from ARIA and
// HTML-AAM (its internal role names, or an ARIA synonym) to the role retrace
// uses for the same thing. It only renames: a Chromium role that means
// something else (ColorWell, Date, ...) is left alone and so disagrees.
var chromiumSpelling = map[string]string{
	"image":              "img",      // ARIA 1.3 synonym of img
	"Iframe":             "iframe",   // internal name of the iframe element's role
	"DisclosureTriangle": "button",   // <summary> of a <details>: HTML-AAM says button
	"LabelText":          "generic",  // <label>: no ARIA role
	"StaticText":         "text",     // a text node
	"RootWebArea":        "document", // the document itself
	"MenuListOption":     "option",   // an <option> of a drop-down <select>
	"SvgRoot":            "img",      // an <svg> (graphics-document in SVG-AAM)
}

// chromiumRole normalises a role as Chromium reports it.
func chromiumRole(r string) string {
	if n, ok := chromiumSpelling[r]; ok {
		return n
	}
	return r
}

// normRole normalises a role as retrace reports it (already ARIA spelling).
func normRole(r string) string { return r }

// sameName compares names with whitespace runs collapsed and trimmed. The
// bridge caps names at 200 characters plus an ellipsis; Chromium's name is
// cut the same way before comparing. The bridge drops icon-font glyphs
// (private-use characters of CSS generated text) by design; Chromium keeps
// them.
func sameName(retrace, chromium string) bool {
	r, c := collapseSpace(retrace), collapseSpace(stripPrivateUse(chromium))
	if rr := []rune(r); len(rr) == 201 && rr[200] == '…' {
		if cr := []rune(c); len(cr) > 200 {
			c = string(cr[:200]) + "…"
		}
	}
	return r == c
}

func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// stripPrivateUse drops private-use characters (icon-font glyphs).
func stripPrivateUse(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Co, r) {
			return -1
		}
		return r
	}, s)
}

func origin(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Scheme + "://" + p.Host
}

func describe(e domElement) string {
	var b strings.Builder
	b.WriteString("<" + e.tag)
	keys := make([]string, 0, len(e.attrs))
	for k := range e.attrs {
		if k != "data-fidelity" && k != "style" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := e.attrs[k]
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		fmt.Fprintf(&b, " %s=%q", k, v)
	}
	b.WriteString(">")
	return b.String()
}

// walkDOM visits every element of a CDP DOM tree returned with pierce:true:
// children, shadow roots and the documents of in-process frames.
func walkDOM(n any, ua bool, visit func(id int, e domElement)) {
	m := obj(n)
	if m == nil {
		return
	}
	if str(m["shadowRootType"]) == "user-agent" {
		ua = true
	}
	if num(m["nodeType"]) == 1 {
		e := domElement{tag: strings.ToLower(str(m["localName"])), attrs: map[string]string{}, ua: ua}
		a := list(m["attributes"])
		for i := 0; i+1 < len(a); i += 2 {
			e.attrs[str(a[i])] = str(a[i+1])
		}
		visit(num(m["backendNodeId"]), e)
	}
	for _, k := range []string{"shadowRoots", "children"} {
		for _, c := range list(m[k]) {
			walkDOM(c, ua, visit)
		}
	}
	if d, ok := m["contentDocument"]; ok {
		walkDOM(d, ua, visit)
	}
}

func partialAX(cdp playwright.CDPSession, id int) (axNode, error) {
	r, err := cdpCall(cdp, "Accessibility.getPartialAXTree", map[string]any{"backendNodeId": id, "fetchRelatives": false})
	if err != nil {
		return axNode{}, err
	}
	for _, n := range list(r["nodes"]) {
		m := obj(n)
		if num(m["backendDOMNodeId"]) == id {
			return axOf(m), nil
		}
	}
	return axNode{role: "(no accessibility node)", ignored: true}, nil
}

func axOf(m map[string]any) axNode {
	return axNode{
		role:    str(obj(m["role"])["value"]),
		name:    str(obj(m["name"])["value"]),
		ignored: m["ignored"] == true,
	}
}

func cdpCall(cdp playwright.CDPSession, method string, params map[string]any) (map[string]any, error) {
	if params == nil {
		params = map[string]any{}
	}
	r, err := cdp.Send(method, params)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	m := obj(r)
	if m == nil {
		return nil, fmt.Errorf("%s: unexpected result %T", method, r)
	}
	return m, nil
}

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }
func list(v any) []any         { l, _ := v.([]any); return l }
func str(v any) string         { s, _ := v.(string); return s }
func num(v any) int {
	switch n := v.(type) {
	case float64:
		return int(n)
	case int:
		return n
	}
	return 0
}
