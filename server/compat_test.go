package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Calls written for playwright-mcp 0.0.83, which names a ref `target` (and
// gives its form fields a name and a type), work as they are.
func TestTargetIsAnAliasOfRef(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	snap := c.ok("browser_snapshot", nil)
	email, remember := refOf(t, snap, `textbox "Email"`), refOf(t, snap, `checkbox "Remember me"`)
	c.ok("browser_type", map[string]any{"target": email, "element": "Email", "text": "ada@example.com"})
	c.ok("browser_fill_form", map[string]any{"fields": []map[string]any{
		{"target": refOf(t, snap, `textbox "Password"`), "name": "Password", "type": "textbox", "value": "secret"},
		{"target": remember, "name": "Remember me", "type": "checkbox", "value": "true"},
	}})
	mustContain(t, c.ok("browser_snapshot", nil), `checkbox "Remember me" [checked] [ref=`+remember+`]`, `"ada@example.com"`)
	out := c.ok("browser_click", map[string]any{"target": refOf(t, snap, `button "Sign in"`), "element": "Sign in"})
	mustContain(t, out, `Clicked button "Sign in"`)

	// A drag as playwright-mcp writes it.
	c.ok("browser_drag", map[string]any{"startTarget": email, "startElement": "Email", "endTarget": remember, "endElement": "Remember me"})

	// Both at once is ambiguous, and target on a tool without ref is not
	// an alias of anything: each is an unknown argument.
	r := c.fail("browser_click", map[string]any{"ref": email, "target": email}, "INVALID_PARAMS")
	mustContain(t, r.Text, `unexpected additional properties ["target"]`)
	c.fail("browser_navigate", map[string]any{"url": fx.Page("form.html"), "target": email}, "INVALID_PARAMS")
}

// browser_click's doubleClick, button and modifiers reach the page as the
// events a person's mouse would fire; browser_type's slowly types key by
// key; a button or key it cannot use is an INVALID_PARAMS plan.
func TestClickOptionsAndSlowTyping(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_clicks.html")})
	snap := c.ok("browser_snapshot", nil)
	target := refOf(t, snap, `button "Target"`)
	for _, tc := range []struct {
		args      map[string]any
		did, page string
	}{
		{map[string]any{}, `Clicked button "Target"`, "click"},
		{map[string]any{"doubleClick": true}, `Double-clicked button "Target"`, "double click"},
		{map[string]any{"button": "right"}, `Right-clicked button "Target"`, "right click"},
		{map[string]any{"button": "middle"}, `Middle-clicked button "Target"`, "middle click"},
		{map[string]any{"modifiers": []string{"Shift"}}, `Clicked button "Target" [ref=` + target + `] with Shift held.`, "shift click"},
	} {
		tc.args["ref"] = target
		out := c.ok("browser_click", tc.args)
		mustContain(t, out, tc.did, `status: `+tc.page)
	}
	r := c.fail("browser_click", map[string]any{"ref": target, "button": "back"}, "INVALID_PARAMS")
	mustContain(t, r.Text, `"back" is not a mouse button`, "left, right or middle")
	r = c.fail("browser_click", map[string]any{"ref": target, "modifiers": []string{"Hyper"}}, "INVALID_PARAMS")
	mustContain(t, r.Text, `"Hyper" is not a key to hold`)

	search := refOf(t, snap, `textbox "Search"`)
	out := c.ok("browser_type", map[string]any{"ref": search, "text": "lamp"})
	if containsAny(out, "4 keys") {
		t.Fatalf("a value put in at once fired key events:\n%s", out)
	}
	out = c.ok("browser_type", map[string]any{"ref": search, "text": "lamp", "slowly": true})
	if !regexp.MustCompile(`paragraph: [4-9] keys \(was: 0 keys\)`).MatchString(out) {
		t.Errorf("typed slowly, the page saw no key for each character:\n%s", out)
	}
	mustContain(t, c.ok("browser_snapshot", nil), `textbox "Search" [ref=`+search+`]: "lamp"`)
}

// An init script (--init-script) runs in every page before the page's own
// scripts, in every role and after every navigation.
func TestInitScripts(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{InitScripts: []string{`window.__seenByInit = location.pathname;
		document.addEventListener('DOMContentLoaded', () => { document.title += ' [init]'; });`}})
	out := c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	mustContain(t, out, "Sign in [init]")
	out = c.ok("browser_navigate", map[string]any{"url": fx.Page("interact.html")})
	mustContain(t, out, " [init]</page-content>")
	mustContain(t, c.ok("browser_evaluate", map[string]any{"function": "() => window.__seenByInit"}), `"/interact.html"`)
}

