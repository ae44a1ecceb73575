package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrace-dev/retrace/fixture"
)

// The sign-in password of the fixture app: it must never show in what the
// check prints or writes.
const checkPassword = "correct horse"

// checkSetup writes a roles config where admin, editor and viewer sign in
// through the fixture's form with a recipe (values from the environment
// checkEnv sets) and guest never signs in, and a --urls file of every app
// page. It returns the config and urls paths.
func checkSetup(t *testing.T) (dir, config, urls string) {
	t.Helper()
	dir = t.TempDir()
	var entries []string
	for _, u := range fixture.AppUsers() {
		entries = append(entries, `"`+u+`": {"authFile": "`+u+`.json", "loginCheck": {"signedOutUrl": "/login"},
			"signIn": {"url": "`+fx.URL+`/login",
				"fields": [{"label": "User", "value": {"env": "CHECK_USER_`+strings.ToUpper(u)+`"}},
				           {"label": "Password", "value": {"env": "CHECK_PASSWORD"}}],
				"submit": {"role": "button", "name": "Sign in"}, "success": {"url": "/account"}}}`)
	}
	entries = append(entries, `"guest": {"loginCheck": {"signedOutUrl": "/login"}}`)
	config = writeFile(t, dir, "retrace.json", `{"roles": {`+strings.Join(entries, ",\n")+`}}`)
	lines := []string{"# the fixture app's pages", ""}
	for _, p := range fixture.AppRights() {
		lines = append(lines, fx.URL+p.Path)
	}
	urls = writeFile(t, dir, "urls.txt", strings.Join(lines, "\n")+"\n")
	return dir, config, urls
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// appExpect is the --expect file the fixture's rights table makes: each
// user's outcome on each page, the controls it has with their exact states
// and those it does not have; guest is signed out everywhere.
func appExpect() map[string]map[string]map[string]any {
	urls := map[string]map[string]map[string]any{}
	for _, p := range fixture.AppRights() {
		byRole := map[string]map[string]any{"guest": {"outcome": "signed-out"}}
		for _, u := range fixture.AppUsers() {
			e := map[string]any{"outcome": string(p.AccessOf(u))}
			must, mustNot := []string{}, []string{}
			for _, c := range p.Controls {
				r := c.RightsOf(u)
				spec := c.Role + ` "` + c.Name + `"`
				switch {
				case !r.Present:
					mustNot = append(mustNot, spec)
				case r.Disabled:
					must = append(must, spec+" [disabled]")
				case r.ReadOnly:
					must = append(must, spec+" [readonly]")
				default:
					must = append(must, spec+" []")
				}
			}
			if p.AccessOf(u) == fixture.Reached {
				e["must"], e["mustNot"] = must, mustNot
			}
			byRole[u] = e
		}
		urls[fx.URL+p.Path] = byRole
	}
	return urls
}

// runCheck runs `retrace roles check` with the recipe's environment and
// returns its exit code, stdout and stderr.
func runCheck(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"roles", "check"}, args...)...)
	cmd.Env = append(os.Environ(), "CHECK_PASSWORD="+checkPassword)
	for _, u := range fixture.AppUsers() {
		cmd.Env = append(cmd.Env, "CHECK_USER_"+strings.ToUpper(u)+"="+u)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	t.Logf("retrace roles check %s\nexit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), cmd.ProcessState.ExitCode(), stdout.String(), stderr.String())
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

func writeExpect(t *testing.T, dir string, urls map[string]map[string]map[string]any) string {
	t.Helper()
	data, err := json.MarshalIndent(map[string]any{"urls": urls}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, dir, "expect.json", string(data))
}

// noPassword checks nothing printed or written carries the sign-in
// password.
func noPassword(t *testing.T, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(s, checkPassword) {
			t.Errorf("the sign-in password was printed or written:\n%s", s)
		}
	}
}

// TestRolesCheckMatchesRights checks every app page as the three users and
// a guest against the expectations the rights table makes: exit 0, and a
// matrix with each outcome and the controls that differ.
func TestRolesCheckMatchesRights(t *testing.T) {
	dir, config, urls := checkSetup(t)
	expect := writeExpect(t, dir, appExpect())
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCheck(t, "--config", config, "--urls", urls, "--expect", expect, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	if want := "Checked 3 URLs as admin, editor, guest, viewer: 0 differences from " + expect; !strings.Contains(stdout, want) {
		t.Errorf("stdout lacks %q", want)
	}
	md, js := readFile(filepath.Join(out, "matrix.md")), readFile(filepath.Join(out, "matrix.json"))
	t.Logf("matrix.md:\n%s", md)
	noPassword(t, stdout, stderr, md, js)
	for _, want := range []string{
		"| URL | admin | editor | guest | viewer |",
		"| " + fx.URL + "/app/orders | reached | reached | signed out (/login?next=/app/orders) | reached |",
		"| " + fx.URL + "/app/settings | reached | reached | signed out (/login?next=/app/settings) | forbidden (403) |",
		"| " + fx.URL + "/app/users | reached | forbidden (403) | signed out (/login?next=/app/users) | forbidden (403) |",
		"None: every expectation is met.",
		"| control | admin | editor | viewer |",
		`| button "Refund" | ✓ | ✓ [disabled] | — |`,
		`| textbox "Edit note" | ✓ | ✓ | ✓ [readonly] |`,
		`| checkbox "Maintenance mode" | ✓ | ✓ [disabled] |`,
		"Only admin was let in: nothing to compare.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("matrix.md lacks %q", want)
		}
	}
	var m matrix
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatalf("matrix.json: %v", err)
	}
	if len(m.URLs) != 3 || m.Differences != nil {
		t.Fatalf("matrix.json has %d URLs and differences %v", len(m.URLs), m.Differences)
	}
	for i, p := range fixture.AppRights() {
		row := m.URLs[i]
		for _, u := range fixture.AppUsers() {
			if got := row.cell(u).outcomeWord(); got != string(p.AccessOf(u)) {
				t.Errorf("matrix.json %s as %s: %s, want %s", p.Path, u, got, p.AccessOf(u))
			}
		}
	}
}

