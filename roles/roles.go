// Package roles is the configuration of the users an agent can act as: each
// role's saved sign-in (a Playwright storage-state file), its start page,
// whether it must be signed in, how to tell it has been signed out, and the
// recipe that signs it in again.
package roles

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Default is the role that always exists and has no auth.
const Default = "default"

// Role is one configured user.
type Role struct {
	Name string `json:"-"`
	// AuthFile is a Playwright storage-state file (cookies and local storage
	// of every origin), loaded when the role's browser context opens.
	AuthFile string `json:"authFile,omitempty"`
	// DefaultURL is where the role starts.
	DefaultURL string `json:"defaultUrl,omitempty"`
	// AuthRequired makes an auth problem an error for this role rather than
	// a warning.
	AuthRequired bool `json:"authRequired,omitempty"`
	// LoginCheck tells when the role has been signed out.
	LoginCheck *LoginCheck `json:"loginCheck,omitempty"`
	// SignIn is the recipe retrace runs to sign the role in again by
	// itself (signin.go).
	SignIn *SignIn `json:"signIn,omitempty"`
}

// LoginCheck describes how to tell a role is signed out.
type LoginCheck struct {
	// SignedOutURL is a pattern (a substring of the URL, or a regular
	// expression between slashes) that means "signed out" when a page of
	// the role lands on it, as a login redirect does.
	SignedOutURL string `json:"signedOutUrl,omitempty"`
	// URL, when set, must load without landing on SignedOutURL for the
	// role's sign-in to count as working.
	URL string `json:"url,omitempty"`

	re *regexp.Regexp
}

// SignedOut reports whether u is a signed-out page by the check.
func (c *LoginCheck) SignedOut(u string) bool {
	if c == nil || c.SignedOutURL == "" {
		return false
	}
	if c.re != nil {
		return c.re.MatchString(u)
	}
	return strings.Contains(u, c.SignedOutURL)
}

// Config is the set of roles, and the browser endpoints the config file
// names (browserEndpoints).
type Config struct {
	roles map[string]*Role
	// Endpoints are the file's browserEndpoints, as written: header values
	// may still hold ${VAR} references to the environment.
	Endpoints []Endpoint
	// LookupEnv reads the environment variables sign-in recipes take their
	// values from; nil means os.LookupEnv. Tests give their own.
	LookupEnv func(string) (string, bool)
}

// Endpoint is one entry of browserEndpoints: a URL, or an object with the
// URL and headers to connect with.
type Endpoint struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
}

// UnmarshalJSON takes either form.
func (e *Endpoint) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '"' {
		return json.Unmarshal(data, &e.URL)
	}
	type plain Endpoint
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode((*plain)(e))
}

// New returns a config with only the default role.
func New() *Config {
	return &Config{roles: map[string]*Role{Default: {Name: Default}}}
}

// file is the JSON form of --config.
type file struct {
	Roles            map[string]*Role `json:"roles"`
	BrowserEndpoints []Endpoint       `json:"browserEndpoints"`
	// playwright-mcp's names for what flags set (pwconfig.go).
	Browser      *pwBrowser  `json:"browser,omitempty"`
	Server       *pwServer   `json:"server,omitempty"`
	Network      *pwNetwork  `json:"network,omitempty"`
	Timeouts     *pwTimeouts `json:"timeouts,omitempty"`
	Capabilities []string    `json:"capabilities,omitempty"`
	OutputDir    string      `json:"outputDir,omitempty"`
}

// Load reads a --config file. Paths of auth files are relative to the
// file's directory. Errors name the field at fault.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f file
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	c := New()
	names := make([]string, 0, len(f.Roles))
	for n := range f.Roles {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		r := f.Roles[n]
		if r == nil {
			return nil, fmt.Errorf("config %s: roles.%s: is null; give an object like {\"authFile\": \"...\"}", path, n)
		}
		if r.AuthFile != "" && !filepath.IsAbs(r.AuthFile) {
			r.AuthFile = filepath.Join(filepath.Dir(path), r.AuthFile)
		}
		if r.SignIn != nil {
			resolveCommand(r.SignIn, filepath.Dir(path))
		}
		if err := c.add(n, r); err != nil {
			return nil, fmt.Errorf("config %s: %w", path, err)
		}
	}
	for i, e := range f.BrowserEndpoints {
		if strings.TrimSpace(e.URL) == "" {
			return nil, fmt.Errorf("config %s: browserEndpoints[%d]: no url", path, i)
		}
	}
	c.Endpoints = f.BrowserEndpoints
	return c, nil
}