// A file the page downloads because of a click is saved in the output
// directory, and the click's result names it, its size and its path; a
// second download of the same name does not overwrite the first.
func TestDownloadsAreSavedAndReported(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := connect(t, Config{OutputDir: dir})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_download.html")})
	link := refOf(t, c.ok("browser_snapshot", nil), `link "Export CSV"`)
	want, err := os.ReadFile("../testdata/pages/files/report.csv")
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"report.csv", "report-2.csv"} {
		out := c.ok("browser_click", map[string]any{"ref": link})
		path := filepath.Join(dir, name)
		mustContain(t, out, fmt.Sprintf(`Downloaded "report.csv" (%d bytes) to %s.`, len(want), path))
		got, err := os.ReadFile(path)
		if err != nil || string(got) != string(want) {
			t.Errorf("download %d: %s holds %q (%v), want the served file", i+1, path, got, err)
		}
	}
}

// A status text set next to a label does not run into the label's text,
// which then is not said twice: the field it names says it.
func TestStatusTextAndLabelStayApart(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_status-label.html")})
	snap := c.ok("browser_snapshot", nil)
	mustContain(t, snap, "- text: Saved\n- textbox \"Email\"", `- textbox "Name"`)
	out := c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Save"`)})
	mustContain(t, out, "- text: Clicked!\n")
	if containsAny(out+snap, "Clicked!Name", "Clicked! Name", "SavedEmail", "Saved Email") {
		t.Errorf("a text ran into the label after it:\n%s\n%s", snap, out)
	}
}

// No input schema uses a type union (strict dialects refuse them), and an
// optional argument sent as null is taken as not given.
func TestSchemasHaveNoTypeUnions(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		if regexp.MustCompile(`"type":\s*\[`).Match(b) {
			t.Errorf("%s: its input schema has a type union: %s", tool.Name, b)
		}
	}
	mustContain(t, c.ok("browser_tabs", map[string]any{"action": "list", "index": nil}), "Tabs")
}

// A custom menu's items that only have a click listener, a pointer cursor
// or an onclick attribute get refs, and a click on one works; a container
// whose one listener serves many items (delegation) gets none.
func TestClickListenerTargetsGetRefs(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("listener-controls.html")})
	snap := c.ok("browser_snapshot", nil)
	mustContain(t, snap, `- listitem [ref=`, `]: Profile`, `]: Settings`, `]: Log out`)
	logout := regexp.MustCompile(`listitem \[ref=(e\d+)\]: Log out`).FindStringSubmatch(snap)
	if logout == nil {
		t.Fatalf("the listener-only item has no ref:\n%s", snap)
	}
	mustContain(t, c.ok("browser_click", map[string]any{"ref": logout[1]}), "Logged out")
	if regexp.MustCompile(`\[ref=e\d+\][^\n]*One`).MatchString(snap) || strings.Count(snap, "[ref=") != 3 {
		t.Errorf("the delegating container or its items got refs:\n%s", snap)
	}
}

// A screenshot can also be saved as a file in the output directory, and
// --caps pdf lists browser_pdf_save, which saves the page as a PDF there;
// without the cap the tool is not listed.
func TestFilesInTheOutputDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := connect(t, Config{OutputDir: dir})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	res := c.call("browser_take_screenshot", map[string]any{"filename": "sign-in"})
	if res.IsError {
		t.Fatalf("screenshot: %s", res.Text)
	}
	path := filepath.Join(dir, "sign-in.png")
	mustContain(t, res.Text, "Saved to "+path+".")
	if b, err := os.ReadFile(path); err != nil || !strings.HasPrefix(string(b), "\x89PNG") {
		t.Errorf("%s is not the PNG: %v", path, err)
	}
	if c.listedArgs()["browser_pdf_save"] != nil {
		t.Error("browser_pdf_save is listed without --caps pdf")
	}

	p := connect(t, Config{OutputDir: dir, Caps: []string{"pdf"}})
	p.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	out := p.ok("browser_pdf_save", map[string]any{"filename": "form"})
	pdf := filepath.Join(dir, "form.pdf")
	mustContain(t, out, "as PDF", pdf)
	if b, err := os.ReadFile(pdf); err != nil || !strings.HasPrefix(string(b), "%PDF-") {
		t.Errorf("%s is not a PDF: %v", pdf, err)
	}
}

