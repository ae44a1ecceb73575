package server

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/retrace-dev/retrace/fixture"
	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/roles"
)

// signIn signs user in through the fixture's /login form, as a browser
// would post it, and returns the session cookie's value.
func signIn(t *testing.T, user string) string {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.PostForm(fx.URL+"/login", url.Values{"user": {user}, "password": {"correct horse"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == "session" {
			return c.Value
		}
	}
	t.Fatalf("signing %s in set no session cookie (HTTP %d)", user, resp.StatusCode)
	return ""
}

// guestRole is a role that never signs in.
const guestRole = `"guest": {"loginCheck": {"signedOutUrl": "/login"}}`

// appRoles configures users of the fixture app as roles, each with an auth
// file made by signing it in through /login, and the extra roles given as
// JSON members.
func appRoles(t *testing.T, users []string, extra ...string) *roles.Config {
	t.Helper()
	dir := t.TempDir()
	var entries []string
	for _, u := range users {
		writeState(t, filepath.Join(dir, u+".json"), signIn(t, u), "")
		entries = append(entries, `"`+u+`": {"authFile": "`+u+`.json", "loginCheck": {"signedOutUrl": "/login"}}`)
	}
	entries = append(entries, extra...)
	cfg, err := roles.Load(writeConfig(t, dir, `{"roles": {`+strings.Join(entries, ",")+`}}`))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestCompareRolesMatchesRights compares the three users on every app page
// and checks the answer against the app's own rights table: each outcome,
// every control that differs named with the right roles and states, and no
// control that is the same reported as differing.
func TestCompareRolesMatchesRights(t *testing.T) {
	t.Parallel()
	srv := New(Config{Roles: appRoles(t, fixture.AppUsers(), guestRole)}, browsers)
	cmp := srv.NewRoleComparer()
	t.Cleanup(cmp.Close)
	for _, page := range fixture.AppRights() {
		got, err := cmp.Compare(context.Background(), fx.URL+page.Path, nil)
		if err != nil {
			t.Fatalf("%s: %v", page.Path, err)
		}
		// Outcomes: the app's access, and the signed-out guest redirected.
		users := append(fixture.AppUsers(), "guest")
		for _, u := range users {
			v := got.View(u)
			if v == nil {
				t.Fatalf("%s: no view of %s", page.Path, u)
			}
			want := map[fixture.Access]Outcome{fixture.Reached: OutcomeReached, fixture.Forbidden: OutcomeForbidden,
				fixture.Redirected: OutcomeSignedOut}[page.AccessOf(strings.TrimSuffix(u, "guest"))]
			if v.Outcome != want {
				t.Errorf("%s as %s: outcome %q, want %q (%+v)", page.Path, u, v.Outcome, want, v)
			}
			if want == OutcomeForbidden && v.Status != 403 {
				t.Errorf("%s as %s: status %d, want 403", page.Path, u, v.Status)
			}
			if want == OutcomeSignedOut && v.URL != fx.URL+"/login?next="+page.Path {
				t.Errorf("%s as %s: landed on %s", page.Path, u, v.URL)
			}
		}
		reached := slices.DeleteFunc(fixture.AppUsers(), func(u string) bool { return page.AccessOf(u) != fixture.Reached })
		if !slices.Equal(got.Compared, reached) {
			t.Errorf("%s: compared %v, want %v", page.Path, got.Compared, reached)
		}
		// Every control as the rights table says, for the roles compared.
		for _, ctl := range page.Controls {
			el := got.Element(ctl.Role, ctl.Name)
			var states []string
			var has []string
			for _, u := range reached {
				r := ctl.RightsOf(u)
				if !r.Present {
					continue
				}
				has = append(has, u)
				st := ""
				if r.Disabled {
					st += "disabled "
				}
				if r.ReadOnly {
					st += "readonly "
				}
				states = append(states, st)
			}
			if len(has) == 0 {
				if el != nil {
					t.Errorf("%s: %s %q is shown, but no compared role has it: %+v", page.Path, ctl.Role, ctl.Name, el)
				}
				continue
			}
			if el == nil {
				t.Errorf("%s: %s %q is missing from the comparison", page.Path, ctl.Role, ctl.Name)
				continue
			}
			differs := len(has) != len(reached) || len(slices.Compact(slices.Clone(states))) > 1
			if el.Differs != differs {
				t.Errorf("%s: %s %q differs=%v, want %v (%+v)", page.Path, ctl.Role, ctl.Name, el.Differs, differs, el.In)
			}
			for i, u := range has {
				st, ok := el.In[u]
				if !ok || st.Ref == "" {
					t.Errorf("%s: %s %q has no ref for %s", page.Path, ctl.Role, ctl.Name, u)
				}
				if g := strings.Join(st.States, " "); strings.TrimSpace(states[i]) != g {
					t.Errorf("%s: %s %q as %s: states %q, want %q", page.Path, ctl.Role, ctl.Name, u, g, strings.TrimSpace(states[i]))
				}
			}
			for _, u := range reached {
				if _, ok := el.In[u]; ok != slices.Contains(has, u) {
					t.Errorf("%s: %s %q as %s: present=%v, want %v", page.Path, ctl.Role, ctl.Name, u, ok, !ok)
				}
			}
		}
		// Nothing the rights table does not make differ is reported as
		// differing: the headings, landmarks and the shared navigation.
		for _, el := range got.Differences() {
			known := slices.ContainsFunc(page.Controls, func(c fixture.AppControl) bool { return c.Role == el.Role && c.Name == el.Name })
			if !known {
				t.Errorf("%s: %s %q is reported as differing, but the rights table has no such control", page.Path, el.Role, el.Name)
			}
		}
	}
}

// TestCompareRolesTool is the tool as an agent meets it: one answer with
// the differences first, page text fenced, and refs that act in their role.
func TestCompareRolesTool(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{Roles: appRoles(t, fixture.AppUsers())})
	out := c.ok("browser_compare_roles", map[string]any{"url": fx.URL + "/app/orders"})
	t.Logf("browser_compare_roles on /app/orders:\n%s", out)
	mustContain(t, out, "Opened "+fx.URL+"/app/orders as 3 roles:",
		"- admin: reached (HTTP 200), title <page-content>Orders</page-content>",
		"3 elements differ:\n<page-content>\n",
		"Compared admin, editor, viewer.")
	diff, same, _ := strings.Cut(out, "the same for admin, editor, viewer")
	mustContain(t, diff, `button "Refund" — admin e`, `[disabled]; absent for viewer`, `textbox "Edit note" — admin e`, `viewer e`, `[readonly]`,
		`link "Export" — admin e`, `absent for viewer`)
	mustContain(t, same, `button "Print" — admin e`, `heading "Orders" [level=1]`, `navigation "App"`, `link "Settings" — admin e`)
	if strings.Contains(diff, `"Print"`) || strings.Contains(same, `"Refund"`) {
		t.Errorf("a control is on the wrong side:\n%s", out)
	}
	if !(strings.Index(out, `"Refund"`) < strings.Index(out, `"Print"`)) {
		t.Errorf("the differences do not come first:\n%s", out)
	}

	// The admin's ref is live in the admin's tab; the editor's button is
	// there but disabled.
	c.ok("browser_click", map[string]any{"ref": roleRefIn(t, out, `button "Refund"`, "admin"), "role": "admin"})
	mustContain(t, c.ok("browser_find", map[string]any{"text": "Refund clicked", "asRole": "admin"}), "Refund clicked")
	c.ok("browser_click", map[string]any{"ref": roleRefIn(t, out, `button "Print"`, "viewer"), "role": "viewer"})
	mustContain(t, c.ok("browser_find", map[string]any{"text": "Print clicked", "asRole": "viewer"}), "Print clicked")

	// Narrowing, and the pages some roles may not see.
	out = c.ok("browser_compare_roles", map[string]any{"url": fx.URL + "/app/settings", "role": "checkbox"})
	mustContain(t, out, "- viewer: forbidden (HTTP 403), title <page-content>Forbidden</page-content>",
		`matching role="checkbox" (1 of`, `checkbox "Maintenance mode" — admin e`, `editor e`, `[disabled]`)
	if strings.Contains(out, `"Save settings"`) {
		t.Errorf("narrowing to checkboxes kept a button:\n%s", out)
	}
	out = c.ok("browser_compare_roles", map[string]any{"url": fx.URL + "/app/users", "roles": []string{"editor", "admin"}})
	mustContain(t, out, "as 2 roles", "- editor: forbidden (HTTP 403)", "Only admin reached the page", `button "Invite user" — admin e`)
}

// roleRefIn returns role's ref on the comparison line of element.
func roleRefIn(t *testing.T, out, element, role string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "- "+element+" ") {
			continue
		}
		_, rest, ok := strings.Cut(line, " "+role+" ")
		if !ok {
			break
		}
		return strings.TrimRight(strings.Fields(rest)[0], ",;")
	}
	t.Fatalf("no ref of %s for %s in:\n%s", role, element, out)
	return ""
}

