package server

import (
	"strings"
	"testing"
	"time"
)

// An action's result tells what it changed since the last snapshot, in the
// snapshot's own lines: elements that appeared (with refs that act on the
// right element), went, or changed, in the main document and in same- and
// cross-origin frames; a navigation is not a change report.
func TestChangeReports(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("changes.html")})
	snap := c.ok("browser_snapshot", nil)
	ref := func(text, element string) string {
		t.Helper()
		r := refIn(text, element)
		if r == "" {
			t.Fatalf("no %s in:\n%s", element, text)
		}
		return r
	}

	out := c.ok("browser_click", map[string]any{"ref": ref(snap, `button "Do nothing"`)})
	mustContain(t, out, noChange)

	out = c.ok("browser_click", map[string]any{"ref": ref(snap, `button "Open details"`)})
	mustContain(t, out, "Changes since the last snapshot", `- added in main:`, `dialog "Details"`, `- paragraph: Ships Monday`)
	if report := out[strings.Index(out, "Changes since"):]; strings.Contains(report, "- removed") || strings.Contains(report, "Open details") {
		t.Errorf("the report names what did not change:\n%s", out)
	}
	// The new button's ref acts on the new button.
	out = c.ok("browser_click", map[string]any{"ref": ref(out, `button "Close details"`)})
	mustContain(t, out, noChange) // its click does nothing, and it says so

	out = c.ok("browser_click", map[string]any{"ref": ref(snap, `button "Dismiss promo"`)})
	mustContain(t, out, "- removed from main:\n  - paragraph:", `link "free shipping" [ref=`)

	out = c.ok("browser_click", map[string]any{"ref": ref(snap, `checkbox "Gift wrap"`)})
	mustContain(t, out, `- changed: checkbox "Gift wrap" [checked] [ref=`, `] (was: not [checked])`)

	// What was typed is not told back; the page shows it.
	note := ref(snap, `textbox "Note"`)
	out = c.ok("browser_type", map[string]any{"ref": note, "text": "ring twice"})
	mustContain(t, out, onlySet)
	mustContain(t, c.ok("browser_snapshot", map[string]any{"ref": note}), `"ring twice"`)

	// A route change within the document is a change, not a navigation.
	out = c.ok("browser_click", map[string]any{"ref": ref(snap, `button "Show items"`)})
	mustContain(t, out, "?view=items", `- changed: paragraph: Items view (was: Summary view)`)

	// In a same-origin and a cross-origin frame: a change, an element that
	// appears (its ref acts on it), and one that goes.
	for _, label := range []string{"Same", "Cross"} {
		button := ref(snap, `button "`+label+` button"`)
		out = c.ok("browser_click", map[string]any{"ref": button})
		mustContain(t, out, "- changed: paragraph: "+label+" clicked 1 (was: Not clicked)")
		out = c.ok("browser_evaluate", map[string]any{"ref": button, "function": `el => {
			const b = el.ownerDocument.createElement('button');
			b.textContent = 'Extra';
			b.onclick = () => el.ownerDocument.getElementById('where').remove();
			el.ownerDocument.body.append(b);
		}`})
		mustContain(t, out, `- added in iframe "`+label+`"`, `button "Extra" [ref=`)
		out = c.ok("browser_click", map[string]any{"ref": ref(out, `button "Extra"`)})
		mustContain(t, out, `- removed from iframe "`+label+`"`, "- paragraph: "+label+" frame on")
	}

	// The snapshot's option: only what changed since the last one.
	out = c.ok("browser_snapshot", map[string]any{"changes": true})
	mustContain(t, out, noChange)
	// A change the page makes by itself, later.
	out = c.ok("browser_evaluate", map[string]any{"function": "() => { setTimeout(() => document.querySelector('h1').textContent = 'Order 43', 300); return 1 }"})
	mustContain(t, out, noChange)
	time.Sleep(600 * time.Millisecond)
	out = c.ok("browser_snapshot", map[string]any{"changes": true})
	mustContain(t, out, `- changed: heading "Order 43" [level=1] (was: named "Order 42")`)

	// A navigation reports where the tab went, not a diff; old refs are
	// stale, and the new page, being small, comes whole and is the
	// baseline of what follows.
	out = c.ok("browser_click", map[string]any{"ref": ref(snap, `link "Next page"`)})
	mustContain(t, out, "Page navigated:", "/form.html", `textbox "Email" [required] [ref=`)
	if strings.Contains(out, "Changes since") || strings.Contains(out, noChange) {
		t.Errorf("a navigation came with a change report:\n%s", out)
	}
	out = c.ok("browser_snapshot", map[string]any{"changes": true})
	mustContain(t, out, noChange)
}

