package server

import (
	"errors"
	"fmt"

	"github.com/playwright-community/playwright-go"
	"github.com/retrace-dev/retrace/failurelog"
	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/roles"
)

// runLoginCheck loads the role's loginCheck.url in a page of its own and
// sees where it lands: on the signed-out page, or redirected away from the
// check page, or refused (401/403), the loaded sign-in does not work.
func (r *role) runLoginCheck() error {
	rc, _ := r.srv.cfg.Roles.Get(r.name)
	if rc.LoginCheck == nil || rc.LoginCheck.URL == "" {
		return nil
	}
	page, err := r.openPage()
	if err != nil {
		return err
	}
	defer page.Close()
	resp, err := page.Goto(rc.LoginCheck.URL, playwright.PageGotoOptions{
		WaitUntil: playwright.WaitUntilStateDomcontentloaded,
		Timeout:   playwright.Float(float64(r.srv.cfg.NavigationTimeout.Milliseconds())),
	})
	if err != nil {
		// The check could not run; browsing may still work, so say so.
		r.log.Record(failurelog.Entry{Kind: failurelog.AuthCheck, Reason: failurelog.ReasonUnknown, Role: r.name,
			AuthFile: rc.AuthFile, Detail: "the check page " + rc.LoginCheck.URL + " did not load"})
		return nil
	}
	landed := page.URL()
	status := 0
	if resp != nil {
		status = resp.Status()
	}
	signedOut := rc.LoginCheck.SignedOut(landed) || status == 401 || status == 403 ||
		(rc.LoginCheck.SignedOutURL == "" && !sameURL(landed, rc.LoginCheck.URL))
	if !signedOut {
		return nil
	}
	detail := fmt.Sprintf("its check page %s landed on %s", rc.LoginCheck.URL, landed)
	if status == 401 || status == 403 {
		detail = fmt.Sprintf("its check page %s answered HTTP %d", rc.LoginCheck.URL, status)
	}
	if _, ok := r.recipe(); ok {
		_ = page.Close()
		return r.autoSignIn(rc, trigger{why: detail, kind: failurelog.AuthCheck, reason: failurelog.ReasonSignedOut})
	}
	if rc.AuthRequired && !r.authReported {
		r.authReported = true
		return &llmerr.Error{Code: llmerr.AuthenticationFailed, Role: r.name, URL: rc.LoginCheck.URL,
			Message: fmt.Sprintf("Role %s is signed out: %s.", r.name, detail),
			Cause:   "the sign-in saved in " + rc.AuthFile + " has expired or was revoked",
			Actions: r.signInSteps(rc),
			Details: map[string]any{"authFile": rc.AuthFile, "landed": landed}}
	}
	r.log.Record(failurelog.Entry{Kind: failurelog.AuthCheck, Reason: failurelog.ReasonSignedOut, Role: r.name,
		AuthFile: rc.AuthFile, Detail: detail})
	return nil
}

// authState returns the auth file to load into the role's new context, ""
// when there is none or it cannot be used. A problem with the file is an
// AUTHENTICATION_FAILED error for a role that requires auth, and otherwise a
// warning the role's results carry until the file works.
func (r *role) authState() (string, error) {
	rc, _ := r.srv.cfg.Roles.Get(r.name)
	if r.name == defaultRole && r.srv.cfg.StorageState != "" {
		// Cookies and storage to start from (--storage-state), not a
		// sign-in the server checks: the default role has none.
		return r.srv.cfg.StorageState, nil
	}
	if rc == nil || rc.AuthFile == "" {
		return "", nil
	}
	err := roles.CheckAuthFile(rc.AuthFile)
	if err == nil {
		r.log.AuthWorks()
		return rc.AuthFile, nil
	}
	if _, ok := r.recipe(); ok {
		// Its sign-in recipe runs as the context opens (openContext).
		return "", nil
	}
	var p *roles.AuthProblem
	reason := "unusable"
	if errors.As(err, &p) {
		reason = p.Reason
	}
	steps := r.signInSteps(rc)
	if rc.AuthRequired && !r.authReported {
		// Reported once; the calls of the plan then run signed out, so the
		// agent can sign in through the page and save the new state.
		r.authReported = true
		return "", &llmerr.Error{Code: llmerr.AuthenticationFailed, Role: r.name,
			Message: fmt.Sprintf("Role %s must be signed in, but its auth file %s is %s.", r.name, rc.AuthFile, reason),
			Cause:   detailOf(err),
			Actions: steps,
			Details: map[string]any{"authFile": rc.AuthFile, "reason": reason}}
	}
	r.log.Clear(func(e failurelog.Entry) bool { return e.Kind == failurelog.AuthLoad })
	r.log.Record(failurelog.Entry{Kind: failurelog.AuthLoad, Reason: failurelog.Reason(reason),
		Role: r.name, AuthFile: rc.AuthFile, Detail: detailOf(err)})
	return "", nil
}

