package roles

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadSignIn(t *testing.T) {
	p := write(t, "retrace.json", `{"roles": {
		"admin": {"authFile": "admin.json", "loginCheck": {"signedOutUrl": "/login"},
			"signIn": {"url": "http://127.0.0.1:8000/login",
				"fields": [{"label": "User", "value": {"env": "ADMIN_USER"}},
				           {"role": "textbox", "name": "Password", "value": {"env": "ADMIN_PASSWORD"}}],
				"submit": {"role": "button", "name": "Sign in"},
				"success": {"url": "/\\/account$/"}}},
		"sso": {"authFile": "sso.json", "signIn": {"command": ["./sso-login.sh", "--realm", "staff"], "timeoutSeconds": 5}}}}`)
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	admin, _ := c.Get("admin")
	if got := strings.Join(admin.SignIn.EnvNames(), ","); got != "ADMIN_USER,ADMIN_PASSWORD" {
		t.Errorf("EnvNames = %s", got)
	}
	if f := admin.SignIn.Fields[1]; f.Locator.String() != `textbox "Password"` || admin.SignIn.Fields[0].Locator.String() != `label "User"` {
		t.Errorf("fields = %+v", admin.SignIn.Fields)
	}
	if !admin.SignIn.Success.URLMatches("http://127.0.0.1:8000/account") || admin.SignIn.Success.URLMatches("http://127.0.0.1:8000/account/x") {
		t.Error("success.url as a regular expression")
	}
	sso, _ := c.Get("sso")
	dir := filepath.Dir(p)
	if sso.SignIn.Command[0] != filepath.Join(dir, "sso-login.sh") || sso.SignIn.Dir != dir || sso.SignIn.Timeout().Seconds() != 5 {
		t.Errorf("command = %q in %s, timeout %v", sso.SignIn.Command, sso.SignIn.Dir, sso.SignIn.Timeout())
	}
	c.LookupEnv = func(n string) (string, bool) { return "v-" + n, n == "ADMIN_USER" }
	if v, ok := c.Env("ADMIN_USER"); !ok || v != "v-ADMIN_USER" {
		t.Errorf("Env through LookupEnv = %q, %v", v, ok)
	}
}

func TestLoadSignInNamesTheField(t *testing.T) {
	const secret = "hunter2-literal"
	form := func(fields string) string {
		return `{"roles": {"a": {"authFile": "a.json", "signIn": {"url": "http://x/login", "fields": [` + fields + `], "submit": {"role": "button", "name": "Go"}}}}}`
	}
	for body, want := range map[string]string{
		`{"roles": {"a": {"signIn": {"command": ["x"]}}}}`:                                                   "roles.a.signIn needs roles.a.authFile",
		`{"roles": {"a": {"authFile": "a.json", "signIn": {}}}}`:                                             "roles.a.signIn: give url",
		`{"roles": {"a": {"authFile": "a.json", "signIn": {"command": []}}}}`:                                "roles.a.signIn.command: empty",
		`{"roles": {"a": {"authFile": "a.json", "signIn": {"command": [""]}}}}`:                              "roles.a.signIn.command[0]",
		`{"roles": {"a": {"authFile": "a.json", "signIn": {"command": ["x"], "url": "http://x/"}}}}`:         "not both",
		`{"roles": {"a": {"authFile": "a.json", "signIn": {"url": "ftp://x/", "submit": {"label": "Go"}}}}}`: "roles.a.signIn.url",
		form(`{"label": "User", "value": "` + secret + `"}`):                                                 "roles.a.signIn.fields[0].value: a value written in the config file is refused; give {\"env\": \"NAME\"}",
		form(`{"label": "User", "value": {"env": "` + secret + `-x"}}`):                                      "roles.a.signIn.fields[0].value.env",
		form(`{"label": "User", "value": {"env": "U", "text": "` + secret + `"}}`):                           "roles.a.signIn.fields[0].value: has fields other than env",
		form(`{"label": "User"}`):                                                                     "roles.a.signIn.fields[0].value: missing",
		form(`{"value": {"env": "U"}}`):                                                               "roles.a.signIn.fields[0]: give label",
		form(`{"label": "User", "role": "textbox", "value": {"env": "U"}}`):                           "roles.a.signIn.fields[0]: give label, or role and name; not both",
		form(`{"role": "Text Box", "value": {"env": "U"}}`):                                           "roles.a.signIn.fields[0].role",
		form(`{"css": "#user", "value": {"env": "U"}}`):                                               `unknown field "css"`,
		`{"roles": {"a": {"authFile": "a.json", "signIn": {"url": "http://x/login", "fields": []}}}}`: "roles.a.signIn.submit: missing",
		`{"roles": {"a": {"authFile": "a.json", "signIn": {"url": "http://x/login", "submit": {"label": "Go"}, "success": {}}}}}`:             "roles.a.signIn.success",
		`{"roles": {"a": {"authFile": "a.json", "signIn": {"url": "http://x/login", "submit": {"label": "Go"}, "success": {"url": "/(/"}}}}}`: "roles.a.signIn.success.url",
		`{"roles": {"a": {"authFile": "a.json", "signIn": {"url": "http://x/login", "submit": {"label": "Go"}, "timeoutSeconds": 3}}}}`:       "roles.a.signIn.timeoutSeconds",
	} {
		_, err := Load(write(t, "c.json", body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%s) = %v, want it to name %q", body, err, want)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("Load(%s): the error echoes a value: %v", body, err)
		}
	}
}
