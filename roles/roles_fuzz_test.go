package roles

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fuzzName is a role name, written apart from the package's own pattern.
var fuzzName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// FuzzLoad loads arbitrary bytes as a --config file. Load never panics; an
// error names the file; a config it accepts has the default role first and
// only roles that pass validation: a well-formed name, an absolute auth
// file, an http(s) default URL, authRequired only with an auth file, and a
// login check whose SignedOut answers for any URL.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		`{"roles": {"admin": {"authFile": "auth/admin.json", "defaultUrl": "http://127.0.0.1:3000/admin", "authRequired": true,
			"loginCheck": {"signedOutUrl": "/\\/login(\\?|$)/", "url": "http://127.0.0.1:3000/account"}},
			"customer": {"authFile": "/abs/customer.json"}}}`,
		`{"roles": {}}`,
		`{}`,
		`{"roles": {"default": {"defaultUrl": "https://example.com/"}}}`,
		`{"roles": {"default": {"authFile": "x.json"}}}`,
		`{"roles": {"a": null}}`,
		`{"roles": {"a": {"authRequired": true}}}`,
		`{"roles": {"a": {"loginCheck": {}}}}`,
		`{"roles": {"a": {"loginCheck": {"signedOutUrl": "/(/"}}}}`,
		`{"roles": {"a": {"loginCheck": {"signedOutUrl": "//"}}}}`,
		`{"roles": {"a": {"defaultUrl": "javascript:alert(1)"}}}`,
		`{"roles": {"a b": {}}}`,
		`{"roles": {"a": {"extra": 1}}}`,
		`{"roles": {"a": {}}} trailing`,
		`{"roles": {"a": {}, "A": {}}}`,
		`[]`, `null`, ``, `{"roles": {"a": {"authFile": ""}}}`,
		`{"roles": {"a": {"authFile": "a.json", "signIn": {"url": "http://x/login", "fields": [{"label": "User", "value": {"env": "U"}}], "submit": {"role": "button", "name": "Go"}, "success": {"text": "Hi"}}}}}`,
		`{"roles": {"a": {"authFile": "a.json", "signIn": {"command": ["./login.sh"]}}}}`,
		`{"roles": {"a": {"signIn": {"url": "http://x/login", "fields": [{"label": "User", "value": "literal"}]}}}}`,
	} {
		f.Add([]byte(s), "https://example.com/login?next=/")
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, probe string) {
		path := filepath.Join(dir, "retrace.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(path)
		if err != nil {
			if c != nil || !strings.HasPrefix(err.Error(), "config "+path+": ") {
				t.Fatalf("Load: %v (config %v); want an error that names the file", err, c)
			}
			return
		}
		names := c.Names()
		if len(names) == 0 || names[0] != Default {
			t.Fatalf("Names() = %q, want default first", names)
		}
		for _, n := range names {
			r, ok := c.Get(n)
			if !ok || r == nil || r.Name != n {
				t.Fatalf("Get(%q) = %+v, %v", n, r, ok)
			}
			checkRole(t, r, probe)
			// Load resolves auth files against the config's directory.
			if r.AuthFile != "" && !filepath.IsAbs(r.AuthFile) {
				t.Errorf("role %s: auth file %q is not absolute", r.Name, r.AuthFile)
			}
		}
	})
}

// checkRole checks what validation promises of an accepted role.
func checkRole(t *testing.T, r *Role, probe string) {
	t.Helper()
	if len(r.Name) > 64 || !fuzzName.MatchString(r.Name) {
		t.Errorf("accepted role name %q", r.Name)
	}
	if r.Name == Default && (r.AuthFile != "" || r.AuthRequired) {
		t.Errorf("the default role got auth: %+v", r)
	}
	if r.AuthRequired && r.AuthFile == "" {
		t.Errorf("role %s: authRequired without an auth file", r.Name)
	}
	if si := r.SignIn; si != nil {
		if r.AuthFile == "" {
			t.Errorf("role %s: a sign-in recipe without an auth file", r.Name)
		}
		for _, f := range si.Fields {
			if f.Value.literal || f.Value.Env == "" {
				t.Errorf("role %s: a field without an environment variable accepted", r.Name)
			}
		}
		if len(si.Command) == 0 && si.Submit == nil {
			t.Errorf("role %s: a form recipe without a submit accepted", r.Name)
		}
	}
	if r.DefaultURL != "" {
		u, err := url.Parse(r.DefaultURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			t.Errorf("role %s: default URL %q accepted", r.Name, r.DefaultURL)
		}
	}
	if lc := r.LoginCheck; lc != nil {
		if lc.SignedOutURL == "" && lc.URL == "" {
			t.Errorf("role %s: empty login check accepted", r.Name)
		}
		_ = lc.SignedOut(probe)
		_ = lc.SignedOut(lc.URL)
	}
}

// FuzzAddFlag adds a role from an arbitrary --role value. AddFlag never
// panics; a value it accepts adds the role named before "=" (spaces
// trimmed), with the auth file and default URL after it; adding it again
// fails unless it is the default role.
func FuzzAddFlag(f *testing.F) {
	for _, s := range []string{"admin=auth/admin.json", "admin=auth/admin.json,https://example.com/admin",
		" customer = c.json , http://127.0.0.1:3000/ ", "admin", "admin=", "=x.json", "default=x.json",
		"default= ,https://example.com/", "a b=x.json", "admin=x.json,ftp://example.com/", "admin=,", "é=x",
		strings.Repeat("a", 65) + "=x.json", "admin=x.json,https://exa mple.com/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		c := New()
		if err := c.AddFlag(v); err != nil {
			if !strings.Contains(err.Error(), "--role") && !strings.HasPrefix(err.Error(), "roles.") {
				t.Errorf("AddFlag(%q): error %q names neither the flag nor the role", v, err)
			}
			return
		}
		name, rest, _ := strings.Cut(v, "=")
		name = strings.TrimSpace(name)
		auth, def, _ := strings.Cut(rest, ",")
		r, ok := c.Get(name)
		if !ok || r.AuthFile != strings.TrimSpace(auth) || r.DefaultURL != strings.TrimSpace(def) {
			t.Fatalf("AddFlag(%q) accepted, then Get(%q) = %+v, %v", v, name, r, ok)
		}
		checkRole(t, r, def)
		if err := c.AddFlag(v); (err == nil) != (name == Default) {
			t.Errorf("AddFlag(%q) twice: %v", v, err)
		}
	})
}

// authSecret is the cookie value of the seed auth files: no error may
// repeat it, or anything else of the file.
const authSecret = "SECRET-session-7f9c2b1e4a8d6053e1b9"

// authDetail is every detail CheckAuthFile may give about a file it read:
// fixed text, a byte offset, or the name of a top-level field it expects.
var authDetail = regexp.MustCompile(`^(not JSON \((syntax error at byte \d+|field (?P<field>.*) has the wrong type|cannot be decoded)\)|not a storage state: it has neither "cookies" nor "origins")$`)

// FuzzCheckAuthFile checks arbitrary bytes as an auth file. CheckAuthFile
// never panics, accepts only JSON, and its error is an *AuthProblem whose
// detail is one of a few fixed forms: never text from the file, which holds
// sign-in secrets.
func FuzzCheckAuthFile(f *testing.F) {
	cookie := `{"name": "session", "value": "` + authSecret + `", "domain": "127.0.0.1", "path": "/", "expires": -1, "httpOnly": true, "secure": false, "sameSite": "Lax"}`
	state := `{"cookies": [` + cookie + `], "origins": [{"origin": "http://127.0.0.1:3000", "localStorage": [{"name": "token", "value": "` + authSecret + `"}]}]}`
	for _, s := range []string{
		state,
		state[:len(state)/2],                 // cut inside the secret's neighbourhood
		strings.Replace(state, `",`, `"`, 1), // a missing comma right after the secret
		`{"cookies": "` + authSecret + `"}`,  // the secret where an array belongs
		`{"cookies": ` + authSecret + `}`,    // the secret as a bare word
		`{"origins": {"` + authSecret + `": 1}}`,
		`{"` + authSecret + `": []}`,
		`"` + authSecret + `"`,
		authSecret,
		`{"cookies": []}`, `{"origins": []}`, `{"cookies": null}`, `{}`, `[]`, `null`, ``, "\xff\xfe{",
		`{"COOKIES": []}`, `{"cookies": [], "cookies": 1}`,
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "auth.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		err := CheckAuthFile(path)
		if err == nil {
			if !json.Valid(data) {
				t.Fatalf("CheckAuthFile accepted a file that is not JSON: %q", data)
			}
			return
		}
		var p *AuthProblem
		if !errors.As(err, &p) || p.Path != path || p.Reason != "malformed" {
			t.Fatalf("CheckAuthFile(%q) = %#v, want a malformed *AuthProblem for %s", data, err, path)
		}
		m := authDetail.FindStringSubmatch(p.Detail)
		if m == nil {
			t.Fatalf("CheckAuthFile(%q): detail %q is not one of the fixed forms", data, p.Detail)
		}
		if field := m[authDetail.SubexpIndex("field")]; field != "" &&
			!strings.EqualFold(field, "cookies") && !strings.EqualFold(field, "origins") {
			t.Fatalf("CheckAuthFile(%q): detail names field %q, which is not one it expects", data, field)
		}
		if msg := strings.ReplaceAll(err.Error(), path, ""); strings.Contains(msg, authSecret) ||
			(len(bytes.TrimSpace(data)) >= 8 && strings.Contains(msg, string(bytes.TrimSpace(data)))) {
			t.Fatalf("CheckAuthFile: error %q repeats the file's content", err)
		}
	})
}