func detailOf(err error) string {
	var p *roles.AuthProblem
	if errors.As(err, &p) {
		return p.Detail
	}
	return err.Error()
}

// signInSteps is the plan to sign a role in again: open its start page,
// sign in through the form, save the new state to its auth file.
func (r *role) signInSteps(rc *roles.Role) []llmerr.Action {
	roleArg := llmerr.A("role", r.name)
	var steps []llmerr.Action
	start := rc.DefaultURL
	if start == "" && rc.LoginCheck != nil {
		start = rc.LoginCheck.URL
	}
	if start != "" {
		steps = append(steps, llmerr.Call("browser_navigate", "open the role's start page (it leads to sign-in)", llmerr.A("url", start), roleArg))
	}
	steps = append(steps,
		llmerr.Call("browser_snapshot", "find the sign-in form and fill it in (browser_type, browser_click)", roleArg),
		llmerr.Call("browser_save_auth", "save the new sign-in to "+rc.AuthFile+" for the next run", roleArg))
	return steps
}

// checkSignedOut applies the role's login check to the URL a navigation
// landed on. Landing on the signed-out page (a login redirect) is
// AUTHENTICATION_FAILED for a role that requires auth and a warning
// otherwise; landing anywhere else on the checked site keeps nothing to
// warn about.
func (r *role) checkSignedOut(landed string) error {
	rc, _ := r.srv.cfg.Roles.Get(r.name)
	if rc == nil || rc.LoginCheck == nil || !rc.LoginCheck.SignedOut(landed) {
		return nil
	}
	r.log.Clear(func(e failurelog.Entry) bool { return e.Kind == failurelog.AuthCheck })
	detail := fmt.Sprintf("the page went to the sign-in page %s", landed)
	if rc.AuthRequired {
		return &llmerr.Error{Code: llmerr.AuthenticationFailed, Role: r.name, URL: landed,
			Message: fmt.Sprintf("Role %s is signed out: the site sent it to its sign-in page.", r.name),
			Cause:   "its session ended (expired or revoked) or its auth file holds an old sign-in",
			Actions: append([]llmerr.Action{llmerr.Call("browser_snapshot", "this is the sign-in page: fill in the form (browser_type, browser_click)", llmerr.A("role", r.name))},
				llmerr.Call("browser_save_auth", "save the new sign-in for the next run", llmerr.A("role", r.name))),
			Details: map[string]any{"signedOutUrl": rc.LoginCheck.SignedOutURL}}
	}
	r.log.Record(failurelog.Entry{Kind: failurelog.AuthCheck, Reason: failurelog.ReasonSignedOut,
		Role: r.name, AuthFile: rc.AuthFile, Detail: detail})
	return nil
}

// authStatus is the role's sign-in as last observed: from its FailureLog,
// or from whether its auth file was loaded.
func authStatus(st *role) string {
	if st == nil {
		return "not checked yet"
	}
	for _, e := range st.log.Entries() {
		switch e.Kind {
		case failurelog.AuthLoad:
			return fmt.Sprintf("signed out (auth file %s)", e.Reason)
		case failurelog.AuthCheck:
			return "signed out (sent to the sign-in page)"
		}
	}
	if st.open() {
		return "auth file loaded"
	}
	return "not checked yet"
}