// TestRolesCheckReportsDifferences changes two expectations: each is a
// line naming the URL, the role and the control or outcome, and the exit
// code is 1.
func TestRolesCheckReportsDifferences(t *testing.T) {
	dir, config, urls := checkSetup(t)
	exp := appExpect()
	orders, users := fx.URL+"/app/orders", fx.URL+"/app/users"
	exp[orders]["viewer"]["must"] = append(exp[orders]["viewer"]["must"].([]string), "button Refund")
	exp[users]["editor"]["outcome"] = "reached"
	expect := writeExpect(t, dir, exp)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCheck(t, "--config", config, "--urls", urls, "--expect", expect, "--out", out)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	md := readFile(filepath.Join(out, "matrix.md"))
	noPassword(t, stdout, stderr, md)
	lines := []string{
		orders + ` as viewer: must see button "Refund", got absent`,
		users + ` as editor: expected reached, got forbidden (403)`,
	}
	for _, l := range lines {
		if !strings.Contains(stdout, l+"\n") {
			t.Errorf("stdout lacks %q", l)
		}
		if !strings.Contains(md, "- "+l+"\n") {
			t.Errorf("matrix.md lacks %q", l)
		}
	}
	if n := strings.Count("\n"+stdout, "\n"+fx.URL); n != len(lines) {
		t.Errorf("stdout has %d difference lines, want %d", n, len(lines))
	}
	if !strings.Contains(stdout, ": 2 differences from "+expect) {
		t.Errorf("stdout lacks the count of differences")
	}
}

// TestRolesCheckUsage: a missing flag or file, an unknown role or a bad
// expectation is exit 2 with a message naming it, before any browser.
func TestRolesCheckUsage(t *testing.T) {
	dir, config, urls := checkSetup(t)
	out := filepath.Join(dir, "out")
	badExpect := writeExpect(t, dir, map[string]map[string]map[string]any{fx.URL + "/app/nowhere": {"admin": {"outcome": "reached"}}})
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no config", []string{"--urls", urls, "--out", out}, "--config FILE is required"},
		{"missing config", []string{"--config", filepath.Join(dir, "nope.json"), "--urls", urls, "--out", out}, "--config: config " + filepath.Join(dir, "nope.json") + ": open"},
		{"missing urls", []string{"--config", config, "--urls", filepath.Join(dir, "nope.txt"), "--out", out}, "--urls: open " + filepath.Join(dir, "nope.txt") + ": no such file"},
		{"unknown role", []string{"--config", config, "--urls", urls, "--out", out, "--roles", "admin,owner"}, `--roles: no role "owner" in the config`},
		{"expect off the list", []string{"--config", config, "--urls", urls, "--out", out, "--expect", badExpect}, `/app/nowhere"]: not in the --urls list`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCheck(t, c.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if !strings.Contains(stderr, c.want) {
				t.Errorf("stderr lacks %q", c.want)
			}
			if stdout != "" {
				t.Errorf("stdout is not empty: %q", stdout)
			}
		})
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a usage error wrote %s (%v)", out, err)
	}
}

// TestRolesCheckControlSpec reads the controls an expectation names.
func TestRolesCheckControlSpec(t *testing.T) {
	for in, want := range map[string]string{
		`button Refund`:                        `button "Refund"`,
		`Button "Refund" [disabled]`:           `button "Refund" [disabled]`,
		`textbox Edit note [readonly]`:         `textbox "Edit note" [readonly]`,
		`button "Print" []`:                    `button "Print" []`,
		`checkbox "A [b]" [disabled, checked]`: `checkbox "A [b]" [checked] [disabled]`,
		`main`:                                 `main`,
		`button "Refund`:                       "error",
		`button Refund [disabled`:              "error",
		`button "Refund" disabled`:             "error",
	} {
		c, err := parseControl(in)
		got := c.String()
		if err != nil {
			got = "error"
		}
		if got != want {
			t.Errorf("parseControl(%q) = %q (%v), want %q", in, got, err, want)
		}
	}
	base, _ := parseBase("https://staging.example")
	for in, want := range map[string]string{
		"/app/orders?x=1":        "https://staging.example/app/orders?x=1",
		"http://other.example/a": "http://other.example/a",
		"ftp://other.example/a":  "error",
		"app/orders":             "error",
	} {
		got, err := resolveURL(in, base)
		if err != nil {
			got = "error"
		}
		if got != want {
			t.Errorf("resolveURL(%q) = %q (%v), want %q", in, got, err, want)
		}
	}
	if _, err := resolveURL("/app/orders", nil); err == nil || !strings.Contains(err.Error(), "--base-url") {
		t.Errorf("a path without --base-url: %v", err)
	}
}
