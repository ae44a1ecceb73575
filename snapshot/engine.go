package snapshot

import (
	"cmp"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/failurelog"
	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/refs"
)

// bridgeSource is a JavaScript function expression; evaluating it in a frame
// returns the bridge api object, whose state lives in its closure.
//
//go:embed bridge.js
var bridgeSource string

// maxFrameDepth bounds how deep nested iframes are expanded.
const maxFrameDepth = 10

// doc is one bridge instance: one document of one frame.
type doc struct {
	id     refs.DocID
	frame  playwright.Frame
	handle playwright.JSHandle
	main   bool
	// setAside is set when a read of this bridge was abandoned: it no longer
	// takes snapshots, but still resolves the refs it issued while its
	// document lives.
	setAside bool
	// gone is set once its document is known to be gone (navigated away,
	// frame detached): its handle is disposed, and what is left says why
	// its refs are stale.
	gone bool
	// up is the document of a child frame's iframe, and upRef that
	// iframe's ref there, as the last snapshot found them (PagePoint).
	up    *doc
	upRef string
	// frames are the frames of this document's iframes, by ref, as the
	// last snapshot found them (childFrame).
	frames map[string]playwright.Frame
}

// keepGone is how many gone documents keep their refs' records in full, so
// a ref from a recent page still names its element and the navigation that
// made it stale; older ones are dropped from the engine and the registry.
const keepGone = 32

// Engine snapshots the pages of one role and resolves its refs. Calls are
// expected to be serialised by the role's lock; the engine's own lock only
// guards its maps.
type Engine struct {
	// FrameTimeout bounds reading one child frame, so a hung frame cannot
	// stall a snapshot.
	FrameTimeout time.Duration
	// WalkBudget bounds the bridge's walk of one document; past it the walk
	// stops and the snapshot says it was cut. AnswerGrace is how much longer
	// the Go side waits for an answer before declaring the page busy; the
	// bridge gives up its walk then too.
	WalkBudget  time.Duration
	AnswerGrace time.Duration
	// deadline, while a capture runs, is when it must have answered.
	deadline time.Time

	// Log, when set, receives the frames that could not be read.
	Log *failurelog.Log

	// BeforeFrame is a test hook: when set, it is called with a child
	// frame's URL once its iframe has been resolved and right before the
	// frame is read, on the goroutine that reads it (not Playwright's
	// dispatch goroutine, so it may call the page).
	BeforeFrame func(frameURL string)

	// watching, while a baseline capture runs, lists the documents it
	// walked; watched keeps that list per page for Changed.
	watching []refs.DocID
	watched  map[playwright.Page][]refs.DocID
	// baselines are the last baseline captures, per page.
	baselines map[playwright.Page]*Snapshot
	// behind keeps, while a page's baseline shows an open modal dialog
	// alone, the last baseline of the page behind it (Behind).
	behind map[playwright.Page]*Snapshot

	// key names the document property where InitScript leaves the bridge.
	key string
	// mainDoc is the main frame's document of the capture under way, and
	// mainModal whether its walk read an open modal dialog alone.
	mainDoc   refs.DocID
	mainModal bool

	mu      sync.Mutex
	nextDoc refs.DocID
	// poisoned counts, per frame, the reads abandoned on a timeout.
	poisoned map[playwright.Frame]int
	docs     map[refs.DocID]*doc
	current  map[playwright.Frame]*doc
	// gone lists the documents known to be gone, oldest first, until
	// compact drops them.
	gone []refs.DocID
	// handed are the element handles Resolve returned since the last
	// Release. The driver keeps every handle, and Chromium its element,
	// until it is disposed.
	handed []playwright.JSHandle
	// frameLookups counts the times childFrame asked the page for an
	// iframe's frame (tests see the kept ones used).
	frameLookups int
}

// NewEngine returns an engine with no bridges installed.
func NewEngine() *Engine {
	var k [12]byte
	_, _ = rand.Read(k[:])
	return &Engine{key: "__retrace_" + hex.EncodeToString(k[:]), FrameTimeout: 3 * time.Second, WalkBudget: 4 * time.Second, AnswerGrace: 2 * time.Second,
		docs:      map[refs.DocID]*doc{},
		watched:   map[playwright.Page][]refs.DocID{},
		baselines: map[playwright.Page]*Snapshot{},
		behind:    map[playwright.Page]*Snapshot{},
		current:   map[playwright.Frame]*doc{},
		poisoned:  map[playwright.Frame]int{}}
}

// Snapshot is one captured page.
type Snapshot struct {
	Number int
	URL    string
	Title  string
	Tree   []*Node
	// Refs lists every ref in the snapshot, all frames included.
	Refs []refs.Record
	// Cut is set when a frame's walk ran out of its time budget: the tree
	// holds what was read until then.
	Cut bool
	// Root is the ref whose subtree this is, or empty for the whole page.
	Root string
	// Doc is the main frame's document: two snapshots with the same Doc
	// show one document, whose refs carry over.
	Doc refs.DocID
	// Modal is set when the main document had an open modal dialog, and
	// the tree shows only it: the rest of the page is inert behind it.
	Modal bool
}

// ErrPageBusy means the page did not answer the bridge in time (its main
// thread is busy, or it is enormous).
var ErrPageBusy = errors.New("the page did not answer in time")

// Capture snapshots page (all frames) and records its refs in reg.
func (e *Engine) Capture(page playwright.Page, reg *refs.Registry) (*Snapshot, error) {
	return e.capture(page, reg, page.MainFrame(), true, "")
}

