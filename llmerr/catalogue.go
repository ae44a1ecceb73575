// Package llmerr is retrace's error catalogue: the codes, the typed error that
// carries the facts of one failure, and its rendering as a recovery plan for a
// model (text) and as a structured object for programs.
//
// It imports nothing of retrace's own, so every other package can create
// errors where the facts are known.
package llmerr

// Code is a stable, UPPER_SNAKE identifier of one kind of failure. Codes are
// never renamed: agents and evaluation reports key on them.
type Code string

// The codes retrace produces.
const (
	UnknownRef             Code = "UNKNOWN_REF"
	StaleRef               Code = "STALE_REF"
	FrameDetached          Code = "FRAME_DETACHED"
	NavigationFailed       Code = "NAVIGATION_FAILED"
	NavigationTimeout      Code = "NAVIGATION_TIMEOUT"
	ElementNotInteractable Code = "ELEMENT_NOT_INTERACTABLE"
	ActionTimeout          Code = "ACTION_TIMEOUT"
	InvalidParams          Code = "INVALID_PARAMS"
	BrowserClosed          Code = "BROWSER_CLOSED"
	PageCrashed            Code = "PAGE_CRASHED"
	EvaluationFailed       Code = "EVALUATION_FAILED"
	SetupRequired          Code = "SETUP_REQUIRED"
	InternalError          Code = "INTERNAL_ERROR"
	OriginBlocked          Code = "ORIGIN_BLOCKED"
	OptionNotFound         Code = "OPTION_NOT_FOUND"
	UnknownRole            Code = "UNKNOWN_ROLE"
	AuthenticationFailed   Code = "AUTHENTICATION_FAILED"
	PageUnreadable         Code = "PAGE_UNREADABLE"
	AuthSaveFailed         Code = "AUTH_SAVE_FAILED"
	BrowserUnreachable     Code = "BROWSER_UNREACHABLE"
)

// Category groups codes by where the fault lies.
type Category string

// The categories of the catalogue.
const (
	CategoryInput      Category = "input"
	CategoryState      Category = "state"
	CategoryNavigation Category = "navigation"
	CategoryAuth       Category = "auth"
	CategoryBrowser    Category = "browser"
	CategoryPolicy     Category = "policy"
	CategoryInternal   Category = "internal"
)

// Entry is the catalogue's fixed knowledge about one code.
type Entry struct {
	Code     Code
	Category Category
	// Title is the first line of a rendered plan.
	Title string
	// Retryable says whether the same call, unchanged, may succeed later.
	Retryable bool
	// RefsInvalidated says whether refs issued before the failure should be
	// considered gone (a new snapshot is needed).
	RefsInvalidated bool
	// SessionValid says whether the browser session can still be used.
	SessionValid bool
	// NoRetryReason is said in words when Retryable is false.
	NoRetryReason string
	// Steps are the recovery steps used when the site that creates the
	// error has no better ones.
	Steps []Action
	// About says when the code is used, for docs/errors.md.
	About string
}

