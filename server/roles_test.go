package server

import (
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/roles"
)

func rolesConfig(t *testing.T, flags ...string) *roles.Config {
	t.Helper()
	cfg := roles.New()
	for _, f := range flags {
		if err := cfg.AddFlag(f); err != nil {
			t.Fatal(err)
		}
	}
	return cfg
}

func TestUnknownRole(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{Roles: rolesConfig(t, "admin=/nonexistent/admin.json")})
	r := c.fail("browser_navigate", map[string]any{"url": fx.Page("form.html"), "role": "admn"}, llmerr.UnknownRole)
	c.golden("UNKNOWN_ROLE", r)
	mustContain(t, r.Text, `There is no role "admn"`, `the roles are "default", "admin"`, `select_role(role="admin")`)
	r = c.fail("select_role", map[string]any{"role": "guest"}, llmerr.UnknownRole)
	mustContain(t, r.Text, "list_current_roles()")
	// The session is unchanged by the failures.
	mustContain(t, c.ok("get_current_role", nil), "Current role: default")
}

func TestSelectAndListRoles(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{Roles: rolesConfig(t, "customer=/nonexistent/customer.json,"+fx.Page("form.html"))})
	list := c.ok("list_current_roles", nil)
	mustContain(t, list, "* default — no auth", "customer — auth file /nonexistent/customer.json", "starts at "+fx.Page("form.html"))
	sel := c.ok("select_role", map[string]any{"role": "customer"})
	mustContain(t, sel, "Acting as customer (was default)", `browser_navigate(url="`+fx.Page("form.html")+`")`)
	mustContain(t, c.ok("get_current_role", nil), "Current role: customer")

	// Each role has its own page and refs: the default role's page is blank
	// while the customer's shows the form.
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	snapC := c.ok("browser_snapshot", nil)
	mustContain(t, snapC, `textbox "Email"`)
	snapD := c.ok("browser_snapshot", map[string]any{"role": "default"})
	mustContain(t, snapD, "URL: about:blank")
	// A customer ref is not a default-role ref.
	c.fail("browser_click", map[string]any{"ref": refOf(t, snapC, `button "Sign in"`), "role": "default"}, llmerr.UnknownRef)
	mustContain(t, c.ok("list_current_roles", nil), "* customer", "browser open")
}

const secretCookie = "s3cr3t-cookie-value-9f2"