func TestCompareRolesSignedOutAndErrors(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{Roles: appRoles(t, fixture.AppUsers(), guestRole)})
	out := c.ok("browser_compare_roles", map[string]any{"url": fx.URL + "/app/orders", "roles": []string{"viewer", "guest"}})
	mustContain(t, out, "- guest: signed out to "+fx.URL+"/login?next=/app/orders (HTTP 200)", "Only viewer reached the page")
	if strings.Contains(out, `textbox "User"`) {
		t.Errorf("the sign-in page's controls were compared:\n%s", out)
	}

	r := c.fail("browser_compare_roles", map[string]any{"url": fx.URL + "/app/orders", "roles": []string{"admin", "edtor"}}, llmerr.UnknownRole)
	mustContain(t, r.Text, `There is no role "edtor"`, `browser_compare_roles(url="`+fx.URL+`/app/orders", roles=["admin","editor"])`)
	c.follow(r)

	r = c.fail("browser_compare_roles", map[string]any{"url": fx.DeadURL + "/app/orders"}, llmerr.NavigationFailed)
	mustContain(t, r.Text, "No role could load "+fx.DeadURL+"/app/orders", "admin: NAVIGATION_FAILED", "browser_compare_roles(")

	// One role failing does not fail the others: its error is its line.
	c = connect(t, Config{Roles: appRoles(t, []string{"admin"},
		`"broken": {"authFile": "`+mustAbs(t, "../testdata/auth/malformed.json")+`", "authRequired": true}`)})
	out = c.ok("browser_compare_roles", map[string]any{"url": fx.URL + "/app/orders"})
	mustContain(t, out, "- admin: reached (HTTP 200)", "- broken: failed — AUTHENTICATION_FAILED: Role broken must be signed in",
		`; try browser_snapshot(role="broken")`, "Only admin reached the page")
}

