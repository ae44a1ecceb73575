package roles

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoad(t *testing.T) {
	p := write(t, "retrace.json", `{"roles": {
		"admin": {"authFile": "auth/admin.json", "defaultUrl": "http://127.0.0.1:3000/admin", "authRequired": true,
		          "loginCheck": {"signedOutUrl": "/\\/login(\\?|$)/", "url": "http://127.0.0.1:3000/account"}},
		"customer": {"authFile": "/abs/customer.json"}}}`)
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Names(), ","); got != "default,admin,customer" {
		t.Errorf("Names = %s", got)
	}
	admin, _ := c.Get("admin")
	if admin.AuthFile != filepath.Join(filepath.Dir(p), "auth/admin.json") || !admin.AuthRequired {
		t.Errorf("admin = %+v", admin)
	}
	if !admin.LoginCheck.SignedOut("http://127.0.0.1:3000/login?next=/admin") || admin.LoginCheck.SignedOut("http://127.0.0.1:3000/loginhelp") {
		t.Error("the regular expression signedOutUrl does not match as written")
	}
	cust, _ := c.Get("customer")
	if cust.AuthFile != "/abs/customer.json" {
		t.Errorf("customer auth file = %s", cust.AuthFile)
	}
}

func TestLoadNamesTheField(t *testing.T) {
	for body, want := range map[string]string{
		`{"roles": {"a": {"authRequired": true}}}`:                                   "roles.a.authRequired",
		`{"roles": {"a": {"authFile": "x", "defaultUrl": "ftp://x"}}}`:               "roles.a.defaultUrl",
		`{"roles": {"a": {"authFile": "x", "loginCheck": {}}}}`:                      "roles.a.loginCheck",
		`{"roles": {"a": {"authFile": "x", "loginCheck": {"signedOutUrl": "/(/"}}}}`: "roles.a.loginCheck.signedOutUrl",
		`{"roles": {"default": {"authFile": "x"}}}`:                                  "roles.default",
		`{"roles": {"bad name": {}}}`:                                                "roles.bad name",
		`{"roles": {"a": {"authPath": "x"}}}`:                                        `unknown field "authPath"`,
		`{"roles": {"a": null}}`:                                                     "roles.a: is null",
	} {
		_, err := Load(write(t, "c.json", body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%s) = %v, want it to name %q", body, err, want)
		}
	}
}

func TestAddFlag(t *testing.T) {
	c := New()
	if err := c.AddFlag("admin=auth/admin.json,http://127.0.0.1:3000/"); err != nil {
		t.Fatal(err)
	}
	r, ok := c.Get("admin")
	if !ok || r.AuthFile != "auth/admin.json" || r.DefaultURL != "http://127.0.0.1:3000/" {
		t.Errorf("admin = %+v", r)
	}
	for _, bad := range []string{"admin", "admin=", "=x", "admin=y"} {
		if err := c.AddFlag(bad); err == nil {
			t.Errorf("AddFlag(%q) accepted", bad)
		}
	}
}

func TestCheckAuthFileKeepsSecrets(t *testing.T) {
	const secret = "s3cr3t-session-token"
	var p *AuthProblem
	err := CheckAuthFile(filepath.Join(t.TempDir(), "none.json"))
	if !errors.As(err, &p) || p.Reason != "missing" {
		t.Errorf("missing file: %v", err)
	}
	err = CheckAuthFile(write(t, "bad.json", `{"cookies": [{"value": "`+secret+`"`))
	if !errors.As(err, &p) || p.Reason != "malformed" || strings.Contains(err.Error(), secret) {
		t.Errorf("malformed file: %v", err)
	}
	err = CheckAuthFile(write(t, "other.json", `{"token": "`+secret+`"}`))
	if !errors.As(err, &p) || p.Reason != "malformed" || strings.Contains(err.Error(), secret) {
		t.Errorf("not a storage state: %v", err)
	}
	if err := CheckAuthFile(write(t, "ok.json", `{"cookies": [], "origins": []}`)); err != nil {
		t.Errorf("valid file: %v", err)
	}
}
