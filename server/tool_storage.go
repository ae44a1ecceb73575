package server

import (
	"context"
	"encoding/json"
	"fmt"
	neturl "net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/llmerr"
)

// The tools of --caps storage: the current role's cookies and the current
// page's web storage, read and set. Values are the site's secrets as much
// as its data (a session cookie signs the role in): a listing shows each
// value's length unless the call asks for values, and no error repeats
// one.

type cookiesArgs struct {
	Action string `json:"action,omitempty" jsonschema:"list (default), set, delete or clear"`
	Name   string `json:"name,omitempty" jsonschema:"Cookie name (set, delete; list: only it)"`
	Value  string `json:"value,omitempty" jsonschema:"Value to set"`
	URL    string `json:"url,omitempty" jsonschema:"Site of the cookie (set; default: the current page)"`
	Values bool   `json:"values,omitempty" jsonschema:"Show values (hidden by default)"`
	roleArg
}

type storageArgs struct {
	Action  string `json:"action,omitempty" jsonschema:"list (default), get, set, remove or clear"`
	Key     string `json:"key,omitempty" jsonschema:"Key (get, set, remove)"`
	Value   string `json:"value,omitempty" jsonschema:"Value to set"`
	Session bool   `json:"session,omitempty" jsonschema:"sessionStorage instead of localStorage"`
	Values  bool   `json:"values,omitempty" jsonschema:"Show values in list (hidden by default)"`
	roleArg
}

func (s *Server) addStorageTools() {
	addTool(s, def("browser_cookies", "Cookies", 0, "List, set or delete the role's cookies; values hidden unless values=true."), s.cookies)
	addTool(s, def("browser_local_storage", "Web storage", 0, "List, get, set or remove the current page's localStorage (or sessionStorage) entries."), s.webStorage)
}

// Bounds of what the storage tools show.
const (
	maxCookiesShown = 200
	maxStorageShown = 200
	maxValueShown   = 2000
)

// badAction is the error of an action a tool does not have.
func badAction(tool, action string, actions []string) error {
	return &llmerr.Error{Code: llmerr.InvalidParams, Tool: tool,
		Message: fmt.Sprintf("%q is not an action of %s.", action, tool), Cause: "action is " + strings.Join(actions, ", "),
		Actions: []llmerr.Action{llmerr.Call(tool, "see what there is", llmerr.A("action", "list"))}}
}

// needArg is the error of an action called without an argument it needs.
func needArg(tool, action, arg string, fix llmerr.Action) error {
	return &llmerr.Error{Code: llmerr.InvalidParams, Tool: tool,
		Message: fmt.Sprintf("action %s needs %s.", action, arg), Cause: arg + " is missing", Actions: []llmerr.Action{fix}}
}

// shownValue is a value as a listing gives it: its length unless values
// were asked for, then the value, cut and fenced (it is the site's).
func shownValue(v string, show bool) string {
	if !show {
		return fmt.Sprintf("(%d characters)", utf8.RuneCountInString(v))
	}
	return pageText(oneLineCut(v, maxValueShown))
}