// CaptureBaseline snapshots page like Capture, and starts watching its
// documents for changes: Changed then says whether the page may differ
// from this snapshot.
func (e *Engine) CaptureBaseline(page playwright.Page, reg *refs.Registry) (*Snapshot, error) {
	e.watching = []refs.DocID{}
	defer func() { e.watching = nil }()
	snap, err := e.capture(page, reg, page.MainFrame(), true, "")
	e.mu.Lock()
	if err == nil {
		e.watched[page] = e.watching
		e.setBaseline(page, snap)
	} else {
		delete(e.watched, page)
		delete(e.baselines, page)
		delete(e.behind, page)
	}
	e.mu.Unlock()
	return snap, err
}

// Baseline returns page's last baseline capture, or nil.
func (e *Engine) Baseline(page playwright.Page) *Snapshot {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.baselines[page]
}

// setBaseline makes snap page's baseline. When it shows a modal dialog
// that the previous one did not, on the same document, the previous one is
// kept as what the agent last read of the page behind the dialog; a
// baseline without a modal dialog, or of another document, drops it.
// Call with mu held.
func (e *Engine) setBaseline(page playwright.Page, snap *Snapshot) {
	old := e.baselines[page]
	switch {
	case !snap.Modal || old == nil || old.Doc != snap.Doc:
		delete(e.behind, page)
	case !old.Modal:
		e.behind[page] = old
	}
	e.baselines[page] = snap
}

// Behind returns, while page's baseline shows an open modal dialog alone,
// the baseline the agent read of the page before the dialog opened, on
// the same document; nil otherwise. When the dialog closes, the page's
// changes are those since then: the refs of that read still hold.
func (e *Engine) Behind(page playwright.Page) *Snapshot {
	e.mu.Lock()
	defer e.mu.Unlock()
	if b := e.baselines[page]; b == nil || !b.Modal {
		return nil
	}
	return e.behind[page]
}

// DropBaseline forgets page's baseline: what the agent read of it no
// longer holds (its document changed).
func (e *Engine) DropBaseline(page playwright.Page) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.watched, page)
	delete(e.baselines, page)
	delete(e.behind, page)
}

// Changed reports whether page may differ from its last baseline capture:
// a document it walked changed (the DOM, or a value typed), went, or was
// replaced, or there is no baseline. Changes made by CSS alone (a :hover
// menu) are not seen. A document that does not answer counts as changed.
// same is false when the main document is not the baseline's any more (a
// navigation) or there is no baseline: then the changes are not a diff.
func (e *Engine) Changed(page playwright.Page) (changed, same bool) {
	changed, same, _ = e.ChangedFields(page)
	return changed, same
}

// ChangedFields is Changed that also says, when the only change is the
// value of some fields (typed, selected, checked) and nothing else moved,
// which: their refs. PatchFields then reads them alone.
func (e *Engine) ChangedFields(page playwright.Page) (changed, same bool, fields []string) {
	e.mu.Lock()
	ids := e.watched[page]
	type watchedDoc struct {
		h    playwright.JSHandle
		main bool
	}
	var docs []watchedDoc
	for _, id := range ids {
		d := e.docs[id]
		switch {
		case d == nil || d.gone || d.setAside || e.current[d.frame] != d:
			if d == nil || d.main {
				e.mu.Unlock()
				return true, false, nil
			}
			changed = true
		default:
			docs = append(docs, watchedDoc{d.handle, d.main})
		}
	}
	e.mu.Unlock()
	if len(ids) == 0 {
		return true, false, nil
	}
	same = true
	whole := changed // a document went: no field list covers that
	for _, d := range docs {
		v, err := withTimeout(time.Second, func() (any, error) { return d.h.Evaluate(`b => b.edits()`) })
		if d.main && err != nil && (contextGone(err) || frameGone(err)) {
			return true, false, nil
		}
		switch v := v.(type) {
		case bool:
			if v || err != nil {
				changed, whole = true, true
			}
		case []any:
			for _, r := range v {
				ref, ok := r.(string)
				if !ok {
					whole = true
					continue
				}
				fields = append(fields, ref)
			}
			changed = true
		default:
			changed, whole = true, true
		}
	}
	if whole {
		fields = nil
	}
	return changed, same, fields
}

// PatchFields makes page's new baseline from its last one with the lines of
// fields read again, each alone: what ChangedFields said changed. It
// returns the new baseline, or an error when a field cannot be read alone
// (then the page is to be read whole).
func (e *Engine) PatchFields(page playwright.Page, reg *refs.Registry, fields []string) (*Snapshot, error) {
	old := e.Baseline(page)
	if old == nil {
		return nil, errors.New("no baseline")
	}
	known := map[string]bool{}
	for _, r := range old.Refs {
		known[r.Ref] = true
	}
	tree, recs := old.Tree, slices.Clone(old.Refs)
	number := old.Number
	for _, ref := range fields {
		rec, err := reg.Lookup(ref)
		if err != nil {
			return nil, err
		}
		sub, err := e.CaptureSubtree(page, reg, rec)
		if err != nil {
			return nil, err
		}
		if len(sub.Tree) != 1 || sub.Tree[0].Ref != ref {
			return nil, fmt.Errorf("the field %s does not read as one line", ref)
		}
		for _, r := range sub.Refs {
			if !known[r.Ref] {
				return nil, fmt.Errorf("the field %s shows new refs", ref)
			}
			for i := range recs {
				if recs[i].Ref == r.Ref {
					recs[i] = r
				}
			}
		}
		var found bool
		if tree, found = replaceRef(tree, ref, sub.Tree[0]); !found {
			return nil, fmt.Errorf("the field %s is not in the baseline", ref)
		}
		number = sub.Number
	}
	now := *old
	now.Number, now.Tree, now.Refs = number, tree, recs
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.baselines[page] != old {
		return nil, errors.New("the baseline changed meanwhile")
	}
	e.baselines[page] = &now
	return &now, nil
}

