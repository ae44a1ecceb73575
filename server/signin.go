package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/failurelog"
	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/roles"
	"github.com/retrace-dev/retrace/snapshot"
)

// Sign-in recipes: a role configured with signIn is signed in again by
// retrace itself when its auth file cannot be used as its context opens,
// when its loginCheck.url lands signed out, or when an action lands on its
// signed-out page. At most one automatic sign-in runs per call, and a
// recipe that failed is not run again in the session: the agent then signs
// in by hand, as without a recipe. The recipe's values come from the
// environment and never reach a result, an error or a log line.

// trigger is why a recipe runs, and where its failure is recorded.
type trigger struct {
	why    string // "its auth file ... was missing"
	kind   failurelog.Kind
	reason failurelog.Reason
}

// recipe returns the role's config when it has a sign-in recipe that may run
// now: not yet in this call, and not after it failed in this session.
func (r *role) recipe() (*roles.Role, bool) {
	rc, _ := r.srv.cfg.Roles.Get(r.name)
	if rc == nil || rc.SignIn == nil || r.signInRan || r.recipeOff {
		return nil, false
	}
	return rc, true
}

// autoSignIn runs the role's recipe. On success the role's context is
// signed in (a form signs in the open context; a command's file is loaded
// into a context made again), the new state is in the auth file, and the
// call's result says so in one line. Call with mu held.
func (r *role) autoSignIn(rc *roles.Role, t trigger) error {
	r.signInRan = true
	// The per-call limit ends with the call, whatever opened the context.
	r.mu.afterCall = r.afterCall
	var (
		f       *signInFailure
		remade  bool
		saveErr error
	)
	if len(rc.SignIn.Command) > 0 {
		f = r.runSignInCommand(rc)
		if f == nil && r.bctx != nil {
			// Storage state loads when a context is made: make it again.
			// The registry stays, so refs issued before are stale.
			r.closeLocked()
			if err := r.openContext(); err != nil {
				return err
			}
			remade = true
		}
	} else {
		f, saveErr = r.runSignInForm(rc)
	}
	if f != nil {
		r.recipeOff = true
		r.authReported = true
		r.log.Clear(func(e failurelog.Entry) bool { return e.Kind == t.kind })
		r.log.Record(failurelog.Entry{Kind: t.kind, Reason: t.reason, Role: r.name, AuthFile: rc.AuthFile,
			Detail: t.why + ", and its sign-in recipe failed"})
		r.srv.log.Info("sign-in recipe failed", "role", r.name, "failed", f.failed)
		return r.recipeError(rc, t, f)
	}
	r.log.AuthWorks()
	r.srv.log.Info("role signed in by its recipe", "role", r.name)
	line := fmt.Sprintf("Note: role %s was signed in again by its sign-in recipe, because %s; the new sign-in is saved to %s.", r.name, t.why, rc.AuthFile)
	if saveErr != nil {
		line = fmt.Sprintf("Note: role %s was signed in again by its sign-in recipe, because %s; the browser is signed in, but saving to %s failed (%s).",
			r.name, t.why, rc.AuthFile, saveReason(saveErr))
	}
	if remade {
		line += " Its browser context was made again with the new file, so refs issued before are stale."
	}
	r.note(line)
	return nil
}

// saveReason says why a save failed, without the file's contents.
func saveReason(err error) string {
	var se *roles.SaveError
	if errors.As(err, &se) {
		return se.Reason
	}
	return "write failed"
}

// signInFailure is what went wrong in a recipe, in words and facts that
// hold no value of it.
type signInFailure struct {
	failed string // env, page, field, submit, success, command, file
	what   string // for the message
	cause  string
	url    string // where the sign-in page stayed
	facts  map[string]any
}

// recipeError is AUTHENTICATION_FAILED for a recipe that failed: what
// failed, what the page showed, then the way to sign in by hand.
func (r *role) recipeError(rc *roles.Role, t trigger, f *signInFailure) *llmerr.Error {
	details := map[string]any{"authFile": rc.AuthFile, "recipe": "form", "failed": f.failed, "trigger": t.why}
	if len(rc.SignIn.Command) > 0 {
		details["recipe"] = "command"
	}
	if f.url != "" {
		details["landed"] = f.url
	}
	for k, v := range f.facts {
		details[k] = v
	}
	return &llmerr.Error{Code: llmerr.AuthenticationFailed, Role: r.name, URL: f.url,
		Message: fmt.Sprintf("Role %s could not be signed in by its sign-in recipe: %s.", r.name, f.what),
		Cause:   f.cause + "; the recipe ran because " + t.why,
		Actions: r.signInSteps(rc),
		Note:    "The recipe is not run again in this session: sign in by hand with the calls above, or fix the recipe (or its environment) and start retrace again.",
		Details: details}
}