// Programs get the tabs, the matches of browser_find and the roles as
// structuredContent beside the text.
func TestStructuredResults(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	structured := func(name string, args map[string]any) map[string]any {
		t.Helper()
		r, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || r.IsError {
			t.Fatalf("%s: %v %+v", name, err, r)
		}
		var m map[string]any
		b, _ := json.Marshal(r.StructuredContent)
		if err := json.Unmarshal(b, &m); err != nil || m == nil {
			t.Fatalf("%s: no structuredContent: %s", name, b)
		}
		return m
	}
	tabs := structured("browser_tabs", map[string]any{"action": "list"})["tabs"].([]any)
	if tab := tabs[0].(map[string]any); len(tabs) != 1 || tab["url"] != fx.Page("form.html") || tab["title"] != "Sign in" || tab["current"] != true {
		t.Errorf("tabs: %v", tabs)
	}
	found := structured("browser_find", map[string]any{"role": "button"})
	if m := found["matches"].([]any); found["total"] != float64(1) || !strings.HasPrefix(m[0].(map[string]any)["ref"].(string), "e") {
		t.Errorf("find: %v", found)
	}
	roles := structured("list_current_roles", nil)["roles"].([]any)
	if r := roles[0].(map[string]any); r["name"] != "default" || r["current"] != true || r["open"] != true {
		t.Errorf("roles: %v", roles)
	}
}

// --storage-state: the default role's context starts with the file's
// cookies, as playwright-mcp's does.
func TestStorageStateForTheDefaultRole(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.json")
	state := `{"cookies": [{"name": "theme", "value": "dark", "domain": "127.0.0.1", "path": "/", "expires": -1,
		"httpOnly": false, "secure": false, "sameSite": "Lax"}], "origins": []}`
	if err := os.WriteFile(path, []byte(state), 0o600); err != nil {
		t.Fatal(err)
	}
	c := connect(t, Config{StorageState: path})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	mustContain(t, c.ok("browser_evaluate", map[string]any{"function": "() => document.cookie"}), "theme=dark")
}

// A tool that declares an outputSchema gives structuredContent in every
// successful result, as the protocol asks: each browser_tabs action, a
// browser_find with and without matches, a navigation.
func TestOutputSchemasAreKept(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	for _, tool := range res.Tools {
		if tool.OutputSchema != nil {
			declared[tool.Name] = true
		}
	}
	for _, name := range []string{"browser_navigate", "browser_tabs", "browser_find", "list_current_roles"} {
		if !declared[name] {
			t.Errorf("%s declares no outputSchema", name)
		}
	}
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"browser_navigate", map[string]any{"url": fx.Page("form.html")}},
		{"browser_tabs", map[string]any{"action": "list"}},
		{"browser_tabs", map[string]any{"action": "new"}},
		{"browser_tabs", map[string]any{"action": "new", "url": fx.Page("interact.html")}},
		{"browser_tabs", map[string]any{"action": "select", "index": 0}},
		{"browser_tabs", map[string]any{"action": "close", "index": 1}},
		{"browser_find", map[string]any{"role": "button"}},
		{"browser_find", map[string]any{"name": "nothing here at all"}},
		{"list_current_roles", nil},
	} {
		r, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: call.tool, Arguments: call.args})
		if err != nil || r.IsError {
			t.Fatalf("%s %v: %v %+v", call.tool, call.args, err, r)
		}
		if m, ok := r.StructuredContent.(map[string]any); !ok || len(m) == 0 {
			t.Errorf("%s %v: no structuredContent, though the tool declares an outputSchema", call.tool, call.args)
		}
	}
}
