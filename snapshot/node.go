// Package snapshot turns pages into the compact text tree an agent reads.
//
// The in-page bridge (bridge.js) walks one frame's document, computes role,
// name and state, and assigns refs; the Go side here installs it in every
// frame, expands child frames inline, renders the tree, and resolves refs
// back to elements.
package snapshot

// Node is one element or text of a snapshot, as the bridge returns it.
// Empty fields are omitted by the bridge to keep the payload small.
type Node struct {
	Role        string  `json:"role"`
	Name        string  `json:"name,omitempty"`
	Ref         string  `json:"ref,omitempty"`
	Tag         string  `json:"tag,omitempty"`
	Text        string  `json:"text,omitempty"`
	Level       int     `json:"level,omitempty"`
	Checked     any     `json:"checked,omitempty"` // true or "mixed"
	Disabled    bool    `json:"disabled,omitempty"`
	Expanded    *bool   `json:"expanded,omitempty"`
	Selected    bool    `json:"selected,omitempty"`
	Pressed     any     `json:"pressed,omitempty"` // true or "mixed"
	Required    bool    `json:"required,omitempty"`
	Invalid     bool    `json:"invalid,omitempty"`
	Readonly    bool    `json:"readonly,omitempty"`
	Value       *string `json:"value,omitempty"`
	URL         string  `json:"url,omitempty"`
	Placeholder string  `json:"placeholder,omitempty"`
	Frame       bool    `json:"frame,omitempty"`
	Children    []*Node `json:"children,omitempty"`

	// FrameError is set by the Go side when a child frame could not be read.
	FrameError string `json:"-"`
	// FrameURL is the URL of the child frame, set by the Go side.
	FrameURL string `json:"-"`
}

// bridgeResult is what api.snapshot returns.
type bridgeResult struct {
	NextRef int     `json:"nextRef"`
	Tree    []*Node `json:"tree"`
	Error   string  `json:"error,omitempty"`
	Cut     bool    `json:"cut,omitempty"`
	// Aborted: the walk stopped at the time the Go side stops waiting.
	Aborted bool `json:"aborted,omitempty"`
	// Modal: the document had an open modal dialog, and only it (with the
	// path to it) was read: the rest of the page is inert behind it.
	Modal bool `json:"modal,omitempty"`
}