// runSignInForm fills in the recipe's form in a page of its own, in the
// role's context, submits it and waits for its success condition; then it
// saves the context's state to the auth file. Call with mu held.
func (r *role) runSignInForm(rc *roles.Role) (*signInFailure, error) {
	si := rc.SignIn
	values := make([]string, len(si.Fields))
	for i, f := range si.Fields {
		v, ok := r.srv.cfg.Roles.Env(f.Value.Env)
		if !ok || v == "" {
			return &signInFailure{failed: "env", what: "the environment variable " + f.Value.Env + " is not set",
				cause: fmt.Sprintf("its field %s takes its value from %s, which is not set (or empty) in retrace's environment", f.Locator, f.Value.Env),
				facts: map[string]any{"envVariable": f.Value.Env}}, nil
		}
		values[i] = v
	}
	hide := func(s string) string { return redact(s, values) }
	page, err := r.openPage()
	if err != nil {
		return &signInFailure{failed: "page", what: "no page could be opened for it", cause: hide(llmerr.FirstLine(err.Error()))}, nil
	}
	defer r.dropRecipePage(page)
	nav := r.srv.cfg.NavigationTimeout
	act := playwright.Float(float64(r.srv.cfg.ActionTimeout.Milliseconds()))
	if _, err := page.Goto(si.URL, playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateDomcontentloaded,
		Timeout: playwright.Float(float64(nav.Milliseconds()))}); err != nil {
		return &signInFailure{failed: "page", what: "its sign-in page " + si.URL + " did not load",
			cause: hide(llmerr.FirstLine(err.Error())), url: hide(page.URL())}, nil
	}
	shows := func() string { return r.pageShows(page, hide) }
	for i, f := range si.Fields {
		loc := findControl(page, f.Locator, act)
		if loc == nil {
			return &signInFailure{failed: "field", what: fmt.Sprintf("its field %s was not found on %s", f.Locator, hide(page.URL())),
				cause: fmt.Sprintf("no element with %s appeared within %v; the page shows %s", f.Locator, r.srv.cfg.ActionTimeout, shows()),
				url:   hide(page.URL()), facts: map[string]any{"field": f.Locator.String()}}, nil
		}
		if err := loc.Fill(values[i], playwright.LocatorFillOptions{Timeout: act}); err != nil {
			// Playwright's message is not shown: only what could not be done.
			return &signInFailure{failed: "field", what: fmt.Sprintf("its field %s could not be filled in", f.Locator),
				cause: "the element is not a text field, or it stayed disabled or hidden; the page shows " + shows(),
				url:   hide(page.URL()), facts: map[string]any{"field": f.Locator.String()}}, nil
		}
	}
	submit := findControl(page, *si.Submit, act)
	if submit == nil {
		return &signInFailure{failed: "submit", what: fmt.Sprintf("its submit control %s was not found on %s", si.Submit, hide(page.URL())),
			cause: "no element with " + si.Submit.String() + " appeared; the page shows " + shows(),
			url:   hide(page.URL()), facts: map[string]any{"submit": si.Submit.String()}}, nil
	}
	if err := submit.Click(playwright.LocatorClickOptions{Timeout: act}); err != nil {
		return &signInFailure{failed: "submit", what: fmt.Sprintf("its submit control %s could not be clicked", si.Submit),
			cause: "it stayed covered, disabled or hidden; the page shows " + shows(),
			url:   hide(page.URL()), facts: map[string]any{"submit": si.Submit.String()}}, nil
	}
	if !r.signedInBy(page, rc, nav) {
		return &signInFailure{failed: "success", what: "its success condition (" + successWords(rc) + ") was not met after submitting",
			cause: "after the submit the page shows " + shows() + " and stayed on " + hide(page.URL()),
			url:   hide(page.URL())}, nil
	}
	st, err := r.bctx.StorageState()
	if err != nil {
		return nil, err
	}
	data, err := storageStateJSON(st)
	if err != nil {
		return nil, err
	}
	_, err = roles.WriteAuthFile(rc.AuthFile, data)
	return nil, err
}

