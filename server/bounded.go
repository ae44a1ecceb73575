package server

import "time"

// bounded runs f and waits at most d for it. Playwright calls take no
// context, so a page whose main thread never yields would hold the caller
// forever; an abandoned call finishes (or fails) on its own later. ok is
// false when d ran out.
func bounded[T any](d time.Duration, f func() T) (v T, ok bool) {
	return boundedOr(d, nil, f)
}

// goneGrace is how long a call whose page went away gets to fail on its own.
const goneGrace = 500 * time.Millisecond

// boundedOr is bounded that also stops waiting when stop closes (the page
// crashed or closed: a call on it may never answer).
func boundedOr[T any](d time.Duration, stop <-chan struct{}, f func() T) (v T, ok bool) {
	ch := make(chan T, 1)
	go func() { ch <- f() }()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case v = <-ch:
		return v, true
	case <-timer.C:
		return v, false
	case <-stop:
		// The call's own error says best what happened (a browser that
		// died, a page closed); a call on a crashed page may never return.
		select {
		case v = <-ch:
			return v, true
		case <-time.After(goneGrace):
			return v, false
		}
	}
}