// The report is bounded like a snapshot: a change larger than reading the
// page says so and names the call that reads it.
func TestChangeReportTooLarge(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("changes.html")})
	snap := c.ok("browser_snapshot", nil)
	c.ok("browser_evaluate", map[string]any{"function": `() => { document.querySelector('#nothing').onclick = () => {
		document.querySelector('main').innerHTML = Array.from({length: 400}, (_, i) => '<button>New ' + i + '</button>').join('') } }`})
	out := c.ok("browser_click", map[string]any{"ref": refIn(snap, `button "Do nothing"`)})
	mustContain(t, out, "browser_snapshot() reads it")
	if len(out) > 3000 {
		t.Errorf("the report of a rewrite is %d bytes:\n%.500s", len(out), out)
	}
}

// A change larger than reading the page, on a small page, gives the page
// whole in the result, so the agent does not call browser_snapshot for it;
// its refs act. browser_snapshot(changes=true) does the same.
func TestChangeReportWholeWhenSmall(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("changes.html")})
	snap := c.ok("browser_snapshot", nil)
	c.ok("browser_evaluate", map[string]any{"function": `() => { document.querySelector('#nothing').onclick = () => {
		document.body.innerHTML = '<main><h1>Step 2</h1><button onclick="this.textContent = \'Went on\'">Go on</button></main>' } }`})
	out := c.ok("browser_click", map[string]any{"ref": refIn(snap, `button "Do nothing"`)})
	mustContain(t, out, "here it is whole:", `- heading "Step 2" [level=1]`, `button "Go on" [ref=`)
	if strings.Contains(out, "URL: ") {
		t.Errorf("the page given inline repeats the URL the agent is on:\n%s", out)
	}
	if strings.Contains(out, "browser_snapshot()") {
		t.Errorf("the result sends the agent to browser_snapshot for a page it could give:\n%s", out)
	}
	out = c.ok("browser_click", map[string]any{"ref": refIn(out, `button "Go on"`)})
	mustContain(t, out, `button "Went on" [ref=`) // a change of a third of a tiny page: the page whole

	// The page changes by itself, after the call that arms the timer has
	// settled (else that call's own report would take the change), and is
	// watched with browser_find, which leaves the baseline alone.
	c.ok("browser_evaluate", map[string]any{"function": `() => { setTimeout(() => {
		document.body.innerHTML = '<main><h1>Step 3</h1><a href="#done">Done</a></main>' }, 400) }`})
	for i := 0; !strings.Contains(c.ok("browser_find", map[string]any{"text": "Step 3"}), "1 match"); i++ {
		if i == 50 {
			t.Fatal("the page's timer did not change it within 10s")
		}
		c.ok("browser_wait_for", map[string]any{"time": 0.2})
	}
	out = c.ok("browser_snapshot", map[string]any{"changes": true})
	mustContain(t, out, "here it is whole:", `- heading "Step 3" [level=1]`, `link "Done" [ref=`)
}