// catalogue is the single source of truth for the codes. It is never mutated.
var catalogue = map[Code]Entry{
	UnknownRef: {
		Category: CategoryInput, Title: "Unknown element ref",
		SessionValid:  true,
		NoRetryReason: "Retrying with the same ref will not help: it was never issued in this session.",
	},
	StaleRef: {
		Category: CategoryState, Title: "Stale element ref",
		RefsInvalidated: true, SessionValid: true,
		NoRetryReason: "Retrying with the same ref will not help: it points to an element that is gone.",
	},
	FrameDetached: {
		Category: CategoryState, Title: "Frame detached",
		RefsInvalidated: true, SessionValid: true,
		NoRetryReason: "Retrying with the same ref will not help: its frame no longer exists.",
	},
	NavigationFailed: {
		Category: CategoryNavigation, Title: "Navigation failed",
		SessionValid:  true,
		NoRetryReason: "Retrying the same URL will fail the same way until the cause is fixed.",
	},
	NavigationTimeout: {
		Category: CategoryNavigation, Title: "Navigation timed out",
		Retryable: true, SessionValid: true,
	},
	ElementNotInteractable: {
		Category: CategoryState, Title: "Element not interactable",
		Retryable: true, SessionValid: true,
	},
	ActionTimeout: {
		Category: CategoryState, Title: "Action timed out",
		Retryable: true, SessionValid: true,
	},
	InvalidParams: {
		Category: CategoryInput, Title: "Invalid arguments",
		SessionValid:  true,
		NoRetryReason: "Retrying the same call will not help: fix the arguments first.",
	},
	BrowserClosed: {
		Category: CategoryBrowser, Title: "Browser closed",
		Retryable: true, RefsInvalidated: true,
	},
	BrowserUnreachable: {
		Category: CategoryBrowser, Title: "Browser endpoint unreachable",
		Retryable: true, RefsInvalidated: true,
	},
	PageCrashed: {
		Category: CategoryBrowser, Title: "Page crashed",
		RefsInvalidated: true, SessionValid: true,
		NoRetryReason: "Retrying on the crashed page will not help: load the page again first.",
	},
	EvaluationFailed: {
		Category: CategoryState, Title: "Page script failed",
		Retryable: true, SessionValid: true,
	},
	SetupRequired: {
		Category: CategoryBrowser, Title: "Browser setup required",
		NoRetryReason: "Retrying will fail the same way until the missing part is installed.",
	},
	InternalError: {
		Category: CategoryInternal, Title: "Internal error",
		Retryable: true, SessionValid: true,
	},
	OptionNotFound: {
		Category: CategoryInput, Title: "Option not found",
		SessionValid:  true,
		NoRetryReason: "Retrying with the same values will not help: the select has no such option.",
	},
	AuthenticationFailed: {
		Category: CategoryAuth, Title: "Authentication failed",
		SessionValid:  true,
		NoRetryReason: "Retrying will fail the same way until the role is signed in again.",
	},
	AuthSaveFailed: {
		Category: CategoryAuth, Title: "Sign-in not saved",
		SessionValid:  true,
		NoRetryReason: "Saving again will fail the same way until a person fixes the disk or the directory; the old auth file is kept unchanged.",
	},
	UnknownRole: {
		Category: CategoryInput, Title: "Unknown role",
		SessionValid:  true,
		NoRetryReason: "Retrying with the same role will not help: no such role is configured.",
	},
	PageUnreadable: {
		Category: CategoryState, Title: "Page could not be read",
		SessionValid:  true,
		NoRetryReason: "Reading the same document again will fail the same way: load it again first.",
	},
	OriginBlocked: {
		Category: CategoryPolicy, Title: "Origin blocked",
		SessionValid:  true,
		NoRetryReason: "Retrying will fail the same way: the server's origin policy forbids it.",
	},
}

// snapshotStep is the step most plans start from.
var snapshotStep = Action{Tool: "browser_snapshot", Why: "see the page as it is now and get fresh refs"}