// AddFlag adds a role from --role name=authfile[,defaultURL].
func (c *Config) AddFlag(v string) error {
	name, rest, ok := strings.Cut(v, "=")
	if !ok || rest == "" {
		return fmt.Errorf("--role %q: want name=authfile[,defaultURL]", v)
	}
	auth, def, _ := strings.Cut(rest, ",")
	return c.add(strings.TrimSpace(name), &Role{AuthFile: strings.TrimSpace(auth), DefaultURL: strings.TrimSpace(def)})
}

var nameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

func (c *Config) add(name string, r *Role) error {
	if !nameRe.MatchString(name) {
		return fmt.Errorf("roles.%s: a role name is letters, digits, '_', '.', '-' (at most 64)", name)
	}
	if name == Default && (r.AuthFile != "" || r.AuthRequired) {
		return fmt.Errorf("roles.%s: the default role has no auth; give the signed-in user another name", name)
	}
	if _, dup := c.roles[name]; dup && name != Default {
		return fmt.Errorf("roles.%s: defined twice", name)
	}
	if r.AuthRequired && r.AuthFile == "" {
		return fmt.Errorf("roles.%s.authRequired: true needs roles.%s.authFile", name, name)
	}
	if r.DefaultURL != "" {
		if u, err := url.Parse(r.DefaultURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("roles.%s.defaultUrl: %q is not an http(s) URL", name, r.DefaultURL)
		}
	}
	if lc := r.LoginCheck; lc != nil {
		if lc.SignedOutURL == "" && lc.URL == "" {
			return fmt.Errorf("roles.%s.loginCheck: give signedOutUrl, url, or both", name)
		}
		if p := lc.SignedOutURL; len(p) > 2 && strings.HasPrefix(p, "/") && strings.HasSuffix(p, "/") {
			re, err := regexp.Compile(p[1 : len(p)-1])
			if err != nil {
				return fmt.Errorf("roles.%s.loginCheck.signedOutUrl: %v", name, err)
			}
			lc.re = re
		}
		if lc.URL != "" {
			if u, err := url.Parse(lc.URL); err != nil || u.Host == "" {
				return fmt.Errorf("roles.%s.loginCheck.url: %q is not an absolute URL", name, lc.URL)
			}
		}
	}
	if r.SignIn != nil {
		if err := checkSignIn(name, r); err != nil {
			return err
		}
	}
	r.Name = name
	c.roles[name] = r
	return nil
}

// Get returns the named role.
func (c *Config) Get(name string) (*Role, bool) {
	r, ok := c.roles[name]
	return r, ok
}

// Names returns the role names, default first, the rest sorted.
func (c *Config) Names() []string {
	names := []string{Default}
	for n := range c.roles {
		if n != Default {
			names = append(names, n)
		}
	}
	sort.Strings(names[1:])
	return names
}

// AuthProblem is what is wrong with a role's auth file, if anything.
type AuthProblem struct {
	Path   string
	Reason string // missing, unreadable, malformed
	Detail string
}

func (p *AuthProblem) Error() string {
	return fmt.Sprintf("auth file %s is %s: %s", p.Path, p.Reason, p.Detail)
}

// CheckAuthFile reads path as a Playwright storage state. It never returns
// the file's contents, which hold secrets; only its shape is checked.
func CheckAuthFile(path string) error {
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return &AuthProblem{Path: path, Reason: "missing", Detail: "no file at that path"}
	case err != nil:
		return &AuthProblem{Path: path, Reason: "unreadable", Detail: scrub(err.Error())}
	}
	var st struct {
		Cookies *[]json.RawMessage `json:"cookies"`
		Origins *[]json.RawMessage `json:"origins"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return &AuthProblem{Path: path, Reason: "malformed", Detail: "not JSON (" + syntaxOnly(err) + ")"}
	}
	if st.Cookies == nil && st.Origins == nil {
		return &AuthProblem{Path: path, Reason: "malformed", Detail: `not a storage state: it has neither "cookies" nor "origins"`}
	}
	return nil
}

// syntaxOnly keeps where JSON broke, not the text around it, which may be a
// secret.
func syntaxOnly(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("field %s has the wrong type", te.Field)
	}
	return "cannot be decoded"
}

func scrub(s string) string {
	if i := strings.LastIndex(s, ": "); i >= 0 {
		return s[i+2:]
	}
	return s
}