// A change that takes most of the page to read, all inside one part of it
// (a list filtered and drawn anew), gives that part whole, not the page:
// the banner and footer around it are not read again, and their refs
// still act; the part's new refs act on the right element.
func TestChangeReportGivesThePartThatChanged(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("tasks/list.html")})
	snap := c.ok("browser_snapshot", nil)
	cart := refIn(snap, `link "Cart (0)"`)
	out := c.ok("browser_type", map[string]any{"ref": refIn(snap, `searchbox "Filter products"`), "text": "lamp"})
	mustContain(t, out, "Most of main changed; here it is whole (the rest of the page is unchanged, its refs still valid):",
		"<page-content>\n- main:\n", "- paragraph: 32 products, page 1 of 4", `button "Next page" [ref=`)
	if containsAny(out, "banner", `link "Lumen & Co"`, "contentinfo", "Free delivery", "here it is whole:") {
		t.Errorf("the result gives the page around the part that changed:\n%s", out)
	}
	// The banner's ref is the one the first snapshot gave.
	mustContain(t, c.ok("browser_evaluate", map[string]any{"ref": cart, "function": "el => el.textContent"}), "Cart (0)")
	// A ref from the part acts on its own row, and the banner keeps its ref.
	out = c.ok("browser_click", map[string]any{"ref": refIn(out, `button "Add Linen floor lamp 10 to cart"`)})
	mustContain(t, out, `- changed: link "Cart (1)" [ref=`+cart+`]`, `button "Add Linen floor lamp 10 to cart" [disabled]`)

	// The same for a change the page makes by itself, read with
	// browser_snapshot(changes=true).
	c.ok("browser_evaluate", map[string]any{"function": `() => { setTimeout(() => document.getElementById('next').click(), 300) }`})
	for i := 0; !strings.Contains(c.ok("browser_find", map[string]any{"text": "page 2 of 4"}), "1 match"); i++ {
		if i == 50 {
			t.Fatal("the page's timer did not turn the page within 10s")
		}
		c.ok("browser_wait_for", map[string]any{"time": 0.2})
	}
	out = c.ok("browser_snapshot", map[string]any{"changes": true})
	mustContain(t, out, "Most of main changed; here it is whole", "- paragraph: 32 products, page 2 of 4", `button "Previous page" [ref=`)
	if containsAny(out, "banner", "contentinfo") {
		t.Errorf("browser_snapshot(changes=true) gives the page around the part that changed:\n%s", out)
	}

	// A change that reaches the top level of the page gives the page whole.
	out = c.ok("browser_evaluate", map[string]any{"function": `() => {
		document.querySelector('header').innerHTML = '<a href="#a">Account</a> <a href="#b">Basket</a>';
		document.getElementById('filter').value = 'brass'; document.getElementById('filter').dispatchEvent(new Event('input')) }`})
	mustContain(t, out, "here it is whole:", `link "Basket" [ref=`, "- main:", `button "Add Brass desk lamp to cart" [ref=`)
}

// An action that loads another small document gives that page whole, so
// its refs come without a browser_snapshot call; a large page is left to
// browser_snapshot; a hash change keeps the document and says nothing of
// new refs.
func TestActionGivesSmallNewPage(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("changes.html")})
	snap := c.ok("browser_snapshot", nil)
	out := c.ok("browser_click", map[string]any{"ref": refIn(snap, `link "Next page"`)})
	mustContain(t, out, "Page navigated: "+fx.Page("changes.html")+" → "+fx.Page("form.html"), `button "Sign in" [ref=`)
	if n := strings.Count(out, "Sign in</page-content>") + strings.Count(out, "URL: "); n != 1 {
		t.Errorf("the new page's title and URL are said %d times, want once (in the navigation lines):\n%s", n, out)
	}
	if strings.Contains(out, "browser_snapshot()") {
		t.Errorf("the result sends the agent to browser_snapshot for a page it gives:\n%s", out)
	}
	// The given refs act, and the page is the baseline of the next report.
	out = c.ok("browser_type", map[string]any{"ref": refIn(out, `textbox "Email"`), "text": "ada@example.com"})
	mustContain(t, out, onlySet) // a change report, so the page given was its baseline

	c.ok("browser_navigate", map[string]any{"url": fx.Page("changes.html")})
	c.ok("browser_evaluate", map[string]any{"function": `() => { const a = document.createElement('a');
		a.href = '/table?rows=1000'; a.textContent = 'Big table'; document.querySelector('main').append(a) }`})
	out = c.ok("browser_snapshot", nil)
	out = c.ok("browser_click", map[string]any{"ref": refIn(out, `link "Big table"`)})
	mustContain(t, out, "Page navigated:", "browser_snapshot() for the new page's refs")
	if strings.Contains(out, "[ref=e") && strings.Contains(out, "row:") {
		t.Errorf("a large new page is given whole:\n%.800s", out)
	}

	c.ok("browser_navigate", map[string]any{"url": fx.Page("changes.html")})
	c.ok("browser_evaluate", map[string]any{"function": `() => { const a = document.createElement('a');
		a.href = '#below'; a.textContent = 'Below'; document.querySelector('main').append(a) }`})
	out = c.ok("browser_snapshot", nil)
	out = c.ok("browser_click", map[string]any{"ref": refIn(out, `link "Below"`)})
	mustContain(t, out, "#below", noChange)
	if strings.Contains(out, "new page's refs") {
		t.Errorf("a hash change asks for new refs:\n%s", out)
	}
}

