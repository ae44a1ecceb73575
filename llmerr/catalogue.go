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
		PageCrashed, EvaluationFailed, SetupRequired, InternalError,
	}
}
