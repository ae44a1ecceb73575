// Package browser is everything that touches playwright-go: finding the
// driver and Chromium, launching or connecting, one isolated context per role,
// pages and their events, actions on a resolved element, and waiting for the
// page to settle.
package browser

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/retrace-dev/retrace/llmerr"
)

// DriverVersion is the Playwright driver version playwright-go v0.5200.1
// speaks to.
const DriverVersion = "1.52.0"

// driverPackage is the npm package that is the driver.
const driverPackage = "playwright-core@" + DriverVersion

// Paths are the parts retrace needs on the machine.
type Paths struct {
	// DriverDir holds package/cli.js (the Playwright driver).
	DriverDir string
	// Node is the Node.js executable that runs the driver.
	Node string
	// Chromium is the browser executable.
	Chromium string
}

// DefaultDriverDir returns $RETRACE_DRIVER_DIR, or a directory under the
// user cache dir.
func DefaultDriverDir() string {
	if d := os.Getenv("RETRACE_DRIVER_DIR"); d != "" {
		return d
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "retrace", "playwright-driver-"+DriverVersion)
}

// chromiumCandidates are the places Chromium is looked for, in order.
func chromiumCandidates() []string {
	switch runtime.GOOS {
	case "darwin":
		return []string{
			"/Applications/Chromium.app/Contents/MacOS/Chromium",
			"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
		}
	}
	return []string{"/usr/bin/chromium", "/usr/bin/chromium-browser", "/snap/bin/chromium",
		"/usr/bin/google-chrome", "/usr/bin/google-chrome-stable"}
}

// FindChromium returns explicit if set, else $RETRACE_EXECUTABLE_PATH, else
// the first known path that exists. The error says how to install it.
func FindChromium(explicit string) (string, error) {
	for _, p := range []string{explicit, os.Getenv("RETRACE_EXECUTABLE_PATH")} {
		if p == "" {
			continue
		}
		if isExecutable(p) {
			return p, nil
		}
		return "", setupError("Chromium", fmt.Sprintf("the browser executable %s does not exist or is not executable", p),
			"fix --executable-path (or RETRACE_EXECUTABLE_PATH), or install Chromium: apt-get install chromium")
	}
	for _, p := range chromiumCandidates() {
		if isExecutable(p) {
			return p, nil
		}
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", setupError("Chromium", "no Chromium was found at "+strings.Join(chromiumCandidates(), ", ")+" or on PATH",
		"install it (Debian/Ubuntu: apt-get install chromium), or pass --executable-path")
}

// FindDriver returns the driver directory and the node executable, checking
// that the driver there is the expected version.
func FindDriver(dir string) (driverDir, node string, err error) {
	if dir == "" {
		dir = DefaultDriverDir()
	}
	if v, verr := driverVersionAt(dir); verr != nil || v != DriverVersion {
		why := fmt.Sprintf("the Playwright driver %s is not installed in %s", DriverVersion, dir)
		if verr == nil {
			why = fmt.Sprintf("the driver in %s is version %s, retrace needs %s", dir, v, DriverVersion)
		}
		return "", "", setupError("the Playwright driver", why, "run: retrace install")
	}
	node, err = findNode(dir)
	if err != nil {
		return "", "", err
	}
	return dir, node, nil
}

// Locate finds the driver and Chromium.
func Locate(driverDir, executable string) (Paths, error) {
	dir, node, err := FindDriver(driverDir)
	if err != nil {
		return Paths{}, err
	}
	chromium, err := FindChromium(executable)
	if err != nil {
		return Paths{}, err
	}
	return Paths{DriverDir: dir, Node: node, Chromium: chromium}, nil
}

func findNode(driverDir string) (string, error) {
	if p := os.Getenv("PLAYWRIGHT_NODEJS_PATH"); p != "" && isExecutable(p) {
		return p, nil
	}
	if p := filepath.Join(driverDir, "node"); isExecutable(p) {
		return p, nil
	}
	if p, err := exec.LookPath("node"); err == nil {
		return p, nil
	}
	return "", setupError("Node.js", "Node.js, which runs the Playwright driver, is not installed",
		"install it (Debian/Ubuntu: apt-get install nodejs npm), then run: retrace install")
}

func driverVersionAt(dir string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, "package", "cli.js")); err != nil {
		return "", err
	}
	data, err := os.ReadFile(filepath.Join(dir, "package", "package.json"))
	if err != nil {
		return "", err
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return "", err
	}
	return pkg.Version, nil
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

func setupError(what, why, fix string) *llmerr.Error {
	return &llmerr.Error{
		Code:    llmerr.SetupRequired,
		Message: fmt.Sprintf("The browser cannot start: %s is missing.", what),
		Cause:   why,
		Note:    "A person must fix the machine: " + fix + ". Retrying will fail the same way until then.",
		Details: map[string]any{"missing": what, "fix": fix},
	}
}