// replaceRef returns nodes with the node of ref replaced by with, copying
// only the nodes on the way to it, so the old tree stays as it was.
func replaceRef(nodes []*Node, ref string, with *Node) ([]*Node, bool) {
	for i, n := range nodes {
		if n.Ref == ref {
			out := slices.Clone(nodes)
			out[i] = with
			return out, true
		}
		if kids, ok := replaceRef(n.Children, ref, with); ok {
			c := *n
			c.Children = kids
			out := slices.Clone(nodes)
			out[i] = &c
			return out, true
		}
	}
	return nodes, false
}

// CaptureSubtree snapshots only the element rec points to (an iframe's
// content included), after resolving it like an action would.
func (e *Engine) CaptureSubtree(page playwright.Page, reg *refs.Registry, rec refs.Record) (*Snapshot, error) {
	if _, err := e.Resolve(rec); err != nil {
		return nil, err
	}
	e.mu.Lock()
	d := e.docs[rec.Doc]
	e.mu.Unlock()
	return e.capture(page, reg, d.frame, d.main, rec.Ref)
}

func (e *Engine) capture(page playwright.Page, reg *refs.Registry, frame playwright.Frame, main bool, root string) (*Snapshot, error) {
	e.sweep()
	defer e.compact(reg)
	// One deadline for the whole capture: finding the bridge, the walk and
	// the title share it, so a busy page cannot make each wait its fill.
	if e.WalkBudget > 0 {
		e.deadline = time.Now().Add(e.WalkBudget + e.AnswerGrace)
		defer func() { e.deadline = time.Time{} }()
	}
	snap := &Snapshot{Number: reg.BeginSnapshot(), Root: root}
	if e.Log != nil && root == "" {
		e.Log.Frames() // observed anew by this snapshot
	}
	next := reg.Next()
	cut := false
	tree, next, recs, err := e.captureFrame(frame, next, 0, main, root, &cut)
	if err != nil {
		if errors.Is(err, ErrPageBusy) {
			// The abandoned read may still hand out numbers: as for a
			// child frame, the next snapshot gets a fresh bridge.
			e.poison(frame)
		}
		if main && root == "" {
			// Recorded, not decided: the caller's decision point turns a
			// main-frame failure into an error with a plan.
			e.recordMain(frame, err)
		}
		return nil, err
	}
	if main && root == "" && cut && len(tree) == 0 {
		e.recordMain(frame, errNothingRead)
	}
	snap.Tree = tree
	snap.Refs = recs
	if main && root == "" {
		snap.Doc, snap.Modal = e.mainDoc, e.mainModal
	}
	snap.Cut = cut
	snap.URL = frame.URL()
	titleWait := 3 * time.Second
	if !e.deadline.IsZero() {
		titleWait = max(time.Until(e.deadline), 300*time.Millisecond)
	}
	if t, err := withTimeout(titleWait, func() (any, error) { return page.Title() }); err == nil {
		snap.Title, _ = t.(string)
	}
	reg.Observe(next, recs)
	return snap, nil
}

// snapshotJS calls the bridge and returns its result as a JSON string, which
// decodes faster than Playwright's serialisation of a large object.
const snapshotJS = `(b, a) => b.snapshotJSON(a)`

func (e *Engine) captureFrame(frame playwright.Frame, next, depth int, main bool, root string, cut *bool) ([]*Node, int, []refs.Record, error) {
	var res bridgeResult
	budget := e.WalkBudget
	if depth == 0 && budget > 0 && !e.deadline.IsZero() {
		// What finding the bridge left of the capture's time.
		budget = max(min(budget, time.Until(e.deadline)-e.AnswerGrace), 100*time.Millisecond)
	}
	if depth > 0 {
		// A child frame must finish its walk before expandFrame gives up.
		budget = min(budget, e.FrameTimeout*2/3)
	}
	// Past wait the Go side stops waiting (expandFrame gives up on a child
	// frame first); the bridge then stops too, so a walk nobody waits for
	// does not keep the page's main thread busy.
	wait := budget + e.AnswerGrace
	if depth > 0 {
		wait = min(wait, e.FrameTimeout)
	}
	// Plain ints: playwright-go passes an int64 to the page as undefined.
	arg := map[string]any{"nextRef": next, "timeBudgetMs": int(budget.Milliseconds()), "abortAfterMs": int(wait.Milliseconds())}
	if root != "" {
		arg["root"] = root
	}
	if e.watching != nil && root == "" {
		arg["watch"] = true
	}
	d, err := e.call(frame, main, func(d *doc) error {
		out, err := withTimeout(budget+e.AnswerGrace, func() (any, error) {
			return d.handle.Evaluate(snapshotJS, arg)
		})
		if err != nil {
			return err
		}
		s, ok := out.(string)
		if !ok {
			return fmt.Errorf("bridge returned %T, not a string", out)
		}
		return json.Unmarshal([]byte(s), &res)
	})
	if err == nil && res.Aborted {
		// Seen only when the answer beat the Go side's timer: the same error.
		err = fmt.Errorf("%w (no answer within %s)", ErrPageBusy, wait)
	}
	if err != nil {
		return nil, next, nil, err
	}
	if res.Error != "" {
		return nil, next, nil, fmt.Errorf("the element of ref %s is %s", root, res.Error)
	}
	if res.Cut {
		*cut = true
	}
	if main && depth == 0 {
		e.mainDoc = d.id // frame entries belong to this document
		e.mainModal = res.Modal
	}
	if e.watching != nil {
		e.watching = append(e.watching, d.id)
	}
	res.Tree = compact(res.Tree)
	next = res.NextRef
	url := frame.URL()
	var recs []refs.Record
	var walk func(nodes []*Node)
	walk = func(nodes []*Node) {
		for _, n := range nodes {
			if n.Ref != "" {
				// The name goes into results and errors: cut as rendered.
				recs = append(recs, refs.Record{Ref: n.Ref, Role: n.Role, Name: Clip(n.Name, MaxText), Tag: n.Tag,
					Doc: d.id, URL: url, MainFrame: main})
			}
			if n.Frame {
				if depth+1 > maxFrameDepth {
					n.FrameError = fmt.Sprintf("frames nested deeper than %d are not expanded", maxFrameDepth)
				} else {
					next, recs = e.expandFrame(d, n, next, depth, recs, cut)
				}
				continue
			}
			walk(n.Children)
		}
	}
	walk(res.Tree)
	return res.Tree, next, recs, nil
}