func (s *Server) cookies(ctx context.Context, c *call, in cookiesArgs) (*response, error) {
	action := strings.ToLower(strings.TrimSpace(in.Action))
	if action == "" {
		action = "list"
	}
	actions := []string{"list", "set", "delete", "clear"}
	if !slices.Contains(actions, action) {
		return nil, badAction(c.tool, in.Action, actions)
	}
	if (action == "set" || action == "delete") && in.Name == "" {
		return nil, needArg(c.tool, action, "name", llmerr.Call(c.tool, "list the cookies and their names", llmerr.A("action", "list")))
	}
	r, tab, unlock, err := c.lockTab()
	if err != nil {
		return nil, err
	}
	defer unlock()
	bctx := r.bctx
	fail := func(err error) error { return llmerr.Classify(err, llmerr.Situation{Tool: c.tool, URL: tab.URL()}) }
	switch action {
	case "set":
		site := in.URL
		if site == "" {
			site = tab.URL()
		}
		if !strings.HasPrefix(site, "http://") && !strings.HasPrefix(site, "https://") {
			return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool, URL: tab.URL(),
				Message: "A cookie needs the http(s) site it belongs to.", Cause: "the current page is " + site + ", which has no cookies",
				Actions: []llmerr.Action{llmerr.Call(c.tool, "name the site", llmerr.A("action", "set"), llmerr.A("name", in.Name), llmerr.A("value", "…"), llmerr.A("url", "https://example.com/"))}}
		}
		if err := bctx.AddCookies([]playwright.OptionalCookie{{Name: in.Name, Value: in.Value, URL: playwright.String(site)}}); err != nil {
			// Playwright's message can quote the cookie: say it in our words.
			return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool, URL: site,
				Message: fmt.Sprintf("The browser refused the cookie %q for %s.", in.Name, site), Cause: "a cookie name cannot be empty or hold ;, = or spaces, and the site must be an http(s) URL",
				Actions: []llmerr.Action{llmerr.Call(c.tool, "list the cookies the role has", llmerr.A("action", "list"))}}
		}
		return textResponse(fmt.Sprintf("Set cookie %q (%d characters) for %s; pages read it from their next request or script.", in.Name, utf8.RuneCountInString(in.Value), site)), nil
	case "delete", "clear":
		opts := playwright.BrowserContextClearCookiesOptions{}
		if action == "delete" {
			opts.Name = in.Name
		}
		before, err := bctx.Cookies()
		if err != nil {
			return nil, fail(err)
		}
		if err := bctx.ClearCookies(opts); err != nil {
			return nil, fail(err)
		}
		n := len(before)
		if action == "delete" {
			n = 0
			for _, ck := range before {
				if ck.Name == in.Name {
					n++
				}
			}
			if n == 0 {
				return textResponse(fmt.Sprintf("The role had no cookie named %q; nothing was deleted.", in.Name)), nil
			}
			return textResponse(fmt.Sprintf("Deleted %d cookie%s named %q.", n, plural(n, "s"), in.Name)), nil
		}
		return textResponse(fmt.Sprintf("Deleted all %d cookie%s of the role: it is signed out wherever a cookie signed it in.", n, plural(n, "s"))), nil
	}
	all, err := bctx.Cookies()
	if err != nil {
		return nil, fail(err)
	}
	if in.Name != "" {
		all = slices.DeleteFunc(all, func(ck playwright.Cookie) bool { return ck.Name != in.Name })
	}
	if len(all) == 0 {
		if in.Name != "" {
			return textResponse(fmt.Sprintf("The role has no cookie named %q.", in.Name)), nil
		}
		return textResponse("The role has no cookies."), nil
	}
	slices.SortFunc(all, func(a, b playwright.Cookie) int {
		return strings.Compare(a.Domain+a.Path+a.Name, b.Domain+b.Path+b.Name)
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%d cookie%s:\n", len(all), plural(len(all), "s"))
	for i, ck := range all {
		if i == maxCookiesShown {
			fmt.Fprintf(&b, "… %d more; name= shows one\n", len(all)-i)
			break
		}
		var flags []string
		if ck.HttpOnly {
			flags = append(flags, "httpOnly")
		}
		if ck.Secure {
			flags = append(flags, "secure")
		}
		if ck.SameSite != nil {
			flags = append(flags, "sameSite="+string(*ck.SameSite))
		}
		if ck.Expires > 0 {
			flags = append(flags, "expires "+time.Unix(int64(ck.Expires), 0).UTC().Format("2006-01-02 15:04 UTC"))
		} else {
			flags = append(flags, "session")
		}
		fmt.Fprintf(&b, "- %s %s on %s%s [%s]\n", pageText(ck.Name), shownValue(ck.Value, in.Values), ck.Domain, ck.Path, strings.Join(flags, ", "))
	}
	if !in.Values {
		b.WriteString("Values are hidden; values=true shows them.")
	}
	return textResponse(strings.TrimRight(b.String(), "\n")), nil
}

// webStorageJS runs an action on the page's local or session storage and
// answers JSON: entries for list, a value for get.
const webStorageJS = `({action, key, value, session}) => {
  const st = session ? window.sessionStorage : window.localStorage;
  switch (action) {
    case 'set': st.setItem(key, value); return JSON.stringify({n: st.length});
    case 'remove': { const had = st.getItem(key) !== null; st.removeItem(key); return JSON.stringify({had}); }
    case 'clear': { const n = st.length; st.clear(); return JSON.stringify({n}); }
    case 'get': { const v = st.getItem(key); return JSON.stringify({had: v !== null, value: v === null ? '' : v}); }
  }
  const entries = [];
  for (let i = 0; i < st.length && i < 1000; i++) { const k = st.key(i); entries.push([k, st.getItem(k) || '']); }
  return JSON.stringify({n: st.length, entries});
}`

func (s *Server) webStorage(ctx context.Context, c *call, in storageArgs) (*response, error) {
	action := strings.ToLower(strings.TrimSpace(in.Action))
	if action == "" {
		action = "list"
	}
	actions := []string{"list", "get", "set", "remove", "clear"}
	if !slices.Contains(actions, action) {
		return nil, badAction(c.tool, in.Action, actions)
	}
	if action != "list" && action != "clear" && in.Key == "" {
		return nil, needArg(c.tool, action, "key", llmerr.Call(c.tool, "list the keys", llmerr.A("action", "list")))
	}
	kind := "localStorage"
	if in.Session {
		kind = "sessionStorage"
	}
	_, tab, unlock, err := c.lockTab()
	if err != nil {
		return nil, err
	}
	defer unlock()
	url := tab.URL()
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool, URL: url,
			Message: kind + " belongs to a site, and the current page is none.", Cause: "the tab shows " + url,
			Actions: []llmerr.Action{llmerr.Call("browser_navigate", "open a page of the site first", llmerr.A("url", "https://example.com/"))}}
	}
	type answer struct {
		v   any
		err error
	}
	raw, ok := bounded(s.cfg.ActionTimeout, func() answer {
		v, err := tab.Page.Evaluate(webStorageJS, map[string]any{"action": action, "key": in.Key, "value": in.Value, "session": in.Session})
		return answer{v, err}
	})
	if !ok {
		return nil, busyPage(c.tool, url, fmt.Errorf("%s did not answer within %s", kind, s.cfg.ActionTimeout))
	}
	if raw.err != nil {
		e := llmerr.Classify(raw.err, llmerr.Situation{Tool: c.tool, URL: url})
		if strings.Contains(strings.ToLower(raw.err.Error()), "securityerror") || strings.Contains(strings.ToLower(raw.err.Error()), "access is denied") {
			e.Message = "The page may not use " + kind + "."
			e.Cause = "the site's settings or a sandboxed page deny storage access"
		}
		return nil, e
	}
	text, _ := raw.v.(string)
	var got struct {
		N       int         `json:"n"`
		Had     bool        `json:"had"`
		Value   string      `json:"value"`
		Entries [][2]string `json:"entries"`
	}
	if err := json.Unmarshal([]byte(text), &got); err != nil {
		return nil, fmt.Errorf("reading %s: %w", kind, err)
	}
	origin := originOf(url)
	switch action {
	case "set":
		return textResponse(fmt.Sprintf("Set %s %q (%d characters) on %s; it holds %d %s. The page's scripts see it on their next read.",
			kind, in.Key, utf8.RuneCountInString(in.Value), origin, got.N, entries(got.N))), nil
	case "remove":
		if !got.Had {
			return textResponse(fmt.Sprintf("%s of %s had no key %q; nothing was removed.", kind, origin, in.Key)), nil
		}
		return textResponse(fmt.Sprintf("Removed %q from %s of %s.", in.Key, kind, origin)), nil
	case "clear":
		return textResponse(fmt.Sprintf("Cleared %s of %s (%d %s).", kind, origin, got.N, entries(got.N))), nil
	case "get":
		if !got.Had {
			return textResponse(fmt.Sprintf("%s of %s has no key %q.", kind, origin, in.Key)), nil
		}
		return textResponse(fmt.Sprintf("%s %q of %s (%d characters):\n%s", kind, in.Key, origin, utf8.RuneCountInString(got.Value),
			strings.Join(fenceBlock(strings.Split(cutRunes(got.Value, maxValueShown), "\n")), "\n"))), nil
	}
	if got.N == 0 {
		return textResponse(fmt.Sprintf("%s of %s is empty.", kind, origin)), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s of %s, %d %s:\n", kind, origin, got.N, entries(got.N))
	for i, e := range got.Entries {
		if i == maxStorageShown {
			fmt.Fprintf(&b, "… %d more; action=get reads one\n", got.N-i)
			break
		}
		fmt.Fprintf(&b, "- %s %s\n", pageText(e[0]), shownValue(e[1], in.Values))
	}
	if !in.Values {
		b.WriteString("Values are hidden; values=true shows them, action=get reads one.")
	}
	return textResponse(strings.TrimRight(b.String(), "\n")), nil
}

// cutRunes cuts s to n characters, marking the cut.
func cutRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + fmt.Sprintf("… [%d more characters]", len(r)-n)
	}
	return s
}

// entries is "entry" or "entries" after n.
func entries(n int) string {
	if n == 1 {
		return "entry"
	}
	return "entries"
}

// originOf is a URL's origin (scheme, host and port), or the URL when it
// does not parse.
func originOf(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	return u.Scheme + "://" + u.Host
}
