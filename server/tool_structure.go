package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/llmerr"
)

// Structural exploration, for agents that write tests: where an element
// sits (its ancestors and the repeated structure around it), and the most
// robust Playwright locator for it, checked against the live page.

type structureArgs struct {
	Ref string `json:"ref" jsonschema:"Ref of the element from browser_snapshot"`
	roleArg
}

func (s *Server) addStructureTools() {
	addTool(s, def("browser_inspect", "Inspect an element", readOnly, "An element's ancestors (tag, role, name, test ids) and the repeated structure it is in."), s.inspect)
	addTool(s, def("browser_generate_locator", "Generate a locator", readOnly, "The most robust Playwright locator for an element, verified to match only it."), s.generateLocator)
}

// structureOf resolves ref under the role's lock and describes its
// element; on success the caller releases the lock with unlock.
func (s *Server) structureOf(c *call, ref string) (*target, *structureInfo, func(), error) {
	r, unlock, err := c.lockRole()
	if err != nil {
		return nil, nil, nil, err
	}
	t, err := c.resolve(r, ref, c.sameCall())
	if err != nil {
		unlock()
		return nil, nil, nil, err
	}
	st, err := evalJSON[structureInfo](t.el, structureJS)
	if err != nil {
		unlock()
		return nil, nil, nil, llmerr.Classify(err, llmerr.Situation{Tool: c.tool, Ref: ref, Element: t.rec.Element(), URL: t.rec.URL})
	}
	return t, &st, unlock, nil
}

func (s *Server) inspect(ctx context.Context, c *call, in structureArgs) (*response, error) {
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
		// The page's words, fenced like every page text in a result.
		var texts []string
		for i, tx := range rp.Texts {
			mark := ""
			if i == rp.Self {
				mark = "  ← this one"
			}
			texts = append(texts, fmt.Sprintf("- %q%s", tx, mark))
		}
		b.WriteString(strings.Join(fenceBlock(texts), "\n") + "\n")
		if rp.Count > len(rp.Texts) {
			fmt.Fprintf(&b, "- … and %d more\n", rp.Count-len(rp.Texts))
		}
	} else {
		b.WriteString("Repeated structure: none (no ancestor has siblings of the same structure).\n")
	}
	b.WriteString("browser_generate_locator(ref=\"" + in.Ref + "\") gives a verified locator.")
	return textResponse(b.String()), nil
}

func (s *Server) generateLocator(ctx context.Context, c *call, in structureArgs) (*response, error) {
	t, st, unlock, err := s.structureOf(c, in.Ref)
	if err != nil {
		return nil, err
	}
	defer unlock()
	code, rejected, err := s.locate(t, st)
	if err != nil {
		return nil, err
	}
	if code == "" {
		return nil, &llmerr.Error{Code: llmerr.ElementNotInteractable, Tool: c.tool, Ref: in.Ref, Element: t.rec.Element(), URL: t.rec.URL,
			Message: fmt.Sprintf("No robust locator matches only %s.", describe(t.rec, "")),
			Cause:   "every candidate matched several elements or none: " + strings.Join(rejected, "; "),
			Actions: []llmerr.Action{llmerr.Call("browser_inspect", "see its ancestors and test ids, to scope a locator by hand", llmerr.A("ref", in.Ref))},
			Note:    "Adding a data-testid to the element is the robust fix."}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Locator for %s, verified on the page (exactly one match, this element):\npage.%s\n", describe(t.rec, ""), code)
	if len(rejected) > 0 {
		b.WriteString("Rejected first:\n")
		for _, r := range rejected {
			b.WriteString("- " + r + "\n")
		}
	}
	return textResponse(b.String()), nil
}

// locate returns the most robust Playwright locator of t's element (the
// code after "page."), checked on the page to match it alone, and the
// candidates rejected before it; "" when none matches it alone.
func (s *Server) locate(t *target, st *structureInfo) (string, []string, error) {
	frame, err := t.el.OwnerFrame()
	if err != nil || frame == nil {
		return "", nil, fmt.Errorf("finding the element's frame: %v", err)
	}
	prefix, err := framePrefix(frame)
	if err != nil {
		return "", nil, err
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
			rejected = append(rejected, fmt.Sprintf("page.%s: %s", full.code, llmerr.FirstLine(err.Error())))
		case n != 1:
			rejected = append(rejected, fmt.Sprintf("page.%s matches %d elements", full.code, n))
		case !same:
			rejected = append(rejected, fmt.Sprintf("page.%s matches another element", full.code))
		default:
			return full.code, rejected, nil
		}
	}
	return "", rejected, nil
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
