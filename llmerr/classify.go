package llmerr

import (
	"regexp"
	"strings"
	"time"
)

// Situation is what the caller knows when a browser call fails; Classify
// combines it with the raw error message.
type Situation struct {
	Tool    string
	Ref     string
	Element *Element
	URL     string
	Timeout time.Duration
	// Navigating is true when the failed call was a navigation.
	Navigating bool
}

var netErr = regexp.MustCompile(`net::(ERR_[A-Z_]+)`)

// netCauses explains the network errors an agent meets most.
var netCauses = map[string]string{
	"ERR_CONNECTION_REFUSED":       "nothing is listening at that address (the server is down or the port is wrong)",
	"ERR_NAME_NOT_RESOLVED":        "the host name does not resolve (a typo, or no network access to that host)",
	"ERR_INTERNET_DISCONNECTED":    "the browser has no network access",
	"ERR_CONNECTION_RESET":         "the server closed the connection",
	"ERR_CONNECTION_CLOSED":        "the server closed the connection without answering",
	"ERR_EMPTY_RESPONSE":           "the server closed the connection without answering",
	"ERR_ADDRESS_UNREACHABLE":      "the address cannot be reached from this machine",
	"ERR_CERT_AUTHORITY_INVALID":   "the site's TLS certificate is not trusted",
	"ERR_CERT_COMMON_NAME_INVALID": "the site's TLS certificate does not match the host",
	"ERR_CERT_DATE_INVALID":        "the site's TLS certificate has expired or is not valid yet",
	"ERR_TOO_MANY_REDIRECTS":       "the site redirects in a loop",
	"ERR_ABORTED":                  "the navigation was aborted (the page started another navigation, or the response was a download)",
	"ERR_BLOCKED_BY_CLIENT":        "the request was blocked by the browser's policy",
	"ERR_INVALID_URL":              "the URL is not valid",
	"ERR_UNSAFE_PORT":              "the browser refuses to connect to that port",
}

