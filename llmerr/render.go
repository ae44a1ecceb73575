package llmerr

import (
	"fmt"
	"strings"
)

// Style selects how errors are rendered for the model.
type Style string

// The rendering styles.
const (
	// StyleRecovery renders a recovery plan: facts, cause, numbered steps.
	StyleRecovery Style = "recovery"
	// StylePlain renders one line, like a typical server; it is the baseline
	// for measuring recovery rates.
	StylePlain Style = "plain"
)

// ParseStyle returns the style named s.
func ParseStyle(s string) (Style, error) {
	switch Style(s) {
	case StyleRecovery, StylePlain:
		return Style(s), nil
	}
	return "", fmt.Errorf("unknown error style %q (want recovery or plain)", s)
}

// Text renders e for a model in the given style.
func (e *Error) Text(style Style) string {
	if style == StylePlain {
		return e.Message
	}
	entry := e.Entry()
	var b strings.Builder
	fmt.Fprintf(&b, "Error: %s [%s]\n", entry.Title, e.Code)
	b.WriteString(e.Message)
	b.WriteString("\n")
	if e.Ref != "" {
		if e.Element != nil {
			fmt.Fprintf(&b, "Ref: %s (%s)\n", e.Ref, e.Element)
		} else {
			fmt.Fprintf(&b, "Ref: %s\n", e.Ref)
		}
	}
	if e.URL != "" {
		fmt.Fprintf(&b, "URL: %s\n", e.URL)
	}
	if e.URLAfter != "" && e.URLAfter != e.URL {
		fmt.Fprintf(&b, "Page now: %s\n", e.URLAfter)
	}
	if e.FrameURL != "" {
		fmt.Fprintf(&b, "Frame: %s\n", e.FrameURL)
	}
	if e.Timeout > 0 {
		fmt.Fprintf(&b, "Timeout: %s\n", e.Timeout)
	}
	if e.Cause != "" {
		fmt.Fprintf(&b, "Cause: %s\n", e.Cause)
	}
	if len(e.OtherCauses) > 0 {
		fmt.Fprintf(&b, "Other possible causes: %s\n", strings.Join(e.OtherCauses, "; "))
	}
	if actions := e.steps(); len(actions) > 0 {
		b.WriteString("Action Required:\n")
		for i, a := range actions {
			fmt.Fprintf(&b, "%d. %s", i+1, a.Call())
			if a.Why != "" {
				fmt.Fprintf(&b, " — %s", a.Why)
			}
			b.WriteString("\n")
		}
	}
	if e.Note != "" {
		b.WriteString(e.Note)
		b.WriteString("\n")
	} else if !entry.Retryable && entry.NoRetryReason != "" {
		b.WriteString(entry.NoRetryReason)
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// steps returns the error's own recovery steps, or the catalogue's.
func (e *Error) steps() []Action {
	if len(e.Actions) > 0 {
		return e.Actions
	}
	return e.Entry().Steps
}

// Structured is the machine-readable form of an error, sent as
// structuredContent on every error result.
type Structured struct {
	Code            Code               `json:"code"`
	Category        Category           `json:"category"`
	Message         string             `json:"message"`
	Retryable       bool               `json:"retryable"`
	RefsInvalidated bool               `json:"refsInvalidated"`
	SessionValid    bool               `json:"sessionValid"`
	Actions         []StructuredAction `json:"actions"`
	Details         map[string]any     `json:"details,omitempty"`
}

// StructuredAction is one recovery step in structured form.
type StructuredAction struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
	Why  string         `json:"why,omitempty"`
}

// Structured returns the machine-readable form of e.
func (e *Error) Structured() Structured {
	entry := e.Entry()
	s := Structured{
		Code:            entry.Code,
		Category:        entry.Category,
		Message:         e.Message,
		Retryable:       entry.Retryable,
		RefsInvalidated: entry.RefsInvalidated,
		SessionValid:    entry.SessionValid,
		Actions:         []StructuredAction{},
		Details:         map[string]any{},
	}
	for _, a := range e.steps() {
		args := map[string]any{}
		for _, arg := range a.Args {
			args[arg.Name] = arg.Value
		}
		s.Actions = append(s.Actions, StructuredAction{Tool: a.Tool, Args: args, Why: a.Why})
	}
	put := func(k string, v any, ok bool) {
		if ok {
			s.Details[k] = v
		}
	}
	put("ref", e.Ref, e.Ref != "")
	put("element", e.Element, e.Element != nil)
	put("url", e.URL, e.URL != "")
	put("urlAfter", e.URLAfter, e.URLAfter != "")
	put("frameUrl", e.FrameURL, e.FrameURL != "")
	put("timeoutMs", e.Timeout.Milliseconds(), e.Timeout > 0)
	put("tool", e.Tool, e.Tool != "")
	put("role", e.Role, e.Role != "")
	put("cause", e.Cause, e.Cause != "")
	for k, v := range e.Details {
		s.Details[k] = v
	}
	if len(s.Details) == 0 {
		s.Details = nil
	}
	return s
}