// withTimeout runs f, giving up after d. Playwright calls take no context,
// so a page whose main thread never yields would otherwise hang the caller;
// the abandoned call finishes (or fails) on its own later.
func withTimeout(d time.Duration, f func() (any, error)) (any, error) {
	type out struct {
		v   any
		err error
	}
	ch := make(chan out, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- out{err: fmt.Errorf("internal error in a browser call: %v", p)}
			}
		}()
		v, err := f()
		ch <- out{v, err}
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case o := <-ch:
		return o.v, o.err
	case <-t.C:
		return nil, fmt.Errorf("%w (no answer within %s)", ErrPageBusy, d)
	}
}

// expandFrame reads the child frame of iframe node n inline. A failure is
// recorded on the node; it never fails the whole snapshot.
func (e *Engine) expandFrame(parent *doc, n *Node, next, depth int, recs []refs.Record, cut *bool) (int, []refs.Record) {
	type out struct {
		tree []*Node
		next int
		recs []refs.Record
		url  string
		err  error
	}
	ch := make(chan out, 1)
	urlCh := make(chan string, 1) // the child's URL, known before its content
	frameCh := make(chan playwright.Frame, 1)
	go func() {
		// A panic here would kill the server: no handler's recover covers
		// this goroutine.
		defer func() {
			if p := recover(); p != nil {
				ch <- out{err: fmt.Errorf("internal error reading the frame: %v", p)}
			}
		}()
		child, cached, err := e.childFrame(parent, n.Ref)
		if err != nil {
			ch <- out{err: err}
			return
		}
		urlCh <- child.URL()
		frameCh <- child
		if e.BeforeFrame != nil {
			e.BeforeFrame(child.URL())
		}
		childCut := false
		tree, nx, rs, err := e.captureFrame(child, next, depth+1, false, "", &childCut)
		if err != nil && cached && !errors.Is(err, ErrPageBusy) {
			// The frame the last snapshot found may have left just now,
			// before its detach reached us: ask the page for the iframe's
			// frame again.
			e.dropChildFrame(parent, n.Ref)
			if fresh, _, ferr := e.childFrame(parent, n.Ref); ferr == nil && fresh != child {
				child = fresh
				tree, nx, rs, err = e.captureFrame(child, next, depth+1, false, "", &childCut)
			}
		}
		if err == nil {
			e.mu.Lock()
			if d := e.current[child]; d != nil {
				d.up, d.upRef = parent, n.Ref
			}
			e.mu.Unlock()
		}
		if childCut {
			tree = append(tree, &Node{Role: "text", Text: "… (this frame's snapshot was cut: it is too large to read in time)"})
		}
		ch <- out{tree, nx, rs, child.URL(), err}
	}()
	timer := time.NewTimer(e.FrameTimeout)
	defer timer.Stop()
	select {
	case o := <-ch:
		n.FrameURL = o.url
		if o.err == nil && strings.HasPrefix(o.url, "chrome-error://") {
			o.err = errBlocked
		}
		if o.err != nil {
			n.FrameError = shortReason(o.err)
			e.record(n, o.err)
			if errors.Is(o.err, ErrPageBusy) {
				// As below: the walk given up on may have handed out numbers.
				select {
				case f := <-frameCh:
					e.poison(f)
				default:
				}
			}
			return next, recs
		}
		n.Children = o.tree
		return o.next, append(recs, o.recs...)
	case <-timer.C:
		// The abandoned read may still assign refs in the child frame's
		// bridge; those numbers are skipped, never reused.
		n.FrameError = fmt.Sprintf("the frame did not answer within %s", e.FrameTimeout)
		select {
		case n.FrameURL = <-urlCh:
		default:
		}
		e.record(n, ErrPageBusy)
		select {
		case f := <-frameCh:
			e.poison(f)
			return next, recs
		default:
			// The child frame was not even found yet: its read can assign
			// no ref, but an install may still land; skip a block of
			// numbers to be safe.
			return next + 10000, recs
		}
	}
}