// A list drawn anew just as it was (a framework re-rendering from state)
// is told as new refs for the same lines, not as everything removed and
// added again, and the new refs act on the new elements.
func TestChangeReportRenewedRefs(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("changes.html")})
	c.ok("browser_evaluate", map[string]any{"function": `() => {
		const ul = document.createElement('ul');
		ul.id = 'team';
		const draw = () => { ul.innerHTML = ['Ada', 'Grace', 'Alan'].map((n) =>
			'<li>' + n + ' <button onclick="this.textContent = \'Removing\'">Remove ' + n + '</button></li>').join(''); };
		draw();
		document.querySelector('main').prepend(ul);
		document.querySelector('#nothing').onclick = () => { draw(); document.querySelector('h1').textContent = 'Order 42 (saved)'; };
	}`})
	snap := c.ok("browser_snapshot", nil)
	old := refIn(snap, `button "Remove Grace"`)
	out := c.ok("browser_click", map[string]any{"ref": refIn(snap, `button "Do nothing"`)})
	mustContain(t, out, `- redrawn: button "Remove Grace" [ref=`, "(was "+old+")",
		`- changed: heading "Order 42 (saved)"`)
	if containsAny(out, "- removed", "- added", "here it is whole") {
		t.Errorf("a list drawn again as it was is reported as removed and added:\n%s", out)
	}
	fresh := refIn(out, `button "Remove Grace"`)
	if fresh == old || fresh == "" {
		t.Fatalf("no new ref for Remove Grace (old %s) in:\n%s", old, out)
	}
	out = c.ok("browser_click", map[string]any{"ref": fresh})
	mustContain(t, out, `- changed: button "Removing" [ref=`+fresh+`]`)
}

// When a modal dialog closes, the report counts the changes from the
// agent's last read of the page behind it, whose refs still hold, instead
// of giving the whole page as new.
func TestModalCloseReportsThePageBehind(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_modal.html")})
	snap := c.ok("browser_snapshot", nil)
	count := refOf(t, snap, `button "Count"`)

	// Opened, the dialog takes over the page: the page is its contents.
	out := c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Add person"`)})
	mustContain(t, out, `dialog "Add a person"`, `button "Save" [ref=`)
	if strings.Contains(out, `heading "Team"`) {
		t.Fatalf("the page behind the modal dialog was read:\n%s", out)
	}
	c.ok("browser_type", map[string]any{"ref": refOf(t, out, `textbox "Name"`), "text": "Linus"})

	// Closed by Save, which also adds a person behind it: that is the change.
	out = c.ok("browser_click", map[string]any{"ref": refOf(t, out, `button "Save"`)})
	mustContain(t, out, `The dialog "Add a person" closed. Changes since the page behind it was last read (refs not listed here are unchanged and still valid):`,
		`- added in list:`, `- listitem: Linus`)
	if strings.Contains(out, `heading "Team"`) || strings.Contains(out, `button "Count"`) || strings.Contains(out, "here it is whole") {
		t.Errorf("the report gave what did not change behind the dialog:\n%s", out)
	}
	// A ref from the read before the dialog acts on its element.
	mustContain(t, c.ok("browser_click", map[string]any{"ref": count}), `button "Counted 3" [ref=`+count+`]`)

	// Closed with nothing changed behind it: said in one line.
	snap = c.ok("browser_snapshot", nil)
	out = c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Peek"`)})
	out = c.ok("browser_click", map[string]any{"ref": refOf(t, out, `button "Cancel"`)})
	mustContain(t, out, `The dialog "Add a person" closed; nothing else changed since the page behind it was last read (its refs are unchanged and still valid).`)
	mustContain(t, c.ok("browser_click", map[string]any{"ref": count}), `Clicked button "Counted 3" [ref=`+count+`]`, noChange)
}

// A frame the page cannot show (its origin is blocked) is a warning in a
// change report as in a snapshot, text and structured, and the report
// still lists what changed around it.
func TestChangeReportCarriesWarnings(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{Origins: OriginPolicy{Blocked: []string{"localhost"}}})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("changes.html")})
	snap := c.call("browser_snapshot", nil)
	const warning = `- The content of iframe "Cross" [ref=`
	mustContain(t, snap.Text, "Warnings:\n"+warning, "its page was blocked or failed to load")
	out := c.call("browser_click", map[string]any{"ref": refOf(t, snap.Text, `button "Open details"`)})
	mustContain(t, out.Text, "Changes since the last snapshot", `- added in main:`, `button "Close details" [ref=`,
		"Warnings:\n"+warning, "its page was blocked or failed to load")
	if ws := warningsOf(out); len(ws) != 1 || ws[0]["reason"] != "blocked" || ws[0]["frameName"] != "Cross" {
		t.Errorf("structured warnings of the change report = %v", ws)
	}
}