// Classify turns a raw error from a browser call into a catalogued error.
// An error that already is an *Error is returned unchanged.
func Classify(err error, s Situation) *Error {
	if err == nil {
		return nil
	}
	if e, ok := As(err); ok {
		if e.Tool == "" {
			e.Tool = s.Tool
		}
		return e
	}
	raw := err.Error()
	low := strings.ToLower(raw)
	tool := s.Tool
	if tool == "" {
		tool = "the call" // classified below the handler, which fills Tool in
	}
	base := Error{Tool: s.Tool, Ref: s.Ref, Element: s.Element, URL: s.URL, Err: err,
		Details: map[string]any{"raw": FirstLine(raw)}}
	snapshot := Call("browser_snapshot", "see the page as it is now and get fresh refs")

	switch {
	case s.Navigating && netErr.MatchString(raw):
		code := netErr.FindStringSubmatch(raw)[1]
		e := base
		e.Code = NavigationFailed
		e.Message = "Could not load " + s.URL + " (" + code + ")."
		e.Cause = netCauses[code]
		if e.Cause == "" {
			e.Cause = "the browser reported net::" + code
		}
		e.Actions = []Action{
			Call("browser_navigate", "after checking the address (scheme, host, port)", A("url", s.URL)),
		}
		e.Note = "Retrying the same URL will fail the same way until the server answers."
		if strings.HasPrefix(code, "ERR_CERT_") {
			// Retrying cannot help; the one way past it is the server's.
			e.Note = "The browser will not load this site while it distrusts the certificate. If the site is yours or a test server (a self-signed certificate), the server can be started with --ignore-https-errors; otherwise load the site over a URL whose certificate is valid."
		}
		if code == "ERR_ABORTED" {
			// Aborted by something that happened once (another navigation,
			// a renderer that died), not by the server: a retry often works.
			e.Actions = []Action{
				Call("browser_navigate", "retry once: an aborted load often works the second time", A("url", s.URL)),
				snapshot,
			}
			e.Note = ""
		}
		return &e

	case strings.Contains(low, "timeout") && strings.Contains(low, "exceeded") && s.Navigating:
		e := base
		e.Code = NavigationTimeout
		e.Timeout = s.Timeout
		e.Message = "Loading " + s.URL + " did not finish within " + s.Timeout.String() + "."
		e.Cause = "the server is slow to answer or the page keeps loading"
		e.Actions = []Action{
			snapshot,
			Call("browser_navigate", "retry once if the page is still empty", A("url", s.URL)),
		}
		return &e

	case strings.Contains(low, "page crashed"), strings.Contains(low, "target crashed"):
		e := base
		e.Code = PageCrashed
		e.Message = "The page crashed while " + tool + " ran."
		e.Cause = "its renderer process died (out of memory, a browser bug, or killed)"
		e.Actions = []Action{
			Call("browser_navigate", "load it again in a fresh page", A("url", orBlank(s.URL))),
		}
		return &e

	case strings.Contains(low, "target page, context or browser has been closed"),
		strings.Contains(low, "target closed"), strings.Contains(low, "browser has been closed"),
		strings.Contains(low, "browser has disconnected"), strings.Contains(low, "connection closed"):
		e := base
		e.Code = BrowserClosed
		e.Message = "The browser or page was closed while " + tool + " ran."
		e.Cause = "the page or browser was closed, crashed or was killed"
		e.Actions = []Action{
			Call("browser_navigate", "a new browser starts on the next call; load the page again", A("url", orBlank(s.URL))),
			snapshot,
		}
		return &e

	case strings.Contains(low, "execution context was destroyed"),
		strings.Contains(low, "frame was detached"), strings.Contains(low, "frame has been detached"):
		e := base
		e.Code = StaleRef
		if strings.Contains(low, "detached") && strings.Contains(low, "frame") {
			e.Code = FrameDetached
		}
		e.Message = "The page changed while " + tool + " ran."
		e.Cause = "the document navigated or its frame was removed during the call"
		e.Actions = []Action{snapshot}
		return &e

	case strings.Contains(low, "element is not attached"), strings.Contains(low, "not attached to the dom"):
		e := base
		e.Code = StaleRef
		e.Message = "The element left the page while " + tool + " ran."
		e.Cause = "the page re-rendered or removed the element during the action"
		e.Actions = []Action{snapshot}
		return &e

	case strings.Contains(low, "intercepts pointer events"),
		strings.Contains(low, "element is not visible"), strings.Contains(low, "element is not enabled"),
		strings.Contains(low, "element is not editable"), strings.Contains(low, "not an <input>"),
		strings.Contains(low, "element is outside of the viewport"):
		e := base
		e.Code = ElementNotInteractable
		e.Timeout = s.Timeout
		e.Message = "Could not " + verb(s.Tool) + " " + describe(s) + "."
		e.Cause = interactCause(low)
		e.Actions = []Action{snapshot}
		return &e

	case strings.Contains(low, "timeout") && strings.Contains(low, "exceeded"):
		e := base
		e.Code = ActionTimeout
		e.Timeout = s.Timeout
		e.Message = "Could not " + verb(s.Tool) + " " + describe(s) + " within " + s.Timeout.String() + "."
		e.Cause = "the element did not become ready (visible, stable, enabled) in time"
		e.Actions = []Action{snapshot}
		return &e
	}

	e := base
	e.Code = InternalError
	e.Message = s.Tool + " failed: " + FirstLine(raw)
	e.Cause = "an unexpected error in the browser call (the raw message is in details)"
	e.Actions = []Action{snapshot}
	return &e
}

func interactCause(low string) string {
	switch {
	case strings.Contains(low, "intercepts pointer events"):
		return "another element covers it (an overlay, modal or banner)"
	case strings.Contains(low, "not visible"):
		return "the element is hidden"
	case strings.Contains(low, "not enabled"):
		return "the element is disabled"
	case strings.Contains(low, "not editable"), strings.Contains(low, "not an <input>"):
		return "the element does not accept text"
	}
	return "the element cannot receive input right now"
}

func verb(tool string) string {
	switch tool {
	case "browser_click":
		return "click"
	case "browser_type":
		return "type into"
	}
	return "act on"
}

func describe(s Situation) string {
	d := s.Ref
	if s.Element != nil {
		d = s.Element.String() + " (" + s.Ref + ")"
	}
	if d == "" {
		d = "the element"
	}
	return d
}

func orBlank(u string) string {
	if u == "" {
		return "about:blank"
	}
	return u
}

// FirstLine is the first line of a raw error message, cut to 300
// characters: the part worth showing a model or a log.
func FirstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	// Cut by characters: a byte cut can split a UTF-8 sequence, and the
	// half character would reach the model as a replacement mark.
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}