// childFrame returns the frame of the iframe of ref in parent: the one the
// last snapshot found while it is still attached (a frame keeps its Frame
// through its navigations; an iframe moved or replaced gets a new one),
// else the one the page gives, which is kept for the next snapshot.
// Asking the page takes three round trips, more than a frame's walk.
func (e *Engine) childFrame(parent *doc, ref string) (f playwright.Frame, cached bool, err error) {
	e.mu.Lock()
	f = parent.frames[ref]
	e.mu.Unlock()
	if f != nil && !f.IsDetached() {
		return f, true, nil
	}
	if f, err = contentFrame(parent, ref); err != nil {
		return nil, false, err
	}
	e.mu.Lock()
	e.frameLookups++
	if parent.frames == nil {
		parent.frames = map[string]playwright.Frame{}
	}
	parent.frames[ref] = f
	e.mu.Unlock()
	return f, false, nil
}

// dropChildFrame forgets the frame childFrame kept for ref in parent.
func (e *Engine) dropChildFrame(parent *doc, ref string) {
	e.mu.Lock()
	delete(parent.frames, ref)
	e.mu.Unlock()
}

// errBlocked stands for a frame that shows Chromium's error page: its load
// was blocked (by the origin policy, or by the site) or failed.
var errBlocked = errors.New("its page was blocked or failed to load")

// errInject wraps a failure to install the bridge in a frame.
var errInject = errors.New("the snapshot script could not run in the frame")

// record puts a child frame's failure in the log with its facts; what it
// means is decided later, where there is context.
func (e *Engine) record(n *Node, err error) {
	if e.Log == nil {
		return
	}
	en := entryFor(err)
	en.FrameURL, en.FrameName, en.Ref, en.Doc = n.FrameURL, n.Name, n.Ref, int(e.mainDoc)
	e.Log.Record(en)
}

// recordMain puts a failure to read the page's main document in the log.
func (e *Engine) recordMain(frame playwright.Frame, err error) {
	if e.Log == nil {
		return
	}
	en := entryFor(err)
	en.MainFrame, en.FrameURL = true, frame.URL()
	e.Log.Record(en)
}

// errNothingRead stands for a walk that ran out of time before it read a
// single node.
var errNothingRead = errors.New("the walk ran out of time before reading anything")

// entryFor classifies a frame's failure: kind, reason and detail.
func entryFor(err error) failurelog.Entry {
	en := failurelog.Entry{Kind: failurelog.FrameExpansion, Reason: failurelog.ReasonUnknown, Detail: shortReason(err)}
	low := strings.ToLower(err.Error())
	switch {
	case errors.Is(err, ErrPageBusy):
		en.Kind, en.Reason, en.Detail = failurelog.FrameTimeout, failurelog.ReasonTimeout, ""
	case errors.Is(err, errNothingRead):
		en.Kind, en.Reason, en.Detail = failurelog.FrameTimeout, failurelog.ReasonTimeout, err.Error()
	case errors.Is(err, errBlocked):
		en.Reason, en.Detail = failurelog.ReasonBlocked, ""
	case strings.Contains(low, "detached"), strings.Contains(low, "left the page"), contextGone(err),
		strings.Contains(low, "target closed"), strings.Contains(low, "has been closed"):
		en.Kind, en.Reason, en.Detail = failurelog.FrameDetached, failurelog.ReasonDetached, ""
	case errors.Is(err, errInject):
		en.Kind = failurelog.FrameInjection
		if strings.Contains(low, "sandbox") {
			en.Reason = failurelog.ReasonSandboxed
		}
	case strings.Contains(low, "crash"):
		en.Reason = failurelog.ReasonCrashed
	}
	return en
}

// elementOf returns the element of ref in d's document, or nil when the
// bridge no longer has it connected. It evaluates through the frame because
// playwright-go's JSHandle.EvaluateHandle panics on element results.
func elementOf(d *doc, ref string) (playwright.ElementHandle, error) {
	h, err := d.frame.EvaluateHandle(`({b, ref}) => b.element(ref)`, map[string]any{"b": d.handle, "ref": ref})
	if err != nil {
		return nil, err
	}
	if h == nil {
		return nil, nil
	}
	el := h.AsElement()
	if el == nil {
		h.Dispose() // a handle of null
		return nil, nil
	}
	return el, nil
}

func contentFrame(parent *doc, ref string) (playwright.Frame, error) {
	el, err := elementOf(parent, ref)
	if err != nil {
		return nil, err
	}
	if el == nil {
		return nil, errors.New("the iframe left the page")
	}
	defer el.Dispose()
	f, err := el.ContentFrame()
	if err != nil {
		return nil, err
	}
	if f == nil {
		return nil, errors.New("the iframe has no document")
	}
	return f, nil
}

// call runs f against frame's current bridge, installing it first if the
// frame has none or its document changed.
func (e *Engine) call(frame playwright.Frame, main bool, f func(*doc) error) (*doc, error) {
	for attempt := 0; ; attempt++ {
		d, err := e.bridge(frame, main)
		if err != nil {
			return nil, err
		}
		err = f(d)
		if err == nil {
			return d, nil
		}
		if !contextGone(err) || attempt >= 2 {
			return nil, err
		}
		e.forget(d)
	}
}

