package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/retrace-dev/retrace/llmerr"
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
	addTool(s, def("select_role", "Select role", harmless|idempotent, "Switch the role (signed-in user) that browser tools act as when they name none. Each role has its own browser context, cookies and refs."), s.selectRole)
	addTool(s, def("list_current_roles", "List roles", readOnly, "List the configured roles with their auth file, default URL and whether their browser is open."), s.listRoles)
	addTool(s, def("browser_save_auth", "Save sign-in", destructive|idempotent, "Save the role's current sign-in (cookies and local storage) to its auth file, so the next run starts signed in."), s.saveAuth)
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
	for _, name := range s.cfg.Roles.Names() {
		r, _ := s.cfg.Roles.Get(name)
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
	b.WriteString("(* = current role; browser tools take role=\"...\" to act as another without switching)")
	return textResponse(b.String()), nil
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
	if err := os.MkdirAll(filepath.Dir(rc.AuthFile), 0o700); err != nil {
		return nil, err
	}
	st, err := r.bctx.StorageState(rc.AuthFile)
	if err != nil {
		return nil, err
	}
	// The file holds secrets: only its owner may read it.
	_ = os.Chmod(rc.AuthFile, 0o600)
	r.log.AuthWorks()
	return textResponse(fmt.Sprintf("Saved the sign-in of role %s to %s: %d cookie%s, local storage of %d origin%s. The next run starts signed in.",
		r.name, rc.AuthFile, len(st.Cookies), plural(len(st.Cookies), "s"), len(st.Origins), plural(len(st.Origins), "s"))), nil
}
