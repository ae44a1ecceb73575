package main

import (
	"regexp"
	"strconv"
	"strings"
)

// findTarget returns the ref of the element with this role and accessible
// name in a result's text, read in the line format both servers share
// (`- role "name" [state] [ref=e12]`, also inline in a table row or after
// `changed:`), or "" when the text does not show it. Refs listed under a
// `removed from` block are gone from the page, wherever else they appear
// (the line that names the element an action clicked, for one); of the
// others the last is taken, as later lines of a result are newer.
func findTarget(text, role, name string) string {
	dead := removedRefs(text)
	re := regexp.MustCompile(regexp.QuoteMeta(role+" "+strconv.Quote(name)) + `((?: \[[^\]]*\])*)`)
	ref := ""
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		r := refIn(m[1])
		if r != "" && !dead[r] {
			ref = r
		}
	}
	return ref
}

var refAttrRe = regexp.MustCompile(`\[ref=([a-z0-9]+)\]`)

// refIn returns the ref among a line's bracketed attributes.
func refIn(attrs string) string {
	if m := refAttrRe.FindStringSubmatch(attrs); m != nil {
		return m[1]
	}
	return ""
}

// removedRefs collects the refs of the lines indented under a line that
// starts a removed block (`- removed from main:`).
func removedRefs(text string) map[string]bool {
	dead := map[string]bool{}
	in, depth := false, 0
	for _, line := range strings.Split(text, "\n") {
		body := strings.TrimLeft(line, " ")
		indent := len(line) - len(body)
		if in && indent <= depth {
			in = false
		}
		if in {
			for _, m := range refAttrRe.FindAllStringSubmatch(line, -1) {
				dead[m[1]] = true
			}
			continue
		}
		if strings.HasPrefix(body, "- removed from ") {
			in, depth = true, indent
		}
	}
	return dead
}