// InitScript returns the script to add to the role's browser context. It
// builds the bridge at document start, before any page script runs, so the
// built-ins it captures are the real ones even on a page that replaces them.
// The bridge is left, frozen, on a non-enumerable property of the document
// with an unguessable name. Not of window: a window that leaves its initial
// about:blank for a same-origin page (a popup, an iframe) keeps its Window
// object, so a window property would still hold the blank document's
// bridge. Frames that predate the script get the bridge injected later.
// Built at document start, the bridge also sees the closed shadow roots the
// page attaches (see bridge.js); a bridge injected later does not.
func (e *Engine) InitScript() string {
	return "(() => { try { Object.defineProperty(document, " + strconv.Quote(e.key) +
		", { value: Object.freeze((" + bridgeSource + ")(true)), enumerable: false, configurable: false, writable: false }); } catch (e) {} })();"
}

func (e *Engine) bridge(frame playwright.Frame, main bool) (*doc, error) {
	e.mu.Lock()
	d := e.current[frame]
	gen, poisoned := e.poisoned[frame]
	e.mu.Unlock()
	if d != nil {
		return d, nil
	}
	// Adopt the bridge the init script left; frames that predate the script
	// get one now (Playwright's evaluation, which no page CSP blocks).
	wait := e.WalkBudget + e.AnswerGrace
	if main && !e.deadline.IsZero() {
		// A child frame has its own time (FrameTimeout).
		wait = max(min(wait, time.Until(e.deadline)-e.AnswerGrace/2), 100*time.Millisecond)
	}
	v, err := withTimeout(wait, func() (any, error) {
		// No page built-in is used to look: a frame may have replaced them
		// (even Function.prototype.call), and the property itself cannot be
		// replaced, being non-writable and non-configurable.
		if !poisoned {
			if has, err := frame.Evaluate(`k => typeof document[k] === 'object'`, e.key); err == nil && has == true {
				return frame.EvaluateHandle(`k => document[k]`, e.key)
			}
		}
		return frame.EvaluateHandle(bridgeSource)
	})
	if err != nil && !errors.Is(err, ErrPageBusy) && !contextGone(err) && !frameGone(err) {
		return nil, fmt.Errorf("%w: %w", errInject, err)
	}
	if err != nil {
		return nil, err
	}
	h, ok := v.(playwright.JSHandle)
	if !ok || h == nil {
		return nil, fmt.Errorf("%w: the frame returned no bridge", errInject)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.nextDoc++
	d = &doc{id: e.nextDoc, frame: frame, handle: h, main: main}
	e.docs[d.id] = d
	// An install that a timeout abandoned meanwhile must not become the
	// frame's bridge: its walk may still hand out numbers.
	if g, p := e.poisoned[frame]; !p || !poisoned || g == gen {
		e.current[frame] = d
	}
	return d, nil
}

// poison sets aside the frame's bridge after a read of it was abandoned:
// that instance may still assign ref numbers that later go to other
// elements, so it is never used again, and the frame gets a fresh instance.
func (e *Engine) poison(frame playwright.Frame) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if d := e.current[frame]; d != nil {
		d.setAside = true
	}
	delete(e.current, frame)
	e.poisoned[frame]++
}

// forget drops d as its frame's current bridge: its document is gone, and
// so is the document of every bridge the frame had before it.
func (e *Engine) forget(d *doc) {
	e.mu.Lock()
	if e.current[d.frame] == d {
		delete(e.current, d.frame)
	}
	var dead []*doc
	for _, o := range e.docs {
		if o.frame == d.frame && o.id <= d.id && !o.gone {
			dead = append(dead, o)
		}
	}
	e.markGone(dead)
	e.mu.Unlock()
	disposeAll(dead)
}

// sweep marks gone the documents of frames that were detached (an iframe
// removed, or its parent navigated): nothing reads them again to find out.
func (e *Engine) sweep() {
	e.mu.Lock()
	var dead []*doc
	for _, d := range e.docs {
		if !d.gone && d.frame.IsDetached() {
			dead = append(dead, d)
			delete(e.current, d.frame)
			delete(e.poisoned, d.frame)
		}
	}
	e.markGone(dead)
	e.mu.Unlock()
	disposeAll(dead)
}

// markGone marks docs gone, oldest first. Call with mu held.
func (e *Engine) markGone(docs []*doc) {
	slices.SortFunc(docs, func(a, b *doc) int { return cmp.Compare(a.id, b.id) })
	for _, d := range docs {
		d.gone = true
		e.gone = append(e.gone, d.id)
	}
}

// disposeAll disposes the bridge handles of docs whose documents are gone:
// the driver would otherwise keep them as long as their frame lives.
func disposeAll(docs []*doc) {
	for _, d := range docs {
		d.handle.Dispose()
	}
}

// compact forgets all but the last keepGone gone documents, here and in
// reg: a ref of one of those is then only known to be stale (refs.Drop).
func (e *Engine) compact(reg *refs.Registry) {
	e.mu.Lock()
	n := len(e.gone) - keepGone
	if n <= 0 {
		e.mu.Unlock()
		return
	}
	drop := slices.Clone(e.gone[:n])
	e.gone = slices.Delete(e.gone, 0, n)
	for _, id := range drop {
		delete(e.docs, id)
	}
	e.mu.Unlock()
	reg.Drop(drop...)
}

// Release disposes the element handles Resolve returned since the last
// call. Call it once the caller is done with them (at the end of a tool
// call): until then the driver keeps each one, and Chromium its element.
func (e *Engine) Release() {
	e.mu.Lock()
	handed := e.handed
	e.handed = nil
	e.mu.Unlock()
	for _, h := range handed {
		h.Dispose()
	}
}

