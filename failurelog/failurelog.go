// Package failurelog records partial failures where they happen (a frame
// that could not be read, an auth file that did not load) and lets the
// places with context decide what they mean: an error, or a warning the
// model sees beside a result that still holds everything else.
//
// Operations only Record. Decision points (the end of a snapshot, a
// navigation, a role's next call) read the log, clear what no longer
// applies, and render warnings.
package failurelog

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Kind is what failed.
type Kind string

// The kinds of partial failure.
const (
	FrameInjection Kind = "frame-injection" // the bridge could not be installed in a frame
	FrameExpansion Kind = "frame-expansion" // a frame's content could not be read
	FrameDetached  Kind = "frame-detached"  // a frame went away while the snapshot ran
	FrameTimeout   Kind = "frame-timeout"   // a frame did not answer in its time budget
	AuthLoad       Kind = "auth-load"       // a role's auth file could not be loaded
	AuthCheck      Kind = "auth-check"      // a role turned out to be signed out
)

// Reason classifies why.
type Reason string

// The reasons a failure is put down to.
const (
	ReasonDetached   Reason = "detached"
	ReasonTimeout    Reason = "timeout"
	ReasonCrashed    Reason = "crashed"
	ReasonSandboxed  Reason = "sandboxed"
	ReasonBlocked    Reason = "blocked"
	ReasonMissing    Reason = "missing"
	ReasonMalformed  Reason = "malformed"
	ReasonUnreadable Reason = "unreadable"
	ReasonSignedOut  Reason = "signed-out"
	ReasonUnknown    Reason = "unknown"
)

// Entry is one partial failure with its facts.
type Entry struct {
	Kind      Kind   `json:"kind"`
	Reason    Reason `json:"reason"`
	Detail    string `json:"detail,omitempty"`
	FrameURL  string `json:"frameUrl,omitempty"`
	FrameName string `json:"frameName,omitempty"`
	// Ref is the iframe element's ref, where the gap is in the tree.
	Ref       string `json:"ref,omitempty"`
	MainFrame bool   `json:"mainFrame"`
	Role      string `json:"role,omitempty"`
	AuthFile  string `json:"authFile,omitempty"`
	// Doc is the document (of the main frame) the entry belongs to; a
	// navigation away from it clears the entry.
	Doc  int       `json:"doc,omitempty"`
	Time time.Time `json:"time"`
}

// IsFrame reports whether the entry is about a frame.
func (e Entry) IsFrame() bool {
	return e.Kind == FrameInjection || e.Kind == FrameExpansion || e.Kind == FrameDetached || e.Kind == FrameTimeout
}

// Warning renders the entry as one line: what is missing, why, and what the
// agent can do.
func (e Entry) Warning() string {
	switch {
	case e.IsFrame():
		what := "the content of iframe"
		if e.FrameName != "" {
			what += fmt.Sprintf(" %q", e.FrameName)
		}
		if e.Ref != "" {
			what += " [ref=" + e.Ref + "]"
		}
		if e.FrameURL != "" {
			what += " (" + e.FrameURL + ")"
		}
		why := map[Reason]string{
			ReasonTimeout:   "it did not answer in time (it may still be loading)",
			ReasonDetached:  "it was removed while the snapshot ran",
			ReasonCrashed:   "its renderer crashed",
			ReasonSandboxed: "it is sandboxed and cannot be read",
			ReasonBlocked:   "its page was blocked or failed to load",
		}[e.Reason]
		if why == "" {
			why = "it could not be read"
		}
		if e.Detail != "" {
			why += ": " + e.Detail
		}
		todo := "call browser_snapshot() to try again"
		switch {
		case e.Kind == FrameInjection:
			// The frame's document broke what the script needs; only a
			// fresh document helps.
			todo = "reload the page (browser_navigate to its URL again) to read it"
		case e.Ref != "" && e.Reason != ReasonDetached:
			todo = fmt.Sprintf("call browser_snapshot(ref=%q) to retry just that frame", e.Ref)
		}
		return fmt.Sprintf("%s is missing: %s. %s.", capitalize(what), why, capitalize(todo))
	case e.Kind == AuthLoad:
		return fmt.Sprintf("Role %s is browsing signed out: its auth file %s is %s (%s). Public pages work; to sign in, log in through the page and call browser_save_auth(role=%q).",
			e.Role, e.AuthFile, e.Reason, e.Detail, e.Role)
	case e.Kind == AuthCheck:
		return fmt.Sprintf("Role %s looks signed out: %s. Sign in through the page, then call browser_save_auth(role=%q).", e.Role, e.Detail, e.Role)
	}
	return fmt.Sprintf("%s failed: %s", e.Kind, e.Detail)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Log is the record of one role. It is safe for concurrent use.
type Log struct {
	mu      sync.Mutex
	entries []Entry
}

// Record adds an entry. It never decides anything.
func (l *Log) Record(e Entry) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, e)
}

// Entries returns a copy of the entries, oldest first.
func (l *Log) Entries() []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Entry(nil), l.entries...)
}

// Clear removes the entries for which drop returns true.
func (l *Log) Clear(drop func(Entry) bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	kept := l.entries[:0]
	for _, e := range l.entries {
		if !drop(e) {
			kept = append(kept, e)
		}
	}
	l.entries = kept
}

// Frames clears every frame entry, before a snapshot observes them anew.
func (l *Log) Frames() { l.Clear(Entry.IsFrame) }

// AuthWorks clears the auth entries: the role's sign-in works again.
func (l *Log) AuthWorks() {
	l.Clear(func(e Entry) bool { return e.Kind == AuthLoad || e.Kind == AuthCheck })
}

// Decision is what a decision point makes of the log.
type Decision struct {
	// Fatal is a main-frame failure: the result is an error.
	Fatal *Entry
	// Warnings come back beside a result that is still useful.
	Warnings []Entry
}

// Decide applies the rule: a main-frame failure is an error; a child frame
// or an optional auth failure is a warning.
func Decide(entries []Entry) Decision {
	var d Decision
	for i, e := range entries {
		if e.IsFrame() && e.MainFrame && d.Fatal == nil {
			d.Fatal = &entries[i]
			continue
		}
		d.Warnings = append(d.Warnings, e)
	}
	return d
}

// Render writes warnings as the "Warnings:" section of a result, or "".
func Render(ws []Entry) string {
	if len(ws) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Warnings:")
	for _, w := range ws {
		b.WriteString("\n- ")
		b.WriteString(w.Warning())
	}
	return b.String()
}
