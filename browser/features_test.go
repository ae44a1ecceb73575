package browser

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The features Playwright turns off stay off: Chromium reads only the last
// --disable-features switch, so retrace's list must repeat the driver's.
func TestDisabledFeaturesKeepPlaywrights(t *testing.T) {
	t.Parallel()
	dir, _, err := FindDriver("")
	if err != nil {
		t.Skipf("no driver: %v", err)
	}
	src, err := os.ReadFile(filepath.Join(dir, "package", "lib", "server", "chromium", "chromiumSwitches.js"))
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)const disabledFeatures = \[(.*?)\];`).FindSubmatch(src)
	if block == nil {
		t.Fatal("the driver's chromiumSwitches.js has no disabledFeatures list: see how it turns features off now")
	}
	var theirs []string
	for _, m := range regexp.MustCompile(`(?m)^\s*"([A-Za-z0-9]+)"`).FindAllSubmatch(block[1], -1) {
		theirs = append(theirs, string(m[1]))
	}
	if len(theirs) < 5 {
		t.Fatalf("read only %d features from the driver's list: %q", len(theirs), theirs)
	}
	for _, f := range theirs {
		if !slices.Contains(disabledFeatures, f) {
			t.Errorf("the driver turns off %s; disabledFeatures (manager.go) does not, and its switch replaces the driver's", f)
		}
	}
	if n := strings.Count(strings.Join(launchArgs(false, nil), " "), "--disable-features="); n != 1 {
		t.Errorf("launch args carry %d --disable-features switches, want 1", n)
	}
}

// A new context's window does not load the address bar's popup: two WebUI
// pages, in a renderer of their own, that cost more CPU than the page the
// agent uses.
func TestNoAddressBarPopup(t *testing.T) {
	if _, err := Locate("", ""); err != nil {
		t.Skipf("no driver or Chromium: %v", err)
	}
	m := NewManager(Options{Headless: true, DriverLog: testWriter{t}})
	defer m.Close()
	c, err := m.NewContext(ContextOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.ReleaseContext(c)
	page, err := c.NewPage()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := page.Goto("about:blank"); err != nil {
		t.Fatal(err)
	}
	cdp, err := c.Browser().NewBrowserCDPSession()
	if err != nil {
		t.Fatal(err)
	}
	// Loaded within a few hundred milliseconds of the window when on.
	seen := 0
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		v, err := cdp.Send("Target.getTargets", map[string]any{"filter": []map[string]any{{}}})
		if err != nil {
			t.Fatal(err)
		}
		infos, _ := v.(map[string]any)["targetInfos"].([]any)
		for _, x := range infos {
			info, _ := x.(map[string]any)
			if url, _ := info["url"].(string); strings.HasPrefix(url, "chrome://omnibox-popup") {
				t.Fatalf("the context's window loaded %s (%v)", url, info["type"])
			}
			if info["type"] == "page" {
				seen++
			}
		}
	}
	if seen == 0 {
		t.Fatal("Target.getTargets listed no page: the check sees nothing")
	}
}
