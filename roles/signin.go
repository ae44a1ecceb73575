package roles

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// SignIn is a role's sign-in recipe: how retrace signs the role in again by
// itself when its sign-in is missing or has ended. It is either a form
// (URL, Fields, Submit, Success), filled in as an agent would, or a
// Command that writes the storage-state file (for SSO or MFA).
type SignIn struct {
	// URL is the sign-in page.
	URL string `json:"url,omitempty"`
	// Fields are filled in, in order.
	Fields []Field `json:"fields,omitempty"`
	// Submit is the control clicked once the fields are filled in.
	Submit *Locator `json:"submit,omitempty"`
	// Success tells that the sign-in worked. Without it, leaving the
	// sign-in page for one that is not loginCheck.signedOutUrl does.
	Success *Success `json:"success,omitempty"`

	// Command is a program and its arguments, run with RETRACE_AUTH_FILE
	// and RETRACE_ROLE in its environment; it writes the storage state to
	// RETRACE_AUTH_FILE. A relative program path is taken from the config
	// file's directory, where it runs.
	Command []string `json:"command,omitempty"`
	// TimeoutSeconds bounds Command; 0 means DefaultCommandTimeout.
	TimeoutSeconds int `json:"timeoutSeconds,omitempty"`
	// Dir is where Command runs: the config file's directory.
	Dir string `json:"-"`
}

// DefaultCommandTimeout bounds a sign-in command that sets no timeout.
const DefaultCommandTimeout = 60 * time.Second

// Timeout is how long Command may run.
func (s *SignIn) Timeout() time.Duration {
	if s.TimeoutSeconds > 0 {
		return time.Duration(s.TimeoutSeconds) * time.Second
	}
	return DefaultCommandTimeout
}

// Locator finds an element as an agent would: by its label, or by its ARIA
// role and accessible name. Never by CSS.
type Locator struct {
	Label string `json:"label,omitempty"`
	Role  string `json:"role,omitempty"`
	Name  string `json:"name,omitempty"`
}

// String names the element for a message: label "User", or textbox
// "Password".
func (l Locator) String() string {
	if l.Label != "" {
		return fmt.Sprintf("label %q", l.Label)
	}
	if l.Name != "" {
		return fmt.Sprintf("%s %q", l.Role, l.Name)
	}
	return l.Role
}

// Field is one input of a sign-in form and where its value comes from.
type Field struct {
	Locator
	Value Value `json:"value"`
}

// Value is where a secret comes from: only ever the environment. A literal
// in the config file is refused at load.
type Value struct {
	Env string `json:"env"`
	// literal is set when the file gave anything but {"env": "NAME"}; its
	// text is never kept. extra is set when the object has other fields.
	literal, extra bool
}

// UnmarshalJSON takes {"env": "NAME"} and notes anything else as a
// literal, refused by validation with the field's path.
func (v *Value) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		v.literal = true
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		v.literal = true
		return nil
	}
	for k := range m {
		v.extra = v.extra || k != "env"
	}
	if raw, ok := m["env"]; ok && json.Unmarshal(raw, &v.Env) != nil {
		v.literal = true
	}
	return nil
}

// Success is what shows that a sign-in worked; every condition given must
// hold.
type Success struct {
	// URL is a pattern (a substring, or a regular expression between
	// slashes) the page's URL matches.
	URL string `json:"url,omitempty"`
	// Text is text the page shows.
	Text string `json:"text,omitempty"`
	// Cookie is the name of a cookie the site sets.
	Cookie string `json:"cookie,omitempty"`

	re *regexp.Regexp
}

// URLMatches reports whether u matches the URL condition (true when there
// is none).
func (s *Success) URLMatches(u string) bool {
	if s == nil || s.URL == "" {
		return true
	}
	if s.re != nil {
		return s.re.MatchString(u)
	}
	return strings.Contains(u, s.URL)
}

// EnvNames lists the environment variables the recipe reads, in order.
func (s *SignIn) EnvNames() []string {
	var out []string
	for _, f := range s.Fields {
		out = append(out, f.Value.Env)
	}
	return out
}

// Env returns the value of the environment variable name, through the
// config's LookupEnv (os.LookupEnv when unset).
func (c *Config) Env(name string) (string, bool) {
	if c.LookupEnv != nil {
		return c.LookupEnv(name)
	}
	return os.LookupEnv(name)
}