// ForgetPage forgets the bridges of page's frames (the page crashed or
// closed); the role's other pages keep theirs, and their refs stay good.
// Their documents count as gone, so compact drops their records in time.
func (e *Engine) ForgetPage(page playwright.Page) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.watched, page)
	delete(e.baselines, page)
	delete(e.behind, page)
	var dead []*doc
	for id, d := range e.docs {
		if d.frame.Page() == page {
			if !d.gone {
				dead = append(dead, d)
			}
			delete(e.docs, id)
			delete(e.current, d.frame)
			delete(e.poisoned, d.frame)
		}
	}
	e.markGone(dead)
}

// Reset forgets every bridge, for when the role's pages are closed.
func (e *Engine) Reset() {
	e.mu.Lock()
	defer e.mu.Unlock()
	var dead []*doc
	for _, d := range e.docs {
		if !d.gone {
			dead = append(dead, d)
		}
	}
	e.markGone(dead)
	e.current = map[playwright.Frame]*doc{}
	e.docs = map[refs.DocID]*doc{}
	e.watched = map[playwright.Page][]refs.DocID{}
	e.baselines = map[playwright.Page]*Snapshot{}
	e.poisoned = map[playwright.Frame]int{}
	e.handed = nil // their page is closed, and with it the handles
}

// Resolve returns the element a recorded ref points to, or a typed error
// with the real reason it does not: its frame detached, its document
// navigated away, or the element left the DOM.
func (e *Engine) Resolve(rec refs.Record) (playwright.ElementHandle, error) {
	e.mu.Lock()
	d := e.docs[rec.Doc]
	cur := (*doc)(nil)
	if d != nil {
		cur = e.current[d.frame]
	}
	e.mu.Unlock()
	base := llmerr.Error{Ref: rec.Ref, Element: rec.Element(), URL: rec.URL,
		Actions: []llmerr.Action{llmerr.Call("browser_snapshot", "get fresh refs for the page as it is now")}}
	if d == nil {
		le := base
		le.Code = llmerr.StaleRef
		le.Message = fmt.Sprintf("Ref %s belongs to a page that is no longer open.", rec.Ref)
		le.Cause = "the browser or its page was closed after this ref was issued"
		return nil, &le
	}
	if d.frame.IsDetached() {
		le := base
		le.Code = llmerr.FrameDetached
		le.FrameURL = rec.URL
		le.URL = ""
		le.Message = fmt.Sprintf("Ref %s was inside a frame that has been removed from the page.", rec.Ref)
		le.Cause = "the iframe holding the element was removed or replaced"
		return nil, &le
	}
	if d.gone || (cur != d && !d.setAside) {
		return nil, navigatedError(base, rec, d.frame.URL())
	}
	// A page whose main thread never yields must not hold the call: the
	// lookup gets the same bound as a snapshot's answer.
	v, err := withTimeout(e.WalkBudget+e.AnswerGrace, func() (any, error) { return elementOf(d, rec.Ref) })
	el, _ := v.(playwright.ElementHandle)
	if err != nil {
		if contextGone(err) {
			e.forget(d)
			return nil, navigatedError(base, rec, d.frame.URL())
		}
		return nil, err
	}
	if el != nil {
		e.mu.Lock()
		e.handed = append(e.handed, el)
		e.mu.Unlock()
		return el, nil
	}
	le := base
	le.Code = llmerr.StaleRef
	le.Message = fmt.Sprintf("Ref %s points to an element that is no longer on the page.", rec.Ref)
	le.Cause = fmt.Sprintf("the %s left the DOM after snapshot %d (the page re-rendered or removed it)", rec.Element(), rec.Snapshot)
	le.Actions = []llmerr.Action{
		llmerr.Call("browser_snapshot", fmt.Sprintf("find the %s again and use its new ref", rec.Element())),
	}
	if now := d.frame.URL(); now != rec.URL && rec.URL != "" {
		// Same document, another address: the page's own script changed
		// its route (history.pushState, a hash change) and swapped the view.
		le.URLAfter = now
		le.Cause = fmt.Sprintf("the page changed its view after snapshot %d: its address went from %s to %s without loading a new document (a route change of the page's own script), and the %s left the DOM with the old view",
			rec.Snapshot, rec.URL, now, rec.Element())
		le.Details = map[string]any{"routeChange": true}
	}
	return nil, &le
}

// PageOf returns the page that showed the document rec was issued in, or
// nil when the engine no longer knows it.
func (e *Engine) PageOf(rec refs.Record) playwright.Page {
	e.mu.Lock()
	d := e.docs[rec.Doc]
	e.mu.Unlock()
	if d == nil {
		return nil
	}
	return d.frame.Page()
}

// Cover describes what covers an element: the overlay and the refs of what
// in it can be acted on.
type Cover struct {
	Tag  string `json:"tag"`
	ID   string `json:"id"`
	Role string `json:"role"`
	Name string `json:"name"`
	// Live is set for a live region (a toast, a snackbar): it goes by
	// itself. Text is its first line of text then.
	Live bool   `json:"live"`
	Text string `json:"text"`
	Refs []struct {
		Ref  string `json:"ref"`
		Role string `json:"role"`
		Name string `json:"name"`
	} `json:"refs"`
	// Controls are the buttons and links inside it that no snapshot has
	// seen yet, so have no ref: role and name only.
	Controls []struct {
		Role string `json:"role"`
		Name string `json:"name"`
	} `json:"controls"`
}