// authFile writes a storage state with one cookie for the fixture origin.
func authFile(t *testing.T, dir, name string) string {
	t.Helper()
	u, _ := url.Parse(fx.URL)
	p := filepath.Join(dir, name)
	st := fmt.Sprintf(`{"cookies":[{"name":"session","value":%q,"domain":%q,"path":"/","expires":-1,"httpOnly":false,"secure":false,"sameSite":"Lax"}],"origins":[]}`,
		secretCookie, u.Hostname())
	if err := os.WriteFile(p, []byte(st), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRolesLoadAuthAndStayIsolated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := connect(t, Config{Roles: rolesConfig(t, "admin="+authFile(t, dir, "admin.json"))})
	c.record = true
	defer c.assertNoSecret(secretCookie)
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html"), "role": "admin"})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	got := c.ok("browser_evaluate", map[string]any{"function": "() => document.cookie.includes('session=')", "role": "admin"})
	mustContain(t, got, "Result: <page-content>true</page-content>")
	got = c.ok("browser_evaluate", map[string]any{"function": "() => document.cookie.includes('session=')"})
	mustContain(t, got, "Result: <page-content>false</page-content>")
}

func TestAuthFileProblems(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.json")
	broken := filepath.Join(dir, "broken.json")
	os.WriteFile(broken, []byte(`{"cookies": [{"value": "`+secretCookie+`"`), 0o600)
	cfg := rolesConfig(t, "visitor="+missing)
	cfg2, err := roles.Load(writeConfig(t, dir, `{"roles": {"admin": {"authFile": "broken.json", "authRequired": true, "defaultUrl": "`+fx.Page("form.html")+`"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	// Optional auth: a warning from the moment the role is selected, and
	// public pages still work.
	c := connect(t, Config{Roles: cfg})
	mustContain(t, c.ok("list_current_roles", nil), "visitor — auth file "+missing+", browser not open yet, auth: not checked yet")
	mustContain(t, c.ok("select_role", map[string]any{"role": "visitor"}), "Acting as visitor", "Warnings:\n- Role visitor is browsing signed out")
	mustContain(t, c.ok("list_current_roles", nil), "auth: signed out (auth file missing)")
	c.ok("select_role", map[string]any{"role": "default"})
	res := c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html"), "role": "visitor"})
	mustContain(t, res, "Title: <page-content>Sign in</page-content>", "Warnings:\n- Role visitor is browsing signed out: its auth file "+missing+" is missing", `browser_save_auth(role="visitor")`)
	// The warning stays on the role's results until its sign-in works, and
	// only on that role's.
	mustContain(t, c.ok("browser_snapshot", map[string]any{"role": "visitor"}), "Role visitor is browsing signed out")
	if s := c.ok("browser_snapshot", nil); strings.Contains(s, "Warnings:") {
		t.Errorf("the default role got the visitor's warning:\n%s", s)
	}
	mustContain(t, c.ok("browser_save_auth", map[string]any{"role": "visitor"}), "Saved the sign-in of role visitor")
	if s := c.ok("browser_snapshot", map[string]any{"role": "visitor"}); strings.Contains(s, "Warnings:") {
		t.Errorf("the warning outlived the fix:\n%s", s)
	}

	// Required auth: AUTHENTICATION_FAILED with the way to sign in again;
	// following it works, and saving makes the warning go away.
	c = connect(t, Config{Roles: cfg2})
	c.record = true
	defer c.assertNoSecret(secretCookie)
	r := c.fail("browser_snapshot", map[string]any{"role": "admin"}, llmerr.AuthenticationFailed)
	mustContain(t, r.Text, "must be signed in, but its auth file", "is malformed", "syntax error at byte",
		`1. browser_navigate(url="`+fx.Page("form.html")+`", role="admin")`, `browser_save_auth(role="admin")`)
	if strings.Contains(r.Text, secretCookie) || strings.Contains(fmt.Sprint(r.Structured), secretCookie) {
		t.Fatal("the auth file's secret reached the error")
	}
	last := c.follow(r)
	mustContain(t, last, "Saved the sign-in of role admin to "+filepath.Join(dir, "broken.json"))
	if err := roles.CheckAuthFile(filepath.Join(dir, "broken.json")); err != nil {
		t.Errorf("the saved file is not a storage state: %v", err)
	}
}

func writeConfig(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "retrace.json")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRefOfAnotherRole(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{Roles: rolesConfig(t, "customer=/nonexistent/customer.json")})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html"), "role": "customer"})
	snap := c.ok("browser_snapshot", map[string]any{"role": "customer"})
	ref := refOf(t, snap, `button "Sign in"`)
	c.ok("browser_navigate", map[string]any{"url": fx.Page("nav.html")})
	r := c.fail("browser_click", map[string]any{"ref": ref}, llmerr.UnknownRef)
	mustContain(t, r.Text, `it was issued in role customer (for its button "Sign in")`, `1. browser_click(ref="`+ref+`", role="customer")`)
	c.follow(r)
}

func TestAuthFailedGolden(t *testing.T) {
	t.Parallel()
	cfg, err := roles.Load(writeConfig(t, t.TempDir(), `{"roles": {"admin": {"authFile": "`+
		mustAbs(t, "../testdata/auth/malformed.json")+`", "authRequired": true, "defaultUrl": "`+fx.Page("form.html")+`"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, Config{Roles: cfg})
	r := c.fail("browser_navigate", map[string]any{"url": fx.Page("form.html"), "role": "admin"}, llmerr.AuthenticationFailed)
	wd, _ := os.Getwd()
	r.Text = strings.ReplaceAll(r.Text, filepath.Dir(wd), "{{REPO}}")
	for k, v := range r.Structured {
		if s, ok := v.(string); ok {
			r.Structured[k] = strings.ReplaceAll(s, filepath.Dir(wd), "{{REPO}}")
		}
	}
	delete(r.Structured, "details")
	delete(r.Structured, "actions")
	c.golden("AUTHENTICATION_FAILED", r)
	if strings.Contains(r.Text, "never-shown") {
		t.Fatal("the auth file's secret reached the error")
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestSessionExpiresDuringRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	token := fx.NewSession("ada")
	writeState(t, filepath.Join(dir, "shopper.json"), token, "")
	cfg, err := roles.Load(writeConfig(t, dir, `{"roles": {
		"shopper": {"authFile": "shopper.json", "authRequired": true, "loginCheck": {"signedOutUrl": "/login"}},
		"visitor": {"loginCheck": {"signedOutUrl": "/login"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, Config{Roles: cfg})
	var outputs []string
	keep := func(s string) string { outputs = append(outputs, s); return s }
	keep(c.ok("select_role", map[string]any{"role": "shopper"}))
	mustContain(t, keep(c.ok("browser_navigate", map[string]any{"url": fx.URL + "/account"})), "Title: <page-content>Account</page-content>")

	// The server ends the session mid-run: the next page is a login redirect.
	keep(c.ok("browser_navigate", map[string]any{"url": fx.URL + "/expire"}))
	r := c.fail("browser_navigate", map[string]any{"url": fx.URL + "/account"}, llmerr.AuthenticationFailed)
	keep(r.Text)
	t.Logf("the auth-expired error as the model sees it:\n%s", r.Text)
	mustContain(t, r.Text, "Role shopper is signed out: the site sent it to its sign-in page", "/login?next=/account",
		`1. browser_snapshot(role="shopper")`, `2. browser_save_auth(role="shopper")`)

	// The plan: sign in through the page, save; the role works again.
	snap := keep(c.ok("browser_snapshot", map[string]any{"role": "shopper"}))
	keep(c.ok("browser_type", map[string]any{"ref": refOf(t, snap, `textbox "User"`), "text": "ada"}))
	keep(c.ok("browser_type", map[string]any{"ref": refOf(t, snap, `textbox "Password"`), "text": "correct horse", "submit": true}))
	mustContain(t, keep(c.ok("browser_save_auth", map[string]any{"role": "shopper"})), "1 cookie,")
	mustContain(t, keep(c.ok("browser_navigate", map[string]any{"url": fx.URL + "/account"})), "Title: <page-content>Account</page-content>")

	// A role whose auth is optional gets a warning instead, and public pages work.
	res := keep(c.ok("browser_navigate", map[string]any{"url": fx.URL + "/account", "role": "visitor"}))
	mustContain(t, res, "Title: <page-content>Sign in</page-content>", "Warnings:\n- Role visitor looks signed out: the page went to the sign-in page")
	mustContain(t, keep(c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html"), "role": "visitor"})), "Warnings:")

	// No output ever carried the session secret.
	for _, o := range outputs {
		if strings.Contains(o, token) {
			t.Fatalf("a result carried the session cookie:\n%s", o)
		}
	}
}

// writeState writes a storage state with the fixture app's session cookie
// and, if theme is set, the theme the app keeps in local storage.
func writeState(t *testing.T, path, token, theme string) {
	t.Helper()
	u, _ := url.Parse(fx.URL)
	origins := "[]"
	if theme != "" {
		origins = fmt.Sprintf(`[{"origin":%q,"localStorage":[{"name":"theme","value":%q}]}]`, fx.URL, theme)
	}
	state := fmt.Sprintf(`{"cookies":[{"name":"session","value":%q,"domain":%q,"path":"/","expires":-1,"httpOnly":true,"secure":false,"sameSite":"Lax"}],"origins":%s}`,
		token, u.Hostname(), origins)
	if err := os.WriteFile(path, []byte(state), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestTwoRolesAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	adminToken, customerToken := fx.NewSession("admin"), fx.NewSession("customer")
	writeState(t, filepath.Join(dir, "admin.json"), adminToken, "dark")
	writeState(t, filepath.Join(dir, "customer.json"), customerToken, "light")
	var logs syncBuffer
	cfg := rolesConfig(t, "admin="+filepath.Join(dir, "admin.json"), "customer="+filepath.Join(dir, "customer.json"))
	c := connectServer(t, New(Config{Roles: cfg, Logger: slog.New(slog.NewTextHandler(&logs, nil))}, browsers))
	c.record = true

	// Both roles act at the same moment, each in its own context.
	var wg sync.WaitGroup
	got := map[string]reply{}
	var mu sync.Mutex
	for _, role := range []string{"admin", "customer"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := c.callAsync("browser_navigate", map[string]any{"url": fx.URL + "/admin", "role": role})
			mu.Lock()
			got[role] = r
			mu.Unlock()
		}()
	}
	wg.Wait()
	mustContain(t, got["admin"].Text, "Title: <page-content>Admin</page-content>", "HTTP 200")
	mustContain(t, got["customer"].Text, "Title: <page-content>Forbidden</page-content>", "HTTP 403")

	// Cookies and local storage never cross roles.
	mustContain(t, c.ok("browser_navigate", map[string]any{"url": fx.URL + "/account", "role": "admin"}), "Title: <page-content>Account</page-content>")
	mustContain(t, c.ok("browser_snapshot", map[string]any{"role": "admin"}), "Signed in as admin", "Theme: dark")
	c.ok("browser_navigate", map[string]any{"url": fx.URL + "/account", "role": "customer"})
	mustContain(t, c.ok("browser_snapshot", map[string]any{"role": "customer"}), "Signed in as customer", "Theme: light")
	c.ok("browser_navigate", map[string]any{"url": fx.URL + "/account"})
	mustContain(t, c.ok("browser_snapshot", nil), "Title: Sign in") // the default role is nobody
	c.ok("list_current_roles", nil)
	mustContain(t, c.ok("browser_find", map[string]any{"text": "Signed in as", "asRole": "customer"}), `Signed in as customer`)
	c.ok("browser_save_auth", map[string]any{"role": "customer"})

	// No secret of the auth files reached a result, an error, a structured
	// field or a log line.
	c.assertNoSecret(adminToken, customerToken)
	for _, s := range []string{adminToken, customerToken} {
		if strings.Contains(logs.String(), s) {
			t.Errorf("the log carried a session secret")
		}
	}
}

func TestLoginCheckURL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeState(t, filepath.Join(dir, "stale.json"), "sess-revoked-long-ago", "")
	writeState(t, filepath.Join(dir, "fresh.json"), fx.NewSession("ada"), "")
	cfg, err := roles.Load(writeConfig(t, dir, `{"roles": {
		"stale": {"authFile": "stale.json", "authRequired": true, "loginCheck": {"url": "`+fx.URL+`/account", "signedOutUrl": "/login"}},
		"lapsed": {"authFile": "stale.json", "loginCheck": {"url": "`+fx.URL+`/account", "signedOutUrl": "/login"}},
		"fresh": {"authFile": "fresh.json", "authRequired": true, "loginCheck": {"url": "`+fx.URL+`/account", "signedOutUrl": "/login"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, Config{Roles: cfg})
	r := c.fail("browser_navigate", map[string]any{"url": fx.Page("form.html"), "role": "stale"}, llmerr.AuthenticationFailed)
	mustContain(t, r.Text, "Role stale is signed out: its check page "+fx.URL+"/account landed on "+fx.URL+"/login?next=/account",
		`1. browser_navigate(url="`+fx.URL+`/account", role="stale")`)
	mustContain(t, c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html"), "role": "lapsed"}),
		"Warnings:\n- Role lapsed looks signed out: its check page")
	res := c.ok("browser_navigate", map[string]any{"url": fx.URL + "/account", "role": "fresh"})
	mustContain(t, res, "Title: <page-content>Account</page-content>")
	if strings.Contains(res, "Warnings:") {
		t.Errorf("a working sign-in was warned about:\n%s", res)
	}
}

// TestCloseStartsTheRoleAfresh: browser_close ends the role's session, so
// an auth problem reported once in it is reported again in the next, and
// the auth file is read again: written in between, it signs the role in.
func TestCloseStartsTheRoleAfresh(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, err := roles.Load(writeConfig(t, dir, `{"roles": {
		"shopper": {"authFile": "shopper.json", "authRequired": true, "loginCheck": {"signedOutUrl": "/login"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, Config{Roles: cfg})
	// Reported once in a session (here as the role is selected): after the
	// error, the role browses signed out with a warning.
	c.fail("select_role", map[string]any{"role": "shopper"}, llmerr.AuthenticationFailed)
	public := map[string]any{"url": fx.Page("form.html")}
	mustContain(t, c.ok("browser_navigate", public), "Warnings:\n- Role shopper is browsing signed out")
	mustContain(t, c.ok("browser_close", nil), "Closed the browser")
	// A new session: the same problem is an error again.
	c.fail("browser_navigate", public, llmerr.AuthenticationFailed)
	// A sign-in written to the file between sessions is the next one's.
	writeState(t, filepath.Join(dir, "shopper.json"), fx.NewSession("ada"), "")
	c.ok("browser_close", nil)
	res := c.ok("browser_navigate", map[string]any{"url": fx.URL + "/account"})
	mustContain(t, res, "Title: <page-content>Account</page-content>")
	if strings.Contains(res, "Warnings:") {
		t.Errorf("the last session's warning outlived browser_close:\n%s", res)
	}
}
