package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/roles"
)

type selectRoleArgs struct {
	Role string `json:"role" jsonschema:"Name of the role to act as from now on"`
}

type noArgs struct{}

type saveAuthArgs struct {
	Role string `json:"role,omitempty" jsonschema:"Role whose sign-in to save; default: the current role"`
}

func (a saveAuthArgs) actingRole() string { return a.Role }

func (s *Server) addRoleTools() {
	addTool(s, def("select_role", "Select role", harmless|idempotent, "Switch the role (signed-in user) tools act as when they name none; each has its own context, cookies and refs."), s.selectRole)
	addTool(s, withOutput(def("list_current_roles", "List roles", readOnly, "The roles (auth file, default URL, browser open or not) and where the browser runs."), "roles", "browser"), s.listRoles)
	addTool(s, def("browser_save_auth", "Save sign-in", destructive|idempotent, "Save the role's sign-in (cookies, local storage) to its auth file, so the next run starts signed in."), s.saveAuth)
	addTool(s, def("get_current_role", "Current role", readOnly, "Name the role browser tools act as when they name none."), s.currentRole)
}

func (s *Server) selectRole(ctx context.Context, c *call, in selectRoleArgs) (*response, error) {
	r, ok := s.cfg.Roles.Get(in.Role)
	if !ok {
		return nil, unknownRole(s.cfg.Roles, c.tool, in.Role)
	}
	c.sess.mu.Lock()
	prev := c.sess.current
	c.sess.current = r.Name
	c.sess.mu.Unlock()
	// Selecting a role is a decision point: say now if its sign-in cannot
	// work, rather than on its first page.
	st := c.sess.role(r.Name)
	st.mu.Lock()
	var authErr error
	if st.bctx == nil {
		_, authErr = st.authState()
	}
	st.mu.Unlock()
	c.role = st
	if authErr != nil {
		return nil, authErr
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Acting as %s (was %s).", r.Name, prev)
	if r.DefaultURL != "" {
		fmt.Fprintf(&b, "\nIts start page: browser_navigate(url=%q).", r.DefaultURL)
	}
	return textResponse(b.String()), nil
}

func (s *Server) listRoles(ctx context.Context, c *call, _ noArgs) (*response, error) {
	current := c.sess.currentRole()
	var b strings.Builder
	var data []map[string]any
	for _, name := range s.cfg.Roles.Names() {
		r, _ := s.cfg.Roles.Get(name)
		d := map[string]any{"name": name, "current": name == current, "open": c.sess.peek(name) != nil && c.sess.peek(name).open()}
		if r.AuthFile != "" {
			d["authFile"], d["authRequired"] = r.AuthFile, r.AuthRequired
		}
		if r.DefaultURL != "" {
			d["defaultUrl"] = r.DefaultURL
		}
		data = append(data, d)
		mark := " "
		if name == current {
			mark = "*"
		}
		fmt.Fprintf(&b, "%s %s", mark, name)
		if r.AuthFile != "" {
			fmt.Fprintf(&b, " — auth file %s", r.AuthFile)
			if r.AuthRequired {
				b.WriteString(" (required)")
			}
		} else {
			b.WriteString(" — no auth")
		}
		if r.DefaultURL != "" {
			fmt.Fprintf(&b, ", starts at %s", r.DefaultURL)
		}
		st := c.sess.peek(name)
		if st != nil && st.open() {
			b.WriteString(", browser open")
		} else {
			b.WriteString(", browser not open yet")
		}
		if r.AuthFile != "" {
			b.WriteString(", auth: " + authStatus(st))
		}
		b.WriteString("\n")
	}
	b.WriteString("(* = current role; browser tools take role=\"...\" to act as another without switching)\n")
	b.WriteString(s.browserStatus(c.sess))
	res := textResponse(b.String())
	res.data = map[string]any{"roles": data, "browser": c.sess.seat.Where()}
	return res, nil
}

// browserStatus says where the session's browsers run and, with several
// endpoints, the state of each.
func (s *Server) browserStatus(sess *session) string {
	var b strings.Builder
	b.WriteString("Browser of this session: " + sess.seat.Where() + "\n")
	if st := s.browsers.Status(); len(st) > 1 {
		b.WriteString("Browser endpoints:\n")
		for i, e := range st {
			fmt.Fprintf(&b, "  %d. %s (%s) — %d live sessions", i+1, e.Endpoint, e.Kind, e.Sessions)
			if e.Down {
				b.WriteString(", down: avoided by new sessions")
				if e.RetryAfter > 0 {
					fmt.Fprintf(&b, " for %s more", e.RetryAfter)
				}
			}
			b.WriteString("\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func (s *Server) currentRole(ctx context.Context, c *call, _ noArgs) (*response, error) {
	return textResponse("Current role: " + c.sess.currentRole()), nil
}

func (s *Server) saveAuth(ctx context.Context, c *call, _ saveAuthArgs) (*response, error) {
	r, unlock, err := c.lockRole()
	if err != nil {
		return nil, err
	}
	defer unlock()
	rc, _ := s.cfg.Roles.Get(r.name)
	if rc.AuthFile == "" {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool, Role: r.name,
			Message: fmt.Sprintf("Role %s has no auth file to save to.", r.name),
			Cause:   "only roles configured with an auth file (--role name=file, or authFile in --config) can save their sign-in",
			Actions: []llmerr.Action{llmerr.Call("list_current_roles", "see which roles have an auth file")}}
	}
	if r.bctx == nil {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool, Role: r.name,
			Message: fmt.Sprintf("Role %s has no open browser, so there is no sign-in to save.", r.name),
			Cause:   "nothing was loaded in this role yet",
			Actions: r.signInSteps(rc)}
	}
	st, err := r.bctx.StorageState()
	if err != nil {
		return nil, err
	}
	data, err := storageStateJSON(st)
	if err != nil {
		return nil, err
	}
	saved, err := roles.WriteAuthFile(rc.AuthFile, data)
	if err != nil {
		return nil, authSaveFailed(c.tool, r.name, err)
	}
	r.log.AuthWorks()
	where := rc.AuthFile
	if saved.ViaSymlink() {
		where += fmt.Sprintf(" (a symlink: the file it points to, %s, was replaced and the link kept)", saved.Target)
	}
	return textResponse(fmt.Sprintf("Saved the sign-in of role %s to %s: %d cookie%s, local storage of %d origin%s. The next run starts signed in.",
		r.name, where, len(st.Cookies), plural(len(st.Cookies), "s"), len(st.Origins), plural(len(st.Origins), "s"))), nil
}

// storageState is the auth file's format, the one Playwright writes with
// storageState({path}) and reads as a context's storageState.
type storageState struct {
	Cookies []storageCookie `json:"cookies"`
	Origins []storageOrigin `json:"origins"`
}

type storageCookie struct {
	Name     string  `json:"name"`
	Value    string  `json:"value"`
	Domain   string  `json:"domain"`
	Path     string  `json:"path"`
	Expires  float64 `json:"expires"`
	HttpOnly bool    `json:"httpOnly"`
	Secure   bool    `json:"secure"`
	// Playwright refuses a null sameSite when it loads the file.
	SameSite string `json:"sameSite,omitempty"`
}

type storageOrigin struct {
	Origin       string                 `json:"origin"`
	LocalStorage []playwright.NameValue `json:"localStorage"`
}

// storageStateJSON encodes st as an auth file. Lists are never null:
// Playwright refuses null where it expects a list.
func storageStateJSON(st *playwright.StorageState) ([]byte, error) {
	out := storageState{Cookies: []storageCookie{}, Origins: []storageOrigin{}}
	for _, c := range st.Cookies {
		sc := storageCookie{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path,
			Expires: c.Expires, HttpOnly: c.HttpOnly, Secure: c.Secure}
		if c.SameSite != nil {
			sc.SameSite = string(*c.SameSite)
		}
		out.Cookies = append(out.Cookies, sc)
	}
	for _, o := range st.Origins {
		ls := o.LocalStorage
		if ls == nil {
			ls = []playwright.NameValue{}
		}
		out.Origins = append(out.Origins, storageOrigin{Origin: o.Origin, LocalStorage: ls})
	}
	return json.Marshal(out)
}

// authSaveFailed turns a failed save into AUTH_SAVE_FAILED: the old file is
// kept, and the plan names what a person must fix before saving again.
func authSaveFailed(tool, role string, err error) error {
	var se *roles.SaveError
	if !errors.As(err, &se) {
		return err
	}
	dir := se.Dir()
	fix := map[string]string{
		roles.SaveDiskFull:   "freed space on the disk that holds " + dir,
		roles.SavePermission: "let the user running retrace write to " + dir,
		roles.SaveReadOnly:   "made " + dir + " writable (it is on a read-only file system)",
		roles.SaveDirMissing: "created the directory " + dir + " (a part of its path is missing or is a file)",
		roles.SaveNotAFile:   "moved away what is at " + se.Target + " (it is not a regular file)",
	}[se.Reason]
	if fix == "" {
		fix = "checked that " + dir + " is writable and its disk is healthy"
	}
	file := se.Path
	if se.Target != se.Path {
		file += " (a symlink to " + se.Target + ")"
	}
	kept := "Nothing was written to " + se.Target + "."
	if fi, err := os.Stat(se.Target); err == nil && fi.Mode().IsRegular() {
		kept = "The old auth file " + se.Target + " is kept unchanged, and no temporary file was left behind."
	}
	details := map[string]any{"authFile": se.Path, "dir": dir, "reason": se.Reason, "step": se.Step}
	if se.Target != se.Path {
		details["target"] = se.Target
	}
	return &llmerr.Error{Code: llmerr.AuthSaveFailed, Tool: tool, Role: role, Err: err,
		Message: fmt.Sprintf("Could not save the sign-in of role %s to %s: %s.", role, file, sayReason(se.Reason)),
		Cause:   fmt.Sprintf("could not %s in %s: %s", se.Step, dir, systemMessage(se.Err)),
		Actions: []llmerr.Action{llmerr.Call("browser_save_auth", "after a person has "+fix+"; the browser is still signed in, so nothing is lost", llmerr.A("role", role))},
		Note:    kept + " Saving again before the fix fails the same way.",
		Details: details}
}

func sayReason(reason string) string {
	switch reason {
	case roles.SaveDiskFull:
		return "the disk is full"
	case roles.SaveDirMissing:
		return "its directory is missing"
	case roles.SaveNotAFile:
		return "the path is not a regular file"
	}
	return reason
}

// systemMessage is the system's words for err without the paths the
// wrapping adds (the temporary file's name means nothing to anyone).
func systemMessage(err error) string {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err.Error()
	case errors.As(err, &le):
		return le.Err.Error()
	}
	return err.Error()
}