// Cover returns what covers the element of rec at its centre, or nil.
func (e *Engine) Cover(rec refs.Record) (*Cover, error) {
	var c Cover
	if ok, err := e.askRef(rec, "cover", &c); !ok || err != nil {
		return nil, err
	}
	return &c, nil
}

// askRef calls the bridge's method fn on the element of rec, in the
// document the ref was issued in, and decodes its JSON answer into out. It
// reports false, with no error, when that document is gone or fn answered
// nothing.
func (e *Engine) askRef(rec refs.Record, fn string, out any) (bool, error) {
	e.mu.Lock()
	d := e.current[e.docs[rec.Doc].frameOrNil()]
	e.mu.Unlock()
	if d == nil || d.id != rec.Doc {
		return false, nil
	}
	v, err := withTimeout(e.AnswerGrace+time.Second, func() (any, error) {
		return d.frame.Evaluate(`({b, ref, fn}) => { const r = b[fn](ref); return r ? JSON.stringify(r) : ''; }`,
			map[string]any{"b": d.handle, "ref": rec.Ref, "fn": fn})
	})
	if err != nil {
		return false, err
	}
	s, _ := v.(string)
	if s == "" {
		return false, nil
	}
	return true, json.Unmarshal([]byte(s), out)
}

// Field is a form field that shows as invalid after its form's submit
// control was pressed: its ref (empty when no snapshot has seen it), role,
// name, input type (or select, textarea), the message the page ties to it,
// and what can be chosen in it.
type Field struct {
	Ref     string   `json:"ref"`
	Role    string   `json:"role"`
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Message string   `json:"message"`
	Checked bool     `json:"checked"`
	Options []Option `json:"options"`
	Radios  []Radio  `json:"radios"`
}

// Option is one option of a native select.
type Option struct {
	Label    string `json:"label"`
	Value    string `json:"value"`
	Disabled bool   `json:"disabled"`
	Selected bool   `json:"selected"`
}

// Radio is one radio button of a group.
type Radio struct {
	Ref     string `json:"ref"`
	Name    string `json:"name"`
	Checked bool   `json:"checked"`
}

// Invalid returns the invalid fields of the form whose submit control is
// the element of rec, or nil when it is no form's submit control or its
// document is gone.
func (e *Engine) Invalid(rec refs.Record) ([]Field, error) {
	var fs []Field
	if ok, err := e.askRef(rec, "invalid", &fs); !ok || err != nil {
		return nil, err
	}
	return fs, nil
}

// Control is an element by its ref, role and name.
type Control struct {
	Ref  string `json:"ref"`
	Role string `json:"role"`
	Name string `json:"name"`
}

// Submitter returns the control that submits the form of the field of rec
// (the form's default button), or nil when the field is in no form, the
// form has no submit button, or that button is disabled, hidden or has no
// ref yet. A form with no submit control at all (its buttons act through
// script) gives its plain buttons instead, at most three, those shown and
// enabled that have refs.
func (e *Engine) Submitter(rec refs.Record) (*Control, []Control, error) {
	var c struct {
		Control
		Buttons []Control `json:"buttons"`
	}
	if ok, err := e.askRef(rec, "submitter", &c); !ok || err != nil {
		return nil, nil, err
	}
	if c.Ref == "" {
		return nil, c.Buttons, nil
	}
	return &c.Control, nil, nil
}

// Performance returns the main document's timings as the bridge reads them
// from the browser's performance entries (bridge.js, perf), as JSON.
func (e *Engine) Performance(page playwright.Page) (string, error) {
	var out string
	_, err := e.call(page.MainFrame(), true, func(d *doc) error {
		v, err := withTimeout(e.AnswerGrace+2*time.Second, func() (any, error) {
			return d.frame.Evaluate(`({b}) => b.perf()`, map[string]any{"b": d.handle})
		})
		if err != nil {
			return err
		}
		out, _ = v.(string)
		return nil
	})
	return out, err
}

func (d *doc) frameOrNil() playwright.Frame {
	if d == nil {
		return nil
	}
	return d.frame
}

func navigatedError(base llmerr.Error, rec refs.Record, now string) error {
	e := base
	e.Code = llmerr.StaleRef
	e.URLAfter = now
	e.Message = fmt.Sprintf("Ref %s was issued on a document that has since been replaced.", rec.Ref)
	if now == rec.URL {
		e.Cause = fmt.Sprintf("the page reloaded (%s) after this ref was issued", now)
	} else {
		e.Cause = fmt.Sprintf("the page navigated from %s to %s after this ref was issued", rec.URL, now)
	}
	return &e
}

// frameGone reports whether err means the frame itself went away (removed
// from its page, or its page closed): not a failure of the script.
func frameGone(err error) bool {
	low := strings.ToLower(err.Error())
	return strings.Contains(low, "detached") || strings.Contains(low, "target closed") || strings.Contains(low, "has been closed")
}

// contextGone reports whether err means the document behind a handle is gone.
func contextGone(err error) bool {
	s := strings.ToLower(err.Error())
	for _, m := range []string{"execution context was destroyed", "cannot find context",
		"jshandle is disposed", "context was destroyed", "most likely because of a navigation",
		"can be evaluated only in the context", "different document"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

func shortReason(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = strings.ReplaceAll(s, "playwright: ", "")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:160]) + "…"
	}
	return s
}
