package benchpage

import (
	"context"
	"os/exec"
	"strings"
	"time"
)

// ChromiumVersion is the first line `path --version` prints, for the
// "measured on" line of a benchmark report.
func ChromiumVersion(path string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return "Chromium (version unknown)"
	}
	return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
}
