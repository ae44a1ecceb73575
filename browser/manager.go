package browser

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/llmerr"
)

// Options configure how the browser is found and started.
type Options struct {
	// DriverDir and ExecutablePath override where the driver and Chromium
	// are looked for (see Locate).
	DriverDir      string
	ExecutablePath string
	// CDPEndpoint, when set, connects to a running Chromium instead of
	// launching one.
	CDPEndpoint string
	Headless    bool
	// Args are extra Chromium command-line arguments.
	Args []string
	// NoSandbox turns Chromium's sandbox off for a user who is not root
	// (as root it is always off: Chromium will not start with it).
	NoSandbox bool
	Viewport  *playwright.Size
	UserAgent string
	// ActionTimeout bounds element actions; NavigationTimeout bounds loads.
	ActionTimeout     time.Duration
	NavigationTimeout time.Duration
	// CloseWhenIdle closes Chromium when the last context is closed, so that
	// browser_close frees the memory; a shared test browser keeps it open.
	CloseWhenIdle bool
	// DriverLog receives the driver's stderr. Never stdout: in stdio mode
	// stdout carries JSON-RPC only.
	DriverLog io.Writer
	Logger    *slog.Logger
}

// baseArgs keep Chromium quiet on machines with a closed network.
var baseArgs = []string{
	"--disable-gpu", "--disable-background-networking",
	"--disable-component-update", "--disable-sync", "--no-first-run",
	"--disable-dev-shm-usage",
}

// sandboxed reports whether Chromium keeps its sandbox: always, unless the
// process runs as root (where Chromium refuses to start with it) or
// --no-sandbox asks otherwise.
func sandboxed(euid int, noSandbox bool) bool { return euid != 0 && !noSandbox }

// launchArgs are Chromium's flags for a launch.
func launchArgs(sandbox bool, extra []string) []string {
	args := append([]string{}, baseArgs...)
	if !sandbox {
		args = append(args, "--no-sandbox")
	}
	return append(args, extra...)
}

// Manager owns the Playwright driver and one Chromium, started lazily and
// shared by every context it hands out. It is safe for concurrent use.
type Manager struct {
	opts Options

	mu       sync.Mutex
	pw       *playwright.Playwright
	browser  playwright.Browser
	contexts int
}

// NewManager returns a manager; nothing starts until the first context.
func NewManager(opts Options) *Manager {
	if opts.ActionTimeout == 0 {
		opts.ActionTimeout = 5 * time.Second
	}
	if opts.NavigationTimeout == 0 {
		opts.NavigationTimeout = 60 * time.Second
	}
	if opts.DriverLog == nil {
		opts.DriverLog = os.Stderr
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(opts.DriverLog, nil))
	}
	return &Manager{opts: opts}
}

// Options returns the manager's options.
func (m *Manager) Options() Options { return m.opts }

// ContextOptions are what a role's context needs beyond the manager's
// options.
type ContextOptions struct {
	// StorageState is the auth file to load, if any.
	StorageState string
	// Proxy, when set, is the proxy every request of the context goes
	// through, loopback included.
	Proxy string
	// BlockServiceWorkers keeps pages from registering service workers,
	// whose fetches a request route would not see.
	BlockServiceWorkers bool
}

// NewContext returns a fresh, isolated browser context, starting the driver
// and Chromium first if needed.
func (m *Manager) NewContext(co ContextOptions) (playwright.BrowserContext, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.startLocked(); err != nil {
		return nil, err
	}
	opts := playwright.BrowserNewContextOptions{}
	if m.opts.Viewport != nil {
		opts.Viewport = m.opts.Viewport
	}
	if m.opts.UserAgent != "" {
		opts.UserAgent = playwright.String(m.opts.UserAgent)
	}
	if co.StorageState != "" {
		opts.StorageStatePath = playwright.String(co.StorageState)
	}
	if co.Proxy != "" {
		// Loopback too: Chromium leaves it out of proxies unless told.
		opts.Proxy = &playwright.Proxy{Server: co.Proxy, Bypass: playwright.String("<-loopback>")}
	}
	if co.BlockServiceWorkers {
		opts.ServiceWorkers = playwright.ServiceWorkerPolicyBlock
	}
	c, err := m.browser.NewContext(opts)
	if err != nil {
		return nil, llmerr.Classify(err, llmerr.Situation{Tool: "browser"})
	}
	c.SetDefaultTimeout(float64(m.opts.ActionTimeout.Milliseconds()))
	c.SetDefaultNavigationTimeout(float64(m.opts.NavigationTimeout.Milliseconds()))
	m.contexts++
	return c, nil
}

