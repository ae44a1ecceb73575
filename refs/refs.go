// Package refs is the ref registry of one role: it issues ref numbers from a
// counter that only grows, remembers what every issued ref pointed to, and
// tells a ref that was never issued from one that went stale.
package refs

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/retrace-dev/retrace/llmerr"
)

// DocID identifies one document of one frame (one bridge instance). A frame
// that navigates gets a new DocID, which is how a stale ref is told apart.
type DocID int

// Record is what the registry knows about an issued ref.
type Record struct {
	Ref  string
	Role string
	Name string
	Tag  string
	// Doc is the document the ref was issued in.
	Doc DocID
	// URL is the frame's URL when the ref was (last) seen.
	URL string
	// MainFrame is false for refs inside iframes.
	MainFrame bool
	// Snapshot is the number of the snapshot that last listed the ref.
	Snapshot int
}

// Element returns what the ref pointed to, for error messages.
func (r Record) Element() *llmerr.Element {
	return &llmerr.Element{Role: r.Role, Name: r.Name, Tag: r.Tag}
}

// Registry holds the refs of one role. It is safe for concurrent use.
type Registry struct {
	mu       sync.Mutex
	next     int // next free ref number
	snapshot int
	records  map[int]Record
}

// New returns an empty registry whose first ref is e1.
func New() *Registry {
	return &Registry{next: 1, records: map[int]Record{}}
}

// Next returns the next free ref number, to hand to the bridge.
func (r *Registry) Next() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.next
}

// BeginSnapshot starts a new snapshot and returns its number.
func (r *Registry) BeginSnapshot() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.snapshot++
	return r.snapshot
}

// Observe records refs seen in a snapshot and advances the counter to next.
// The counter never goes back, so a ref is never reused.
func (r *Registry) Observe(next int, recs []Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if next > r.next {
		r.next = next
	}
	for _, rec := range recs {
		n, err := parse(rec.Ref)
		if err != nil {
			continue
		}
		rec.Snapshot = r.snapshot
		r.records[n] = rec
	}
}

// Len returns how many refs have been issued.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.records)
}

var refPattern = regexp.MustCompile(`^e([1-9][0-9]{0,8})$`)

func parse(ref string) (int, error) {
	m := refPattern.FindStringSubmatch(ref)
	if m == nil {
		return 0, fmt.Errorf("malformed ref %q", ref)
	}
	return strconv.Atoi(m[1])
}

// Lookup returns the record of ref, or an UNKNOWN_REF error that says why the
// ref is not one this role issued.
func (r *Registry) Lookup(ref string) (Record, error) {
	ref = strings.TrimSpace(ref)
	n, err := parse(ref)
	r.mu.Lock()
	rec, ok := r.records[n]
	next := r.next
	r.mu.Unlock()
	if err == nil && ok {
		return rec, nil
	}
	e := &llmerr.Error{
		Code:    llmerr.UnknownRef,
		Ref:     ref,
		Message: fmt.Sprintf("Ref %q was not issued by any snapshot in this session.", ref),
		Actions: []llmerr.Action{
			llmerr.Call("browser_snapshot", "get the current refs and copy one exactly as printed"),
		},
	}
	switch {
	case ref == "":
		e.Message = "The ref is empty."
		e.Cause = "no ref was given"
	case err != nil:
		e.Cause = malformedCause(ref)
	case next == 1:
		e.Cause = "no snapshot has been taken yet, so no ref exists"
	case n >= next:
		e.Cause = fmt.Sprintf("refs issued so far go up to e%d; e%d does not exist yet (it may be invented or from another session)", next-1, n)
	default:
		e.Cause = "no element in this session was given that ref"
	}
	return Record{}, e
}

func malformedCause(ref string) string {
	switch {
	case strings.HasPrefix(ref, "[ref=") || strings.HasPrefix(ref, "ref="):
		return "write only the ref itself, like e12, without [ref=...]"
	case strings.ContainsAny(ref, "#.[]>:=") || strings.HasPrefix(ref, "//"):
		return "it looks like a CSS selector or XPath; tools take a ref like e12 from browser_snapshot"
	case strings.HasPrefix(strings.ToLower(ref), "e") && len(ref) > 1:
		return "refs are the letter e followed by a number, like e12"
	}
	return "it looks like text or a description; tools take a ref like e12 from browser_snapshot"
}
