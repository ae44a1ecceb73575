package browser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrace-dev/retrace/llmerr"
)

func TestFindDriverSaysHowToFix(t *testing.T) {
	empty := t.TempDir()
	_, _, err := FindDriver(empty)
	e, ok := llmerr.As(err)
	if !ok || e.Code != llmerr.SetupRequired {
		t.Fatalf("FindDriver(empty) = %v, want SETUP_REQUIRED", err)
	}
	if !strings.Contains(e.Text(llmerr.StyleRecovery), "retrace install") {
		t.Errorf("the error does not say to run retrace install:\n%s", e.Text(llmerr.StyleRecovery))
	}

	// A driver of the wrong version is named as such.
	wrong := t.TempDir()
	os.MkdirAll(filepath.Join(wrong, "package"), 0o755)
	os.WriteFile(filepath.Join(wrong, "package", "cli.js"), nil, 0o644)
	os.WriteFile(filepath.Join(wrong, "package", "package.json"), []byte(`{"version":"1.40.0"}`), 0o644)
	_, _, err = FindDriver(wrong)
	if e, _ := llmerr.As(err); e == nil || !strings.Contains(e.Cause, "version 1.40.0") {
		t.Errorf("wrong version not reported: %v", err)
	}
}

func TestFindChromiumExplicitPath(t *testing.T) {
	_, err := FindChromium("/nonexistent/chromium")
	e, ok := llmerr.As(err)
	if !ok || e.Code != llmerr.SetupRequired || !strings.Contains(e.Text(llmerr.StyleRecovery), "apt-get install chromium") {
		t.Fatalf("FindChromium(bad) = %v", err)
	}
	t.Setenv("RETRACE_EXECUTABLE_PATH", "/nonexistent/too")
	if _, err := FindChromium(""); err == nil {
		t.Error("a bad RETRACE_EXECUTABLE_PATH was ignored")
	}
}

func TestLocateFindsInstalledParts(t *testing.T) {
	p, err := Locate("", "")
	if err != nil {
		t.Fatalf("make setup should have installed the driver and Chromium: %v", err)
	}
	for _, f := range []string{filepath.Join(p.DriverDir, "package", "cli.js"), p.Node, p.Chromium} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestVersionFastPathIsIdempotent(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "package"), 0o755)
	os.WriteFile(filepath.Join(dir, "package", "cli.js"), []byte("playwright's cli"), 0o644)
	for i := 0; i < 2; i++ {
		if err := addVersionFastPath(dir); err != nil {
			t.Fatal(err)
		}
	}
	orig, _ := os.ReadFile(filepath.Join(dir, "package", "cli-playwright.js"))
	shim, _ := os.ReadFile(filepath.Join(dir, "package", "cli.js"))
	if string(orig) != "playwright's cli" || !strings.Contains(string(shim), "cli-playwright.js") {
		t.Errorf("after two installs: cli-playwright.js=%q cli.js=%q", orig, shim)
	}
}

func TestSandboxStaysOnUnlessRoot(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		euid      int
		noSandbox bool
		want      bool
	}{{1000, false, true}, {1000, true, false}, {0, false, false}, {0, true, false}} {
		got := sandboxed(tc.euid, tc.noSandbox)
		if got != tc.want {
			t.Errorf("sandboxed(%d, %v) = %v, want %v", tc.euid, tc.noSandbox, got, tc.want)
		}
		args := strings.Join(launchArgs(got, nil), " ")
		if strings.Contains(args, "--no-sandbox") == got {
			t.Errorf("euid %d, noSandbox %v: args %q", tc.euid, tc.noSandbox, args)
		}
	}
}

// CheckDevice knows the driver's device list, and names close devices
// for a wrong name.
func TestCheckDevice(t *testing.T) {
	if _, _, err := FindDriver(""); err != nil {
		t.Skipf("no driver: %v", err)
	}
	if err := CheckDevice("", "iPhone 15"); err != nil {
		t.Errorf("iPhone 15: %v", err)
	}
	err := CheckDevice("", "Pixel 99")
	if err == nil || !strings.Contains(err.Error(), "Pixel 7") {
		t.Errorf("Pixel 99: want an error naming Pixel 7, got %v", err)
	}
}
