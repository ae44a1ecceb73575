package llmerr

import (
	"fmt"
	"strings"
)

// Markdown renders the catalogue as docs/errors.md: every code with its
// properties, when it is used, and an example exactly as a model sees it.
// A test keeps the file in step with the code.
func Markdown() string {
	var b strings.Builder
	b.WriteString("# Errors\n\n")
	b.WriteString("Generated from the catalogue in `llmerr/` by `go test ./llmerr -run TestErrorsDoc -update`; a test fails when this file and the code differ.\n\n")
	b.WriteString("Every failed tool call returns `isError: true` with two forms of the same error:\n\n")
	b.WriteString("- **text** for the model: a title, the facts (ref, element, URL, frame), `Cause:` (what the server saw), `Action Required:` with numbered steps, each the exact call to make, and, where retrying cannot help, a sentence that says so. With `--error-style plain` the text is only the one-line message, the baseline for measuring recovery.\n")
	b.WriteString("- **structuredContent** for programs: `{code, category, message, retryable, refsInvalidated, sessionValid, actions: [{tool, args, why}], details}`.\n\n")
	b.WriteString("`retryable`: the same call, unchanged, may succeed later. `refsInvalidated`: refs issued before should be treated as gone. `sessionValid`: the browser session can still be used.\n\n")
	b.WriteString("| code | category | retryable | refsInvalidated | sessionValid |\n| --- | --- | --- | --- | --- |\n")
	for _, c := range Codes() {
		e := Lookup(c)
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s | %s | %s | %s |\n", c, strings.ToLower(string(c)), e.Category, yes(e.Retryable), yes(e.RefsInvalidated), yes(e.SessionValid))
	}
	ex := Examples()
	for _, c := range Codes() {
		e := Lookup(c)
		fmt.Fprintf(&b, "\n## %s\n\n%s. %s\n\n", c, e.Title, e.About)
		if x, ok := ex[c]; ok {
			b.WriteString("Example, as the model reads it:\n\n```\n")
			b.WriteString(x.Text(StyleRecovery))
			b.WriteString("\n```\n\nPlain style: `")
			b.WriteString(x.Text(StylePlain))
			b.WriteString("`\n")
		}
	}
	return b.String()
}

func yes(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}