// ReleaseContext closes c and, when it was the last one and CloseWhenIdle is
// set, closes Chromium too.
func (m *Manager) ReleaseContext(c playwright.BrowserContext) {
	_ = c.Close()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.contexts > 0 {
		m.contexts--
	}
	if m.contexts == 0 && m.opts.CloseWhenIdle && m.browser != nil {
		b := m.browser
		m.browser = nil
		_ = b.Close()
	}
}

// Prewarm starts the Playwright driver in the background, so the first tool
// call only waits for Chromium. Chromium itself still starts on first use.
// A failure is logged and retried by the first call, which reports it.
func (m *Manager) Prewarm() {
	go func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if err := m.startDriverLocked(); err != nil {
			m.opts.Logger.Info("driver not started ahead of use", "err", err)
		}
	}()
}

func (m *Manager) startLocked() error {
	if m.browser != nil && m.browser.IsConnected() {
		return nil
	}
	m.browser = nil
	if err := m.startDriverLocked(); err != nil {
		return err
	}
	return m.launchLocked()
}

func (m *Manager) startDriverLocked() error {
	if m.pw == nil {
		paths, err := Locate(m.opts.DriverDir, m.opts.ExecutablePath)
		if err != nil && !(m.opts.CDPEndpoint != "" && isChromiumMissing(err)) {
			return err
		}
		// playwright-go reads the node path only from the environment.
		if paths.Node != "" {
			os.Setenv("PLAYWRIGHT_NODEJS_PATH", paths.Node)
		}
		start := time.Now()
		pw, err := playwright.Run(&playwright.RunOptions{
			DriverDirectory:     paths.DriverDir,
			SkipInstallBrowsers: true,
			Verbose:             false,
			Stdout:              m.opts.DriverLog,
			Stderr:              m.opts.DriverLog,
			Logger:              m.opts.Logger,
		})
		if err != nil {
			return &llmerr.Error{Code: llmerr.SetupRequired, Err: err,
				Message: "The Playwright driver did not start.",
				Cause:   err.Error(),
				Note:    "A person must fix the machine: run retrace install. Retrying will fail the same way until then."}
		}
		m.opts.Logger.Info("playwright driver started", "ms", time.Since(start).Milliseconds())
		m.pw = pw
		if paths.Chromium != "" {
			m.opts.ExecutablePath = paths.Chromium
		}
	}
	return nil
}

func (m *Manager) launchLocked() error {
	start := time.Now()
	var b playwright.Browser
	var err error
	if m.opts.CDPEndpoint != "" {
		b, err = m.pw.Chromium.ConnectOverCDP(m.opts.CDPEndpoint)
	} else {
		sandbox := sandboxed(os.Geteuid(), m.opts.NoSandbox)
		b, err = m.pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
			ExecutablePath:  playwright.String(m.opts.ExecutablePath),
			Headless:        playwright.Bool(m.opts.Headless),
			ChromiumSandbox: playwright.Bool(sandbox),
			Args:            launchArgs(sandbox, m.opts.Args),
			Timeout:         playwright.Float(30000),
		})
	}
	if err != nil {
		return &llmerr.Error{Code: llmerr.SetupRequired, Err: err,
			Message: "Chromium did not start.",
			Cause:   llmerr.FirstLine(err.Error()),
			Note:    fmt.Sprintf("A person must check the browser at %s (or --cdp-endpoint; where the sandbox cannot start, --no-sandbox). Retrying will fail the same way until then.", m.opts.ExecutablePath),
		}
	}
	m.opts.Logger.Info("chromium started", "ms", time.Since(start).Milliseconds(), "version", b.Version())
	m.browser = b
	return nil
}

func isChromiumMissing(err error) bool {
	e, ok := llmerr.As(err)
	return ok && e.Details["missing"] == "Chromium"
}

// Close stops Chromium and the driver.
func (m *Manager) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	if m.browser != nil {
		errs = append(errs, m.browser.Close())
		m.browser = nil
	}
	if m.pw != nil {
		errs = append(errs, m.pw.Stop())
		m.pw = nil
	}
	m.contexts = 0
	return errors.Join(errs...)
}