// findControl finds the element a recipe names as an agent would (by label,
// or by ARIA role and name), the exact match first. It waits up to the
// action timeout for one to appear; nil when none did.
func findControl(page playwright.Page, l roles.Locator, timeout *float64) playwright.Locator {
	var exact, loose playwright.Locator
	if l.Label != "" {
		exact = page.GetByLabel(l.Label, playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})
		loose = page.GetByLabel(l.Label)
	} else {
		role := playwright.AriaRole(l.Role)
		if l.Name == "" {
			exact = page.GetByRole(role)
			loose = exact
		} else {
			exact = page.GetByRole(role, playwright.PageGetByRoleOptions{Name: l.Name, Exact: playwright.Bool(true)})
			loose = page.GetByRole(role, playwright.PageGetByRoleOptions{Name: l.Name})
		}
	}
	if err := exact.Or(loose).First().WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateVisible, Timeout: timeout}); err != nil {
		return nil
	}
	if n, err := exact.Count(); err == nil && n > 0 {
		return exact.First()
	}
	return loose.First()
}

// signedInBy waits up to nav for the recipe's success condition after its
// submit. A page that shows an alert and has finished loading is taken as
// an answer after a second: a wrong password does not wait the whole time.
func (r *role) signedInBy(page playwright.Page, rc *roles.Role, nav time.Duration) bool {
	sc := rc.SignIn.Success
	start := time.Now()
	met := func() bool {
		u := page.URL()
		if sc == nil {
			return !samePage(u, rc.SignIn.URL) && !rc.LoginCheck.SignedOut(u)
		}
		if !sc.URLMatches(u) {
			return false
		}
		if sc.Text != "" {
			if ok, err := page.GetByText(sc.Text).First().IsVisible(); err != nil || !ok {
				return false
			}
		}
		if sc.Cookie != "" {
			cookies, err := r.bctx.Cookies()
			if err != nil {
				return false
			}
			found := false
			for _, c := range cookies {
				found = found || c.Name == sc.Cookie
			}
			return found
		}
		return true
	}
	refused := func() bool {
		if time.Since(start) < time.Second {
			return false
		}
		n, err := page.Locator("[role=alert]").Count()
		if err != nil || n == 0 {
			return false
		}
		ready, err := page.Evaluate("() => document.readyState")
		return err == nil && ready == "complete"
	}
	deadline := start.Add(nav)
	for {
		if met() {
			return true
		}
		if time.Now().After(deadline) || refused() {
			return false
		}
		time.Sleep(waitPoll)
	}
}

// samePage reports whether two URLs name the same page, query aside.
func samePage(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	if err1 != nil || err2 != nil {
		return a == b
	}
	return ua.Host == ub.Host && strings.TrimRight(ua.Path, "/") == strings.TrimRight(ub.Path, "/")
}

// successWords says what the recipe waited for.
func successWords(rc *roles.Role) string {
	sc := rc.SignIn.Success
	if sc == nil {
		return "leave the sign-in page"
	}
	var parts []string
	if sc.URL != "" {
		parts = append(parts, fmt.Sprintf("URL matches %q", sc.URL))
	}
	if sc.Text != "" {
		parts = append(parts, fmt.Sprintf("the page shows %q", sc.Text))
	}
	if sc.Cookie != "" {
		parts = append(parts, fmt.Sprintf("cookie %q is set", sc.Cookie))
	}
	return strings.Join(parts, " and ")
}

// pageShows is what the recipe's page says, for a failure: the text of its
// alerts, or else its title, fenced as page text always is.
func (r *role) pageShows(page playwright.Page, hide func(string) string) string {
	alerts, _ := bounded(time.Second, func() []string {
		texts, _ := page.Locator("[role=alert]").AllInnerTexts()
		return texts
	})
	var said []string
	for _, a := range alerts {
		if a = strings.Join(strings.Fields(a), " "); a != "" {
			said = append(said, a)
		}
	}
	if len(said) > 0 {
		return "the alert " + pageText(hide(strings.Join(said, " / ")))
	}
	title, _ := bounded(titleWait, func() string { t, _ := page.Title(); return t })
	return "the title " + pageTitle(hide(title))
}