var (
	envRe  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	ariaRe = regexp.MustCompile(`^[a-z]+$`)
)

// checkSignIn validates a role's recipe; errors name the field at fault and
// never a value.
func checkSignIn(name string, r *Role) error {
	s := r.SignIn
	at := "roles." + name + ".signIn"
	if r.AuthFile == "" {
		return fmt.Errorf("%s needs roles.%s.authFile: the file the new sign-in is saved to", at, name)
	}
	form := s.URL != "" || len(s.Fields) > 0 || s.Submit != nil || s.Success != nil
	switch {
	case len(s.Command) > 0 && form:
		return fmt.Errorf("%s: give either command, or url, fields and submit; not both", at)
	case len(s.Command) > 0:
		if strings.TrimSpace(s.Command[0]) == "" {
			return fmt.Errorf("%s.command[0]: empty; give the program to run", at)
		}
		if s.TimeoutSeconds < 0 {
			return fmt.Errorf("%s.timeoutSeconds: %d is negative", at, s.TimeoutSeconds)
		}
		return nil
	case s.Command != nil:
		return fmt.Errorf("%s.command: empty; give the program to run and its arguments", at)
	case !form:
		return fmt.Errorf("%s: give url, fields and submit (a form), or command (a program that writes the auth file)", at)
	}
	if s.TimeoutSeconds != 0 {
		return fmt.Errorf("%s.timeoutSeconds: only a command takes a timeout; a form waits up to the navigation timeout", at)
	}
	if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s.url: %q is not an http(s) URL of the sign-in page", at, s.URL)
	}
	for i, f := range s.Fields {
		fat := fmt.Sprintf("%s.fields[%d]", at, i)
		if err := checkLocator(fat, f.Locator); err != nil {
			return err
		}
		switch {
		case f.Value.literal:
			return fmt.Errorf("%s.value: a value written in the config file is refused; give {\"env\": \"NAME\"} and set NAME in retrace's environment", fat)
		case f.Value.extra:
			return fmt.Errorf("%s.value: has fields other than env; a value is {\"env\": \"NAME\"}", fat)
		case f.Value.Env == "":
			return fmt.Errorf("%s.value: missing; give {\"env\": \"NAME\"}, the environment variable that holds it", fat)
		case !envRe.MatchString(f.Value.Env):
			// Not echoed: a value put here by mistake is a secret.
			return fmt.Errorf("%s.value.env: not an environment variable name (letters, digits and _, not starting with a digit)", fat)
		}
	}
	if s.Submit == nil {
		return fmt.Errorf("%s.submit: missing; give the button to click, like {\"role\": \"button\", \"name\": \"Sign in\"}", at)
	}
	if err := checkLocator(at+".submit", *s.Submit); err != nil {
		return err
	}
	if sc := s.Success; sc != nil {
		if sc.URL == "" && sc.Text == "" && sc.Cookie == "" {
			return fmt.Errorf("%s.success: give url, text or cookie", at)
		}
		if p := sc.URL; len(p) > 2 && strings.HasPrefix(p, "/") && strings.HasSuffix(p, "/") {
			re, err := regexp.Compile(p[1 : len(p)-1])
			if err != nil {
				return fmt.Errorf("%s.success.url: %v", at, err)
			}
			sc.re = re
		}
	}
	return nil
}

func checkLocator(at string, l Locator) error {
	switch {
	case l.Label != "" && (l.Role != "" || l.Name != ""):
		return fmt.Errorf("%s: give label, or role and name; not both", at)
	case l.Label == "" && l.Role == "":
		return fmt.Errorf("%s: give label (the field's label), or role and name (its ARIA role and accessible name)", at)
	case l.Role != "" && !ariaRe.MatchString(l.Role):
		return fmt.Errorf("%s.role: %q is not an ARIA role (like textbox, button)", at, l.Role)
	}
	return nil
}

// resolveCommand makes a relative program path relative to the config
// file's directory, where the command runs.
func resolveCommand(s *SignIn, configDir string) {
	if len(s.Command) == 0 {
		return
	}
	if abs, err := filepath.Abs(configDir); err == nil {
		// Joined with "." a path like ./login.sh would lose its slash and
		// be looked up in PATH.
		configDir = abs
	}
	s.Dir = configDir
	if p := s.Command[0]; strings.ContainsRune(p, filepath.Separator) && !filepath.IsAbs(p) {
		s.Command[0] = filepath.Join(configDir, p)
	}
}
