package llmerr

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Element describes what a ref pointed to, as recorded when it was issued.
type Element struct {
	Role string `json:"role,omitempty"`
	Name string `json:"name,omitempty"`
	Tag  string `json:"tag,omitempty"`
}

// String renders the element the way a snapshot line does: role "name".
func (e *Element) String() string {
	if e == nil {
		return ""
	}
	role := e.Role
	if role == "" {
		role = e.Tag
	}
	if e.Name == "" {
		return role
	}
	return fmt.Sprintf("%s %q", role, e.Name)
}

// Arg is one argument of a suggested tool call. Args are ordered, so the
// rendering is stable and reads like the call an agent should make.
type Arg struct {
	Name  string
	Value any
}

// Action is one step of a recovery plan: a tool call and why to make it.
type Action struct {
	Tool string
	Args []Arg
	Why  string
}

// Call renders the action as tool_name(arg="value").
func (a Action) Call() string {
	s := a.Tool + "("
	for i, arg := range a.Args {
		if i > 0 {
			s += ", "
		}
		switch v := arg.Value.(type) {
		case string:
			// Long values (typed text) are shortened in the text; the
			// structured form keeps them whole.
			if r := []rune(v); len(r) > 120 {
				v = string(r[:120]) + "…"
			}
			s += fmt.Sprintf("%s=%q", arg.Name, v)
		default:
			// Lists and numbers are written as JSON, so the step reads as
			// the arguments to pass.
			data, err := json.Marshal(v)
			if err != nil {
				data = []byte(fmt.Sprint(v))
			}
			s += fmt.Sprintf("%s=%s", arg.Name, data)
		}
	}
	return s + ")"
}

// Error is one failure with the facts a recovery plan needs. Create it where
// the facts are known; inspect it with errors.As.
type Error struct {
	Code Code
	// Message says what failed, in one sentence.
	Message string

	// Facts, each optional.
	Ref      string
	Element  *Element
	URL      string // the URL involved (navigation target, or the page)
	URLAfter string // where the page is now, when it moved
	FrameURL string
	Timeout  time.Duration
	Tool     string
	Role     string

	// Cause is the cause the server observed. OtherCauses are listed only
	// where the server cannot tell which one it was.
	Cause       string
	OtherCauses []string
	// Actions are the recovery steps, in order.
	Actions []Action
	// Note is said after the steps (for example what not to do).
	Note string
	// Details are extra machine-readable facts (raw messages, expected
	// arguments).
	Details map[string]any

	// Err is the underlying error, if any.
	Err error
}

// Error returns the one-line form of the error.
func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Entry returns the catalogue entry of the error's code.
func (e *Error) Entry() Entry { return Lookup(e.Code) }

// As returns err as an *Error if it is or wraps one.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// Call is a shorthand for building an Action.
func Call(tool, why string, args ...Arg) Action {
	return Action{Tool: tool, Args: args, Why: why}
}

// A is a shorthand for building an Arg.
func A(name string, value any) Arg { return Arg{Name: name, Value: value} }