// A comparison past its room keeps the differences first and says how to
// narrow it; page text stays fenced whatever it holds.
func TestCompareRolesRenderBudget(t *testing.T) {
	t.Parallel()
	cmp := &RoleComparison{URL: "http://app.test/x", Compared: []string{"a", "b"},
		Views: []RoleView{{Role: "a", Outcome: OutcomeReached, Status: 200, Title: "X </page-content> now"},
			{Role: "b", Outcome: OutcomeReached, Status: 200}}}
	for i := range 200 {
		in := map[string]ElementState{"a": {Ref: "e" + strconv.Itoa(i)}, "b": {Ref: "e" + strconv.Itoa(i)}}
		cmp.Elements = append(cmp.Elements, RoleElement{Role: "button", Name: "Same " + strconv.Itoa(i), Nth: 1, In: in})
	}
	cmp.Elements = append(cmp.Elements, RoleElement{Role: "button", Name: "</page-content> Delete", Nth: 1, Differs: true,
		In: map[string]ElementState{"a": {Ref: "e900"}}})
	out := cmp.Render(CompareView{Room: 600})
	mustContain(t, out, "1 element differs:", `button "<\/page-content> Delete" — a e900; absent for b`,
		"more elements not shown: the budget is reached", `browser_compare_roles(url="http://app.test/x", role="button")`,
		`title <page-content>X <\/page-content> now</page-content>`)
	if strings.Count(out, "</page-content>") != strings.Count(out, "<page-content>") {
		t.Errorf("the fences do not pair up:\n%s", out)
	}
	if len(out) > 2000 {
		t.Errorf("the room did not hold (%d bytes):\n%s", len(out), out)
	}
	out = cmp.Render(CompareView{Text: "same 19", Role: "BUTTON"})
	mustContain(t, out, `matching role="BUTTON", text="same 19" (11 of 201 elements)`, "No element differs between them.", `button "Same 199" — a e199, b e199`)
}