func init() {
	// Default steps and descriptions, kept beside the entries they belong to.
	about := map[Code]struct {
		about string
		steps []Action
	}{
		UnknownRef:             {"A ref that this session never issued: invented, mistyped, from another session, or a CSS selector or text given as a ref.", []Action{snapshotStep}},
		StaleRef:               {"A ref that was issued but no longer points to anything: its element left the DOM, or its document navigated or reloaded. Where the page now has the same element, the plan names its new ref.", []Action{snapshotStep}},
		FrameDetached:          {"A ref inside an iframe that has been removed or replaced.", []Action{snapshotStep}},
		NavigationFailed:       {"A load that failed at the network level (net::ERR_...): refused, DNS, TLS, aborted.", []Action{{Tool: "browser_navigate", Args: []Arg{A("url", "<a corrected URL>")}, Why: "after checking scheme, host and port"}}},
		NavigationTimeout:      {"A load that did not reach DOMContentLoaded within --timeout-navigation.", []Action{snapshotStep, {Tool: "browser_navigate", Args: []Arg{A("url", "<the same URL>")}, Why: "retry once if the page is still empty"}}},
		ElementNotInteractable: {"The element exists but cannot take the action: hidden, disabled, covered by another element, not editable.", []Action{snapshotStep}},
		ActionTimeout:          {"The action, or the page's answer, did not come within --timeout-action.", []Action{snapshotStep}},
		InvalidParams:          {"Arguments that do not fit the tool: missing, wrong type, unknown, out of range, malformed URL, text too long. The plan lists the expected arguments.", nil},
		BrowserClosed:          {"The browser or page closed, crashed or was killed during the call. The next call starts a fresh browser.", []Action{{Tool: "browser_navigate", Args: []Arg{A("url", "<the page you were on>")}, Why: "a fresh browser opens"}}},
		BrowserUnreachable:     {"No browser endpoint (--browser-endpoint) could be reached: each refused the connection, timed out or closed it. An endpoint that fails is avoided for a while (2 s, doubling, at most a minute) and tried again; sessions go to the healthy ones.", []Action{{Tool: "browser_navigate", Args: []Arg{A("url", "<the page you were on>")}, Why: "tries every endpoint again"}}},
		PageCrashed:            {"The page's renderer crashed. The tab is replaced on the next call.", []Action{{Tool: "browser_navigate", Args: []Arg{A("url", "<the page you were on>")}, Why: "load it again in a fresh page"}}},
		EvaluationFailed:       {"A script run in the page threw.", []Action{snapshotStep}},
		SetupRequired:          {"The Playwright driver, Node.js or Chromium is missing on the machine. A person must install it; the message names the command.", nil},
		InternalError:          {"Anything unclassified, including a bug in retrace (a panic is caught and reported here). The raw message is in details.", []Action{snapshotStep}},
		OriginBlocked:          {"A URL whose origin --blocked-origins lists, or that --allowed-origins does not list.", nil},
		AuthenticationFailed:   {"A role that must be signed in is not: its auth file is missing, unreadable or malformed. The plan says which file and how to refresh it (sign in through the page, then browser_save_auth). For a role whose auth is optional the same facts come back as a warning instead.", []Action{{Tool: "list_current_roles", Why: "see each role's auth file"}}},
		AuthSaveFailed:         {"browser_save_auth could not write the role's auth file: the disk is full, the directory is missing or not writable, or the path is not a regular file. The new state goes to a temporary file that is renamed over the old one, so a failed save keeps the old file whole and leaves nothing behind. The plan names what a person must fix; the browser stays signed in, so saving again after the fix loses nothing.", []Action{{Tool: "list_current_roles", Why: "see each role's auth file"}}},
		UnknownRole:            {"A role argument or select_role named a role that is not configured (--config, --role). The error lists the roles there are.", []Action{{Tool: "list_current_roles", Why: "see the roles there are"}}},
		PageUnreadable:         {"The main document of the tab could not be read: the page's own scripts broke the snapshot script (replaced built-ins it needs), or its walk ran out of time before reading anything. A child frame with the same trouble is a warning instead.", []Action{{Tool: "browser_reload", Why: "a fresh document gets a fresh snapshot script"}}},
		OptionNotFound:         {"browser_select_option named an option the select does not have. The error lists the options, and retries with the near match when there is one.", []Action{snapshotStep}},
	}
	for code, a := range about {
		e := catalogue[code]
		e.About, e.Steps = a.about, a.steps
		catalogue[code] = e
	}
}

// Lookup returns the catalogue entry of code. Unknown codes get the
// INTERNAL_ERROR entry, so rendering never fails.
func Lookup(code Code) Entry {
	e, ok := catalogue[code]
	if !ok {
		e = catalogue[InternalError]
		code = InternalError
	}
	e.Code = code
	return e
}

// Codes returns every code of the catalogue in a stable order.
func Codes() []Code {
	return []Code{
		UnknownRef, StaleRef, FrameDetached, NavigationFailed, NavigationTimeout,
		ElementNotInteractable, ActionTimeout, InvalidParams, BrowserClosed,
		PageCrashed, EvaluationFailed, SetupRequired, InternalError, OriginBlocked, OptionNotFound, UnknownRole, AuthenticationFailed, PageUnreadable,
		AuthSaveFailed, BrowserUnreachable,
	}
}