// dropRecipePage closes the recipe's page and forgets it, so it never
// shows up as a tab the action opened.
func (r *role) dropRecipePage(page playwright.Page) {
	bounded(time.Second, func() error { return page.Close() })
	r.popMu.Lock()
	defer r.popMu.Unlock()
	if t := r.pages[page]; t != nil {
		delete(r.pages, page)
		for i, o := range r.opened {
			if o == t {
				r.opened = append(r.opened[:i], r.opened[i+1:]...)
				break
			}
		}
	}
	r.eng.ForgetPage(page)
}

// redact hides every value in s, as written and as a URL would carry it.
func redact(s string, values []string) string {
	for _, v := range values {
		if v == "" {
			continue
		}
		for _, form := range []string{v, url.QueryEscape(v), url.PathEscape(v), strings.ReplaceAll(url.QueryEscape(v), "+", "%20")} {
			s = strings.ReplaceAll(s, form, "[hidden]")
		}
	}
	return s
}

// maxStderr is how much of a sign-in command's first stderr line a failure
// shows.
const maxStderr = 200

// runSignInCommand runs the recipe's program, bounded by its timeout, with
// RETRACE_AUTH_FILE and RETRACE_ROLE in its environment; it must leave a
// storage state in the auth file. Its output is never shown: only its exit
// status and the first line of its stderr, cut.
func (r *role) runSignInCommand(rc *roles.Role) *signInFailure {
	si := rc.SignIn
	ctx, cancel := context.WithTimeout(context.Background(), si.Timeout())
	defer cancel()
	cmd := exec.CommandContext(ctx, si.Command[0], si.Command[1:]...)
	cmd.Dir = si.Dir
	cmd.Env = append(os.Environ(), "RETRACE_AUTH_FILE="+rc.AuthFile, "RETRACE_ROLE="+r.name)
	var stderr capped
	cmd.Stderr = &stderr
	// A child that keeps the pipe open cannot hold the call past this.
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	prog := si.Command[0]
	facts := map[string]any{"command": prog}
	said := func() string {
		line, _, _ := strings.Cut(stderr.String(), "\n")
		line = strings.TrimSpace(strings.ToValidUTF8(line, ""))
		if line == "" {
			return "it wrote nothing to stderr"
		}
		if len(line) > maxStderr {
			line = strings.ToValidUTF8(line[:maxStderr], "") + "…"
		}
		return "the first line of its stderr: " + snapshot.Fenced(line)
	}
	var exit *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return &signInFailure{failed: "command", what: fmt.Sprintf("its command %s did not finish within %v and was stopped", prog, si.Timeout()),
			cause: "the program waited for something that did not come (a prompt, a network call); " + said(), facts: facts}
	case errors.As(err, &exit):
		facts["exitStatus"] = exit.ExitCode()
		return &signInFailure{failed: "command", what: fmt.Sprintf("its command %s exited with status %d", prog, exit.ExitCode()),
			cause: said(), facts: facts}
	case err != nil:
		return &signInFailure{failed: "command", what: fmt.Sprintf("its command %s could not be run", prog),
			cause: systemMessage(err), facts: facts}
	}
	if err := roles.CheckAuthFile(rc.AuthFile); err != nil {
		return &signInFailure{failed: "file", what: fmt.Sprintf("its command %s exited 0 but left no usable storage state in %s", prog, rc.AuthFile),
			cause: detailOf(err), facts: facts}
	}
	return nil
}

// capped keeps the first 4 KiB written to it: enough for a first line.
type capped struct{ b bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := 4096 - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *capped) String() string { return c.b.String() }

