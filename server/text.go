package server

// Small text helpers shared by the tool handlers.

import (
	"fmt"
	"strings"
	"time"

	"github.com/retrace-dev/retrace/llmerr"
)

// quoteAll writes each string quoted, comma-separated.
func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// oneLineCut puts s on one line and cuts it to n characters.
func oneLineCut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return s
}

// plural returns suffix unless n is 1.
func plural(n int, suffix string) string {
	if n == 1 {
		return ""
	}
	return suffix
}

// firstNonEmpty returns the first of ss that is not empty.
func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// ptr returns a pointer to v, for optional fields.
func ptr[T any](v T) *T { return &v }

// since is the time since t, rounded for a result line.
func since(t time.Time) string {
	return time.Since(t).Round(10 * time.Millisecond).String()
}

// given returns the string arguments, as name-value pairs, that are set.
func given(nameValues ...string) []llmerr.Arg {
	var args []llmerr.Arg
	for i := 0; i+1 < len(nameValues); i += 2 {
		if nameValues[i+1] != "" {
			args = append(args, llmerr.A(nameValues[i], nameValues[i+1]))
		}
	}
	return args
}
