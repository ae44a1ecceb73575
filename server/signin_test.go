package server

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/roles"
)

// recipePassword is the fixture app's password; wrongPassword, one it
// refuses. Neither may reach a result, an error or a log line.
const (
	recipePassword = "correct horse"
	wrongPassword  = "wr0ng-h0rse-5e1"
)

// recipeServer writes a config with role admin signing in through the
// fixture's form; extra is put in its signIn (fields, a command...). env
// is the environment the recipe reads.
func recipeServer(t *testing.T, dir, signIn string, env map[string]string) (*client, *syncBuffer) {
	t.Helper()
	cfg, err := roles.Load(writeConfig(t, dir, `{"roles": {"admin": {"authFile": "admin.json",
		"defaultUrl": "`+fx.URL+`/account", "loginCheck": {"signedOutUrl": "/login"}, "signIn": `+signIn+`}}}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.LookupEnv = func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	logs := &syncBuffer{}
	c := connectServer(t, New(Config{Roles: cfg, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}, browsers))
	c.record = true
	return c, logs
}

// formRecipe is the fixture's sign-in form as a recipe, with the user's
// field found by label and the password's by role and name.
func formRecipe(userLabel string) string {
	return `{"url": "` + fx.URL + `/login",
		"fields": [{"label": "` + userLabel + `", "value": {"env": "ADMIN_USER"}},
		           {"role": "textbox", "name": "Password", "value": {"env": "ADMIN_PASSWORD"}}],
		"submit": {"role": "button", "name": "Sign in"},
		"success": {"url": "/account"}}`
}

// noSecret checks that no result, structured field or log line carried
// secret.
func noSecret(t *testing.T, c *client, logs *syncBuffer, secret string) {
	t.Helper()
	c.assertNoSecret(secret)
	if strings.Contains(logs.String(), secret) {
		t.Errorf("the log carried a sign-in value:\n%s", logs.String())
	}
}

// recipeNotes returns the lines of out that say the recipe signed the role in.
func recipeNotes(out string) []string {
	var n []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "signed in again by its sign-in recipe") {
			n = append(n, l)
		}
	}
	return n
}

func TestSignInRecipeOnFirstUse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c, logs := recipeServer(t, dir, formRecipe("User"), map[string]string{"ADMIN_USER": "ada", "ADMIN_PASSWORD": recipePassword})
	// No auth file yet: the first call signs in, and ends on its page.
	out := c.ok("browser_navigate", map[string]any{"url": fx.URL + "/account", "role": "admin"})
	mustContain(t, out, "Navigated to "+fx.URL+"/account", "Title: <page-content>Account</page-content>",
		"because its auth file "+filepath.Join(dir, "admin.json")+" was missing; the new sign-in is saved to "+filepath.Join(dir, "admin.json"))
	if n := recipeNotes(out); len(n) != 1 {
		t.Errorf("want one line saying the recipe ran, got %q:\n%s", n, out)
	}
	if strings.Contains(out, "Opened a new tab") || strings.Contains(out, "Warnings:") {
		t.Errorf("the recipe's page showed up in the result:\n%s", out)
	}
	mustContain(t, c.ok("browser_snapshot", map[string]any{"role": "admin"}), "Signed in as ada")
	// Said once.
	if n := recipeNotes(c.ok("browser_navigate", map[string]any{"url": fx.URL + "/account", "role": "admin"})); len(n) != 0 {
		t.Errorf("the note came back: %q", n)
	}

	// The file is written 0600 and signs in another server.
	auth := filepath.Join(dir, "admin.json")
	fi, err := os.Stat(auth)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("auth file mode = %v, want 0600", fi.Mode().Perm())
	}
	other := connect(t, Config{Roles: rolesConfig(t, "admin="+auth)})
	mustContain(t, other.ok("browser_navigate", map[string]any{"url": fx.URL + "/account", "role": "admin"}), "Title: <page-content>Account</page-content>")
	noSecret(t, c, logs, recipePassword)
}

func TestSignInRecipeAfterExpiry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeState(t, filepath.Join(dir, "admin.json"), fx.NewSession("ada"), "")
	c, logs := recipeServer(t, dir, formRecipe("User"), map[string]string{"ADMIN_USER": "ada", "ADMIN_PASSWORD": recipePassword})
	out := c.ok("browser_navigate", map[string]any{"url": fx.URL + "/account", "role": "admin"})
	if len(recipeNotes(out)) != 0 {
		t.Fatalf("a working auth file set the recipe off:\n%s", out)
	}

	// The session ends mid-run: the next navigate lands on /login, signs in
	// and ends on the page it asked for.
	c.ok("browser_navigate", map[string]any{"url": fx.URL + "/expire", "role": "admin"})
	out = c.ok("browser_navigate", map[string]any{"url": fx.URL + "/account", "role": "admin"})
	mustContain(t, out, "Navigated to "+fx.URL+"/account", "Title: <page-content>Account</page-content>",
		"because the page went to its sign-in page "+fx.URL+"/login?next=/account")
	if n := recipeNotes(out); len(n) != 1 {
		t.Errorf("want one note, got %q", n)
	}

	// Again, through a click on a link: the click's redirect target is
	// loaded after the sign-in.
	c.ok("browser_navigate", map[string]any{"url": fx.URL + "/expire", "role": "admin"})
	c.ok("browser_evaluate", map[string]any{"role": "admin",
		"function": "() => { const a = document.createElement('a'); a.href = '/admin'; a.textContent = 'Admin panel'; document.body.append(a); }"})
	snap := c.ok("browser_snapshot", map[string]any{"role": "admin"})
	out = c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `link "Admin panel"`), "role": "admin"})
	mustContain(t, out, "Navigated to "+fx.URL+"/admin", "because the page went to its sign-in page "+fx.URL+"/login?next=/admin")
	// ada is no admin: the page it wanted answers 403, which is the app's
	// word, not a sign-in problem.
	mustContain(t, out, "Title: <page-content>Forbidden</page-content>")
	noSecret(t, c, logs, recipePassword)
}

func TestSignInRecipeWrongPassword(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c, logs := recipeServer(t, dir, formRecipe("User"), map[string]string{"ADMIN_USER": "ada", "ADMIN_PASSWORD": wrongPassword})
	r := c.fail("browser_navigate", map[string]any{"url": fx.URL + "/account", "role": "admin"}, llmerr.AuthenticationFailed)
	t.Logf("a failed recipe as the model sees it:\n%s", r.Text)
	mustContain(t, r.Text, "Role admin could not be signed in by its sign-in recipe: its success condition",
		"the alert <page-content>Wrong user or password.</page-content>", "stayed on "+fx.URL+"/login",
		`browser_navigate(url="`+fx.URL+`/account", role="admin")`, `browser_snapshot(role="admin")`, `browser_save_auth(role="admin")`,
		"not run again in this session")
	if _, err := os.Stat(filepath.Join(dir, "admin.json")); err == nil {
		t.Error("a failed sign-in wrote the auth file")
	}
	// The recipe does not run again: the role browses signed out, warned,
	// and the manual steps work.
	out := c.ok("browser_navigate", map[string]any{"url": fx.URL + "/account", "role": "admin"})
	mustContain(t, out, "Title: <page-content>Sign in</page-content>", "Warnings:")
	if len(recipeNotes(out)) != 0 {
		t.Errorf("the recipe ran again:\n%s", out)
	}
	noSecret(t, c, logs, wrongPassword)
}

func TestSignInRecipeMissingField(t *testing.T) {
	t.Parallel()
	c, logs := recipeServer(t, t.TempDir(), formRecipe("Username"), map[string]string{"ADMIN_USER": "ada", "ADMIN_PASSWORD": recipePassword})
	r := c.fail("browser_navigate", map[string]any{"url": fx.URL + "/account", "role": "admin"}, llmerr.AuthenticationFailed)
	mustContain(t, r.Text, `its field label "Username" was not found on `+fx.URL+"/login", "the title <page-content>Sign in</page-content>",
		`browser_save_auth(role="admin")`)
	if r.Structured["details"].(map[string]any)["field"] != `label "Username"` {
		t.Errorf("details = %v", r.Structured["details"])
	}
	noSecret(t, c, logs, recipePassword)
}

func TestSignInRecipeMissingEnv(t *testing.T) {
	t.Parallel()
	c, logs := recipeServer(t, t.TempDir(), formRecipe("User"), map[string]string{"ADMIN_USER": "ada-env-user-77"})
	r := c.fail("browser_navigate", map[string]any{"url": fx.URL + "/account", "role": "admin"}, llmerr.AuthenticationFailed)
	mustContain(t, r.Text, "the environment variable ADMIN_PASSWORD is not set", `its field textbox "Password" takes its value from ADMIN_PASSWORD`)
	noSecret(t, c, logs, "ada-env-user-77")
}

func TestSignInRecipeCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.json")
	writeState(t, fresh, fx.NewSession("sso-user"), "")
	script := filepath.Join(dir, "sso-login.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho \"got $RETRACE_ROLE\" >&2\ncp '"+fresh+"' \"$RETRACE_AUTH_FILE\"\n"), 0o700)
	c, logs := recipeServer(t, dir, `{"command": ["./sso-login.sh"], "timeoutSeconds": 10}`, nil)

	// No auth file: the command writes it before the context loads it.
	out := c.ok("browser_navigate", map[string]any{"url": fx.URL + "/account", "role": "admin"})
	mustContain(t, out, "Title: <page-content>Account</page-content>", "because its auth file "+filepath.Join(dir, "admin.json")+" was missing")
	mustContain(t, c.ok("browser_snapshot", map[string]any{"role": "admin"}), "Signed in as sso-user")
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html"), "role": "admin"})
	old := refOf(t, c.ok("browser_snapshot", map[string]any{"role": "admin"}), `button "Sign in"`)

	// The session ends: the command runs again, and the context is made
	// again with its file; refs issued before are stale.
	c.ok("browser_navigate", map[string]any{"url": fx.URL + "/expire", "role": "admin"})
	writeState(t, fresh, fx.NewSession("sso-user"), "")
	out = c.ok("browser_navigate", map[string]any{"url": fx.URL + "/account", "role": "admin"})
	mustContain(t, out, "Title: <page-content>Account</page-content>", "because the page went to its sign-in page",
		"Its browser context was made again with the new file, so refs issued before are stale.")
	c.fail("browser_click", map[string]any{"ref": old, "role": "admin"}, llmerr.StaleRef)
	if fi, err := os.Stat(filepath.Join(dir, "admin.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("auth file: %v, %v", fi, err)
	}
	noSecret(t, c, logs, "got admin") // its output is never shown
}

func TestSignInRecipeCommandFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "sso-login.sh"), []byte("#!/bin/sh\necho 'sso: the token endpoint said no' >&2\necho 'second line secret-x1' >&2\necho 'stdout secret-x2'\nexit 3\n"), 0o700)
	c, logs := recipeServer(t, dir, `{"command": ["./sso-login.sh", "--realm", "staff"]}`, nil)
	r := c.fail("browser_navigate", map[string]any{"url": fx.URL + "/account", "role": "admin"}, llmerr.AuthenticationFailed)
	mustContain(t, r.Text, "its command "+filepath.Join(dir, "sso-login.sh")+" exited with status 3",
		"<page-content>sso: the token endpoint said no</page-content>", `browser_save_auth(role="admin")`)
	noSecret(t, c, logs, "secret-x1")
	noSecret(t, c, logs, "secret-x2")
}

// A form's POST answered by a redirect to sign in is not replayed: the
// page it came from is loaded again, signed in, and the result names the
// same call on the element as the page shows it now.
func TestSignInRecipeLostPost(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeState(t, filepath.Join(dir, "admin.json"), fx.NewSession("ada"), "")
	c, logs := recipeServer(t, dir, formRecipe("User"), map[string]string{"ADMIN_USER": "ada", "ADMIN_PASSWORD": recipePassword})
	c.ok("browser_navigate", map[string]any{"url": fx.URL + "/eval/checkout", "role": "admin"})
	snap := c.ok("browser_snapshot", map[string]any{"role": "admin"})
	c.ok("browser_evaluate", map[string]any{"role": "admin", "function": "() => fetch('/expire').then(() => true)"})
	out := c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Pay"`), "role": "admin"})
	mustContain(t, out, "Navigated to "+fx.URL+"/eval/checkout", "because the page went to its sign-in page",
		`The action on button "Pay" did not take effect`, `1. browser_click(ref="`)
	var redo []string
	for _, l := range strings.Split(out, "\n") {
		if m := stepLine.FindStringSubmatch(l); m != nil {
			redo = m
		}
	}
	if redo == nil {
		t.Fatalf("no step to redo the click:\n%s", out)
	}
	mustContain(t, c.ok(redo[1], parseCallArgs(t, redo[2])), "Title: <page-content>Paid</page-content>")
	noSecret(t, c, logs, recipePassword)
}