// Install puts the Playwright driver into dir (idempotent) and checks for
// Chromium. Progress goes to w. It needs npm and the npm registry, nothing
// else: the driver is the npm package playwright-core, laid out so that
// dir/package/cli.js exists, with dir/node linked to the system Node.js.
func Install(ctx context.Context, dir string, w io.Writer) error {
	if dir == "" {
		dir = DefaultDriverDir()
	}
	if v, err := driverVersionAt(dir); err == nil && v == DriverVersion {
		fmt.Fprintf(w, "driver: Playwright %s already installed in %s\n", DriverVersion, dir)
	} else if err := installDriver(ctx, dir, w); err != nil {
		return err
	}
	if err := linkNode(dir, w); err != nil {
		return err
	}
	if err := addVersionFastPath(dir); err != nil {
		return err
	}
	p, err := FindChromium("")
	if err != nil {
		e, _ := llmerr.As(err)
		return fmt.Errorf("chromium: %s; %s", e.Cause, e.Details["fix"])
	}
	fmt.Fprintf(w, "chromium: %s\n", p)
	return nil
}

func installDriver(ctx context.Context, dir string, w io.Writer) error {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return errors.New("npm is not installed; install Node.js and npm (Debian/Ubuntu: apt-get install nodejs npm)")
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(dir), err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".retrace-driver-")
	if err != nil {
		return fmt.Errorf("create a temporary directory beside %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(w, "driver: fetching %s from the npm registry\n", driverPackage)
	cmd := exec.CommandContext(ctx, npm, "pack", "--silent", driverPackage, "--pack-destination", tmp)
	cmd.Stderr = w
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("npm pack %s: %w", driverPackage, err)
	}
	tgz := filepath.Join(tmp, strings.TrimSpace(lastLine(string(out))))
	stage := filepath.Join(tmp, "stage")
	if err := untar(tgz, stage); err != nil {
		return fmt.Errorf("unpack %s: %w", tgz, err)
	}
	if v, err := driverVersionAt(stage); err != nil || v != DriverVersion {
		return fmt.Errorf("unpacked driver in %s is not %s (%v)", stage, DriverVersion, err)
	}
	// Swap the finished directory in, so a half-written driver is never seen.
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.Rename(stage, dir); err != nil {
		return fmt.Errorf("move driver into %s: %w", dir, err)
	}
	fmt.Fprintf(w, "driver: installed Playwright %s in %s\n", DriverVersion, dir)
	return nil
}

// linkNode points dir/node at the system Node.js, which is where
// playwright-go looks for it.
func linkNode(dir string, w io.Writer) error {
	link := filepath.Join(dir, "node")
	if isExecutable(link) {
		return nil
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return errors.New("node is not installed; install Node.js (Debian/Ubuntu: apt-get install nodejs)")
	}
	node, _ = filepath.Abs(node)
	_ = os.Remove(link)
	if err := os.Symlink(node, link); err != nil {
		return fmt.Errorf("link %s to %s: %w", link, node, err)
	}
	fmt.Fprintf(w, "driver: using Node.js at %s\n", node)
	return nil
}

// versionShim answers `cli.js --version` without loading the driver.
// playwright-go runs that check before every start, and loading the whole
// driver for it cost about 300 ms of every cold start. Anything else goes to
// Playwright's own CLI, unchanged.
const versionShim = `#!/usr/bin/env node
// Installed by retrace: see browser/setup.go (versionShim).
if (process.argv.length === 3 && process.argv[2] === '--version') {
  process.stdout.write('Version ' + require('./package.json').version + '\n');
} else {
  require('./cli-playwright.js');
}
`

// addVersionFastPath moves Playwright's cli.js aside and puts the shim in
// its place. It is idempotent.
func addVersionFastPath(dir string) error {
	cli := filepath.Join(dir, "package", "cli.js")
	orig := filepath.Join(dir, "package", "cli-playwright.js")
	if _, err := os.Stat(orig); err != nil {
		if err := os.Rename(cli, orig); err != nil {
			return fmt.Errorf("driver: %w", err)
		}
	}
	return os.WriteFile(cli, []byte(versionShim), 0o644)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func untar(tgz, dest string) error {
	f, err := os.Open(tgz)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(h.Name)
		if strings.HasPrefix(name, "..") || filepath.IsAbs(name) {
			return fmt.Errorf("unsafe path %q in archive", h.Name)
		}
		target := filepath.Join(dest, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o755|0o644)
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, tr); err != nil {
				out.Close()
				return err
			}
			if err := out.Close(); err != nil {
				return err
			}
		}
	}
}
