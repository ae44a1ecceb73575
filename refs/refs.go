// Package refs is the ref registry of one role: it issues ref numbers from a
// counter that only grows, remembers what every issued ref pointed to, and
// tells a ref that was never issued from one that went stale.
package refs

import (
	"fmt"
	"regexp"
	"sort"
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
	// gone holds, in increasing order, the ranges of ref numbers whose
	// documents are gone and whose records were dropped (Drop): enough to
	// call such a ref stale without keeping every record for ever.
	gone []goneRange
}

// goneRange is a range of ref numbers (both ends included) issued in
// documents that are gone. url is the page they were issued on, or empty
// when ranges of different pages were merged.
type goneRange struct {
	lo, hi int
	url    string
}

// maxGone bounds the dropped ranges kept; past it the oldest merge, losing
// only their URL.
const maxGone = 1024

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

// Drop forgets the records of the refs issued in docs, documents that are
// gone: a lookup of one of those refs then says only that it is stale, and
// where it was issued. The engine calls it for documents left long ago, so
// a long session does not keep every record it ever made.
func (r *Registry) Drop(docs ...DocID) {
	if len(docs) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	byDoc := map[DocID]*goneRange{}
	for _, d := range docs {
		byDoc[d] = nil
	}
	for n, rec := range r.records {
		g, ok := byDoc[rec.Doc]
		if !ok {
			continue
		}
		switch {
		case g == nil:
			byDoc[rec.Doc] = &goneRange{lo: n, hi: n, url: rec.URL}
		case n < g.lo:
			g.lo = n
		case n > g.hi:
			g.hi, g.url = n, rec.URL // the latest ref knows the latest URL
		}
		delete(r.records, n)
	}
	for _, g := range byDoc {
		if g != nil {
			r.gone = append(r.gone, *g)
		}
	}
	// One range per document covers the numbers between its refs too: those
	// were skipped or belong to other documents, whose live records a
	// lookup finds first. Ranges that overlap merge, and so do ranges of
	// one page that touch.
	sort.Slice(r.gone, func(i, j int) bool { return r.gone[i].lo < r.gone[j].lo })
	merged := r.gone[:0]
	for _, g := range r.gone {
		if k := len(merged) - 1; k >= 0 && (g.lo <= merged[k].hi || g.lo == merged[k].hi+1 && g.url == merged[k].url) {
			merged[k] = join(merged[k], g)
			continue
		}
		merged = append(merged, g)
	}
	for len(merged) > maxGone {
		merged[1] = join(merged[0], merged[1])
		merged = merged[1:]
	}
	r.gone = merged
}

func join(a, b goneRange) goneRange {
	g := goneRange{lo: min(a.lo, b.lo), hi: max(a.hi, b.hi), url: a.url}
	if a.url != b.url {
		g.url = ""
	}
	return g
}

// dropped returns the range that holds ref number n, if its record was
// dropped.
func (r *Registry) dropped(n int) (goneRange, bool) {
	i := sort.Search(len(r.gone), func(i int) bool { return r.gone[i].hi >= n })
	if i < len(r.gone) && r.gone[i].lo <= n {
		return r.gone[i], true
	}
	return goneRange{}, false
}

// Len returns how many records the registry holds: the refs of documents
// that are live or were left recently.
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
	g, gone := r.dropped(n)
	r.mu.Unlock()
	if err == nil && ok {
		return rec, nil
	}
	if err == nil && gone && n < next {
		return Record{}, goneError(ref, g.url)
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

// goneError is the STALE_REF of a ref whose record was dropped: its
// document is long gone, and what it pointed to is no longer known.
func goneError(ref, url string) error {
	return &llmerr.Error{
		Code:    llmerr.StaleRef,
		Ref:     ref,
		URL:     url,
		Message: fmt.Sprintf("Ref %s was issued on a document that has since been replaced.", ref),
		Cause:   "the page navigated, reloaded or closed after this ref was issued, many snapshots ago",
		Actions: []llmerr.Action{
			llmerr.Call("browser_snapshot", "get fresh refs for the page as it is now"),
		},
	}
}

// LooksLikeText reports whether ref is not a ref at all but words: an
// element's name or a description, not a selector or a mistyped ref.
func LooksLikeText(ref string) bool {
	return ref != "" && malformedCause(ref) == textCause
}

const textCause = "it looks like text or a description; tools take a ref like e12 from browser_snapshot"

func malformedCause(ref string) string {
	switch {
	case strings.HasPrefix(ref, "[ref=") || strings.HasPrefix(ref, "ref="):
		return "write only the ref itself, like e12, without [ref=...]"
	case strings.ContainsAny(ref, "#.[]>:=") || strings.HasPrefix(ref, "//"):
		return "it looks like a CSS selector or XPath; tools take a ref like e12 from browser_snapshot"
	case strings.HasPrefix(strings.ToLower(ref), "e") && len(ref) > 1 && strings.ContainsAny(ref, "0123456789"):
		return "refs are the letter e followed by a number, like e12"
	}
	return textCause
}