// signInOnLanding signs the role in again when the action landed on its
// signed-out page, then loads the page the call was going to, so the call
// ends where the agent wanted. handled reports whether it took over the end
// of the call. Not when the call asked for the sign-in page or started on
// it: then the agent is working on that page itself.
func (a *acting) signInOnLanding(o op, before state, landed string) (handled bool, err error) {
	r := a.role
	rc, ok := r.recipe()
	if !ok || rc.LoginCheck == nil || !rc.LoginCheck.SignedOut(landed) || rc.LoginCheck.SignedOut(a.from) {
		return false, nil
	}
	if a.landed != nil && a.landed.requested != "" && rc.LoginCheck.SignedOut(a.landed.requested) {
		return false, nil
	}
	target, lost := a.wanted(rc, landed)
	was := r.bctx
	err = r.autoSignIn(rc, trigger{why: "the page went to its sign-in page " + landed,
		kind: failurelog.AuthCheck, reason: failurelog.ReasonSignedOut})
	if err != nil {
		return true, err
	}
	if r.bctx != was || a.tab.Closed() {
		// A command's context was made again: the call goes on in a new tab.
		if a.tab, err = r.ensureTab(); err != nil {
			return true, err
		}
	}
	if target == "" {
		a.res.addDid("The sign-in page stays in the tab: the call named no other page to load.")
		return true, a.finish(o, before, a.tab.Mark())
	}
	mark := a.tab.Mark()
	if err := a.load(target, "Navigated to"); err != nil {
		return true, err
	}
	if err := a.finish(o, before, mark); err != nil {
		return true, err
	}
	if lost {
		a.redoStep()
	}
	return true, nil
}

// redoStep says that the action did not take effect (the site answered it
// by sending the role to sign in) and, when the page loaded again has
// exactly one element like its target, names the same call on it.
func (a *acting) redoStep() {
	t := a.targets[0]
	hint := fmt.Sprintf("The action on %s did not take effect: the site sent the role to sign in instead. The page it started on is loaded again, signed in; do the action again.", t.rec.Element())
	if snap, err := a.role.capture(a.tab.Page); err == nil && t.again != nil && t.rec.Name != "" {
		if same := snap.Same(t.rec.Role, t.rec.Name); len(same) == 1 {
			step := t.again(same[0].Ref)
			hint += fmt.Sprintf("\n1. %s — the %s on the page now", step.Call(), t.rec.Element())
		}
	}
	// Not the hint: a snapshot asked for would drop it.
	a.res.body = append(a.res.body, hint)
}

// wanted is the page the call was going to when it landed on the sign-in
// page: a navigate's target, else the first page of the GET redirect that
// led there, else the page the call started on, else the role's start
// page. lost reports that an element action's own request was answered by
// the redirect (a form's POST): loading the page again does not redo it.
func (a *acting) wanted(rc *roles.Role, landed string) (target string, lost bool) {
	if a.landed != nil && a.landed.requested != "" {
		return a.landed.requested, false
	}
	if u := redirectSource(a, rc, landed); u != "" {
		return u, false
	}
	if strings.HasPrefix(a.from, "http") {
		return a.from, len(a.targets) > 0
	}
	return rc.DefaultURL, false
}

// redirectSource finds, in the tab's requests, the GET document request
// whose redirect ended on the sign-in page.
func redirectSource(a *acting, rc *roles.Role, landed string) string {
	reqs, _ := a.tab.Requests()
	i := len(reqs) - 1
	for ; i >= 0; i-- {
		if reqs[i].Type == "document" && sameURL(reqs[i].URL, landed) {
			break
		}
	}
	src := ""
	for j := i - 1; i >= 0 && j >= 0; j-- {
		e := reqs[j]
		if e.Type != "document" || e.Nav != reqs[i].Nav {
			continue
		}
		if e.Status < 300 || e.Status > 399 || e.Method != "GET" {
			break
		}
		if !rc.LoginCheck.SignedOut(e.URL) {
			src = e.URL
		}
	}
	return src
}

// recipeDue returns why the role's recipe must run as its context opens
// (its auth file cannot be used), or "".
func (r *role) recipeDue() (string, *roles.Role) {
	rc, ok := r.recipe()
	if !ok {
		return "", nil
	}
	err := roles.CheckAuthFile(rc.AuthFile)
	if err == nil {
		return "", nil
	}
	reason := "unusable"
	var p *roles.AuthProblem
	if errors.As(err, &p) {
		reason = p.Reason
	}
	return fmt.Sprintf("its auth file %s was %s", rc.AuthFile, reason), rc
}

// fileTrigger is the trigger of an auth file that cannot be used.
func (r *role) fileTrigger(why string) trigger {
	reason := failurelog.ReasonUnknown
	for _, x := range []failurelog.Reason{failurelog.ReasonMissing, failurelog.ReasonMalformed, failurelog.ReasonUnreadable} {
		if strings.HasSuffix(why, " "+string(x)) {
			reason = x
		}
	}
	return trigger{why: why, kind: failurelog.AuthLoad, reason: reason}
}
