package snapshot

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/fixture"
)

// Shared by the browser tests of the package: one fixture server and one
// Chromium. Each test takes its own context from browsers.
var (
	fx       *fixture.Server
	browsers *browser.Manager
)

func TestMain(m *testing.M) {
	var err error
	fx, err = fixture.Start("../testdata/pages")
	if err != nil {
		fmt.Fprintln(os.Stderr, "fixture:", err)
		os.Exit(1)
	}
	browsers = browser.NewManager(browser.Options{
		Headless:          true,
		ActionTimeout:     5 * time.Second,
		NavigationTimeout: 15 * time.Second,
	})
	code := m.Run()
	browsers.Close()
	fx.Close()
	os.Exit(code)
}

// testPage opens a page in a fresh context of the shared browser, with
// init as the context's init script when it is not empty.
func testPage(t testing.TB, init string) playwright.Page {
	t.Helper()
	ctx, err := browsers.NewContext(browser.ContextOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { browsers.ReleaseContext(ctx) })
	if init != "" {
		if err := ctx.AddInitScript(playwright.Script{Content: &init}); err != nil {
			t.Fatal(err)
		}
	}
	page, err := ctx.NewPage()
	if err != nil {
		t.Fatal(err)
	}
	return page
}
