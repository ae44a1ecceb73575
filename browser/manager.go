package browser

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
	// launching one: an alias of one http(s) entry of Endpoints.
	CDPEndpoint string
	// Endpoints are the browsers to run in instead of a local Chromium:
	// Playwright browser servers and CDP endpoints (see Endpoint). Each
	// session is placed on one of them (Manager.NewSeat).
	Endpoints []Endpoint
	// ConnectTimeout bounds connecting to an endpoint; 0 means 15 s.
	ConnectTimeout time.Duration
	Headless       bool
	// Args are extra Chromium command-line arguments.
	Args []string
	// NoSandbox turns Chromium's sandbox off for a user who is not root
	// (as root it is always off: Chromium will not start with it).
	NoSandbox bool
	Viewport  *playwright.Size
	UserAgent string
	// IgnoreHTTPSErrors lets pages load over TLS certificates the browser
	// does not trust (self-signed test servers).
	IgnoreHTTPSErrors bool
	// Device is a Playwright device descriptor's name ("iPhone 15"): its
	// user agent, viewport, scale, touch and mobile flags, unless
	// UserAgent or ViewportGiven say otherwise.
	Device        string
	ViewportGiven bool
	// ActionTimeout bounds element actions; NavigationTimeout bounds loads.
	ActionTimeout     time.Duration
	NavigationTimeout time.Duration
	// CloseWhenIdle closes Chromium when the last context has been closed
	// for IdleLinger, so that browser_close frees the memory; a shared test
	// browser keeps it open. A context opened within IdleLinger reuses the
	// running Chromium (contexts share nothing, so the next session is as
	// fresh as after a restart) and skips its start, which is most of the
	// first call after browser_close.
	CloseWhenIdle bool
	IdleLinger    time.Duration
	// DriverLog receives the driver's stderr. Never stdout: in stdio mode
	// stdout carries JSON-RPC only.
	DriverLog io.Writer
	Logger    *slog.Logger
}

// baseArgs keep Chromium quiet on machines with a closed network, and
// turn off the features in disabledFeatures.
var baseArgs = []string{
	"--disable-gpu", "--disable-background-networking",
	"--disable-component-update", "--disable-sync", "--no-first-run",
	"--disable-dev-shm-usage",
	"--disable-features=" + strings.Join(disabledFeatures, ","),
}

// disabledFeatures are the Chromium features retrace turns off. Chromium
// reads only the last --disable-features switch, and Playwright puts its
// own before the caller's flags, so the list starts with Playwright's
// (driver 1.52.0, lib/server/chromium/chromiumSwitches.js; a test keeps
// them in step) and adds:
//   - WebUIOmniboxPopup, WebUIOmniboxAimPopup: every new window (each
//     context's first page, each popup) loads the address bar's popup ahead
//     of use, two WebUI pages of some 400 modules each in a renderer of
//     their own, which nobody sees in a headless browser. A context whose
//     page lived a second cost Chromium about 0.75 CPU-seconds with them,
//     0.22 without.
var disabledFeatures = []string{
	// Playwright's.
	"AcceptCHFrame", "AutoExpandDetailsElement", "AvoidUnnecessaryBeforeUnloadCheckSync",
	"CertificateTransparencyComponentUpdater", "DeferRendererTasksAfterInput",
	"DestroyProfileOnBrowserClose", "DialMediaRouteProvider", "ExtensionManifestV2Disabled",
	"GlobalMediaControls", "HttpsUpgrades", "ImprovedCookieControls", "LazyFrameLoading",
	"LensOverlay", "MediaRouter", "PaintHolding", "ThirdPartyStoragePartitioning", "Translate",
	// retrace's.
	"WebUIOmniboxPopup", "WebUIOmniboxAimPopup",
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

// Manager hands out browser contexts from its sources: one local
// Chromium, launched lazily, or the endpoints of Options.Endpoints, each
// reached through a Playwright driver of its own. When a source's browser
// or driver dies, the contexts it served are lost (Lost says so) and the
// next NewContext starts or reconnects what is missing. It is safe for
// concurrent use.
type Manager struct {
	opts    Options
	sources []*source

	// ctxMu guards contexts apart from the sources' locks, which a launch
	// holds for seconds: Lost must answer at once.
	ctxMu sync.Mutex
	// contexts are the contexts handed out and not yet released, lost
	// ones included until their owner releases them.
	contexts map[playwright.BrowserContext]*tracked

	// placeMu guards the seats and health of every source.
	placeMu sync.Mutex
}

// source is one place browsers come from: the local Chromium or one
// endpoint, with the driver that reaches it.
type source struct {
	m  *Manager
	ep Endpoint // zero for the local Chromium

	mu      sync.Mutex
	drv     *driver
	browser playwright.Browser
	// closedByUs holds the browsers retrace closed itself, whose
	// disconnect says nothing of the endpoint's health.
	closedByUs sync.Map

	// Under Manager.placeMu: the seats placed here, and the health of a
	// remote endpoint (down until downUntil after fails failed connects
	// in a row, or a connection lost).
	seats     int
	fails     int
	downUntil time.Time
}

// driver is one Playwright driver process and its connection.
type driver struct {
	pw *playwright.Playwright
	// exited is closed when the process has exited: its stderr, which no
	// other process holds, reached end of file.
	exited chan struct{}
	// broken is set when a message could not be sent (see reachable): the
	// process is gone even if its end of file is still on the way.
	broken atomic.Bool
}

func (d *driver) alive() bool {
	select {
	case <-d.exited:
		return false
	default:
		return !d.broken.Load()
	}
}

// closedUnder reports whether err says the driver or Chromium went away
// under the call, so that starting them again may succeed. playwright-go
// can see the driver's exit a moment before the manager does, so the exit
// gets a second to show.
func (m *source) closedUnder(err error) bool {
	if err == nil {
		return false
	}
	// "could not send message" is playwright-go's word for a pipe to a
	// driver that is gone, before it marks the connection closed.
	low := strings.ToLower(err.Error())
	if !errors.Is(err, playwright.ErrTargetClosed) && !strings.Contains(low, "connection closed") && !strings.Contains(low, "could not send message") {
		return false
	}
	if m.browser != nil && !m.browser.IsConnected() {
		return true
	}
	if m.drv == nil {
		return false
	}
	if !m.drv.alive() {
		return true
	}
	select {
	case <-m.drv.exited:
		return true
	case <-time.After(time.Second):
		return false
	}
}

// Process names the process whose exit lost a context.
type Process string

const (
	// ProcessBrowser is Chromium: it crashed, was killed or disconnected.
	ProcessBrowser Process = "browser"
	// ProcessDriver is the Playwright driver (a Node.js process): with it
	// go the connection and every object made through it.
	ProcessDriver Process = "driver"
	// ProcessEndpoint is a browser endpoint's connection: the browser
	// server or remote Chromium stopped, or the network between dropped.
	ProcessEndpoint Process = "endpoint"
)

// tracked is a context handed out: the source, driver and browser it
// lives in.
type tracked struct {
	src     *source
	drv     *driver
	browser playwright.Browser
	// borrowed is the browser's own default context (UseDefaultContext):
	// released, it is left open.
	borrowed bool
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
	if opts.ConnectTimeout == 0 {
		opts.ConnectTimeout = 15 * time.Second
	}
	eps := slices.Clone(opts.Endpoints)
	if opts.CDPEndpoint != "" {
		eps = append([]Endpoint{{URL: opts.CDPEndpoint}}, eps...)
	}
	opts.Endpoints = eps
	m := &Manager{opts: opts}
	if len(eps) == 0 {
		m.sources = []*source{{m: m}}
	}
	for _, ep := range eps {
		m.sources = append(m.sources, &source{m: m, ep: ep})
	}
	return m
}

// Options returns the manager's options.
func (m *Manager) Options() Options { return m.opts }

// ContextOptions are what a role's context needs beyond the manager's
// options.
type ContextOptions struct {
	// StorageState is the auth file to load, if any.
	StorageState string
	// Proxy, when set, is the proxy every request of the context goes
	// through, loopback included. It is on this machine's loopback, so it
	// is left out for a browser on another machine (see
	// Endpoint.OnThisMachine).
	Proxy string
	// BlockServiceWorkers keeps pages from registering service workers,
	// whose fetches a request route would not see.
	BlockServiceWorkers bool
	// Default asks for the browser's own default context where the seat's
	// endpoint lends it (Endpoint.UseDefaultContext); Borrowed then says
	// so, and the options above that only a new context takes (a proxy)
	// do not apply.
	Default bool
	// VideoDir, when set, records a video of every page of the context
	// there, at VideoSize (Playwright's default when nil); each is written
	// when its page or the context closes.
	VideoDir  string
	VideoSize *playwright.Size
	// Seat is the session's place (NewSeat): the context is made on its
	// source, which moves to another endpoint when its own cannot be
	// reached. Nil means the first source.
	Seat *Seat
}

// NewContext returns a fresh, isolated browser context, starting the driver
// and Chromium (or connecting to the seat's endpoint) first if needed: at
// first use, and again after either died. With several endpoints, one
// that cannot be reached is marked down and the seat moves to the next
// healthy one; the error says so only when none could be reached.
func (m *Manager) NewContext(co ContextOptions) (playwright.BrowserContext, error) {
	if co.Seat == nil {
		return m.sources[0].newContext(co)
	}
	tried := map[*source]bool{}
	var errs []error
	for {
		src := m.place(co.Seat, tried)
		if src == nil {
			return nil, m.unreachable(errs)
		}
		c, err := src.newContext(co)
		if err == nil || src.ep.URL == "" || !isConnectError(err) {
			return c, err
		}
		m.markDown(src, err)
		tried[src] = true
		errs = append(errs, err)
	}
}

func (src *source) newContext(co ContextOptions) (playwright.BrowserContext, error) {
	src.mu.Lock()
	defer src.mu.Unlock()
	c, err := src.newContextLocked(co)
	if src.closedUnder(err) {
		// The driver or Chromium died just before this call, unseen until
		// now: start what is missing, once.
		c, err = src.newContextLocked(co)
	}
	if err == nil {
		src.m.markUp(src)
	}
	return c, err
}

func (src *source) newContextLocked(co ContextOptions) (playwright.BrowserContext, error) {
	m := src.m
	if err := src.startLocked(); err != nil {
		return nil, err
	}
	opts := playwright.BrowserNewContextOptions{}
	if m.opts.Viewport != nil {
		opts.Viewport = m.opts.Viewport
	}
	if name := m.opts.Device; name != "" {
		d := src.drv.pw.Devices[name]
		if d == nil {
			return nil, fmt.Errorf("--device %q is not a Playwright device, like \"iPhone 15\" or \"Pixel 7\"", name)
		}
		opts.UserAgent = playwright.String(d.UserAgent)
		if !m.opts.ViewportGiven {
			opts.Viewport = d.Viewport
			if d.Screen != nil {
				opts.Screen = d.Screen
			}
		}
		opts.DeviceScaleFactor = playwright.Float(d.DeviceScaleFactor)
		opts.IsMobile = playwright.Bool(d.IsMobile)
		opts.HasTouch = playwright.Bool(d.HasTouch)
	}
	if m.opts.UserAgent != "" {
		opts.UserAgent = playwright.String(m.opts.UserAgent)
	}
	if m.opts.IgnoreHTTPSErrors {
		opts.IgnoreHttpsErrors = playwright.Bool(true)
	}
	if co.StorageState != "" {
		opts.StorageStatePath = playwright.String(co.StorageState)
	}
	if co.Proxy != "" && src.ep.OnThisMachine() {
		// Loopback too: Chromium leaves it out of proxies unless told.
		opts.Proxy = &playwright.Proxy{Server: co.Proxy, Bypass: playwright.String("<-loopback>")}
	}
	if co.BlockServiceWorkers {
		opts.ServiceWorkers = playwright.ServiceWorkerPolicyBlock
	}
	if co.VideoDir != "" {
		opts.RecordVideo = &playwright.RecordVideo{Dir: co.VideoDir, Size: co.VideoSize}
	}
	if co.Default && src.ep.UseDefaultContext {
		if own := src.browser.Contexts(); len(own) > 0 {
			c := own[0]
			if err := setTimeouts(c, m.opts.ActionTimeout, m.opts.NavigationTimeout); err != nil {
				return nil, llmerr.Classify(err, llmerr.Situation{Tool: "browser"})
			}
			m.ctxMu.Lock()
			if m.contexts == nil {
				m.contexts = map[playwright.BrowserContext]*tracked{}
			}
			m.contexts[c] = &tracked{src: src, drv: src.drv, browser: src.browser, borrowed: true}
			m.ctxMu.Unlock()
			return c, nil
		}
	}
	c, err := src.browser.NewContext(opts)
	if err != nil {
		return nil, llmerr.Classify(err, llmerr.Situation{Tool: "browser"})
	}
	if err := setTimeouts(c, m.opts.ActionTimeout, m.opts.NavigationTimeout); err != nil {
		return nil, llmerr.Classify(err, llmerr.Situation{Tool: "browser"})
	}
	m.ctxMu.Lock()
	if m.contexts == nil {
		m.contexts = map[playwright.BrowserContext]*tracked{}
	}
	m.contexts[c] = &tracked{src: src, drv: src.drv, browser: src.browser}
	m.ctxMu.Unlock()
	return c, nil
}

// setTimeouts sets c's default timeouts. playwright-go sends them without
// waiting for an answer and, on a connection that has just closed, panics
// there (it closes a nil channel): that is the driver's death, reported as
// the error playwright-go gives elsewhere.
func setTimeouts(c playwright.BrowserContext, action, nav time.Duration) (err error) {
	defer func() {
		if recover() != nil {
			err = fmt.Errorf("%w: the driver's connection closed", playwright.ErrTargetClosed)
		}
	}()
	c.SetDefaultTimeout(float64(action.Milliseconds()))
	c.SetDefaultNavigationTimeout(float64(nav.Milliseconds()))
	return nil
}

// Lost reports whether c was lost, and to which process's exit: its
// browser or the driver exited since it was made. A context the manager
// does not know (released, or never its own) counts as lost with its
// browser. It never waits for a launch or for the driver.
//
// The answer is already true when a call on c has failed because of the
// exit: a caller that sees an error can ask whether the browser went.
func (m *Manager) Lost(c playwright.BrowserContext) (Process, bool) {
	m.ctxMu.Lock()
	t := m.contexts[c]
	m.ctxMu.Unlock()
	switch {
	case t == nil:
		return ProcessBrowser, true
	case !t.drv.alive() || !reachable(t.drv, c, m.opts.ActionTimeout):
		return ProcessDriver, true
	case !t.browser.IsConnected() && t.src.ep.URL != "":
		return ProcessEndpoint, true
	case !t.browser.IsConnected():
		return ProcessBrowser, true
	}
	return "", false
}

// ViaServer reports whether c lives in a browser reached through a
// Playwright browser server (a ws:// endpoint). There, a call made on the
// dispatch goroutine (in an event handler) waits for that goroutine, even
// one playwright-go sends without waiting for an answer elsewhere.
func (m *Manager) ViaServer(c playwright.BrowserContext) bool {
	m.ctxMu.Lock()
	defer m.ctxMu.Unlock()
	t := m.contexts[c]
	return t != nil && t.src.ep.Kind() == KindPlaywright
}

// reachable reports whether d's connection still takes c's
// messages. The driver's stderr can reach end of file a moment after
// playwright-go failed the calls in flight, so this asks the connection
// itself: it sends c its default timeout again, a message without answer
// (tens of microseconds). On a closed connection playwright-go fails such a
// send by panicking (v0.5200.1 closes a nil channel); it marks the
// connection closed before it fails any call, so a call that failed for
// it is always followed by false here. TestLostAtOnce keeps that true.
func reachable(d *driver, c playwright.BrowserContext, timeout time.Duration) (ok bool) {
	defer func() {
		if recover() != nil {
			d.broken.Store(true)
			ok = false
		}
	}()
	c.SetDefaultTimeout(float64(timeout.Milliseconds()))
	return true
}

// ReleaseContext closes c and, when it was the last context of the
// browser and CloseWhenIdle is set, closes Chromium too. A lost context is
// only forgotten: there is nothing left to close, and asking a dead
// driver could only fail.
func (m *Manager) ReleaseContext(c playwright.BrowserContext) {
	m.ctxMu.Lock()
	t := m.contexts[c]
	delete(m.contexts, c)
	m.ctxMu.Unlock()
	if t == nil || t.borrowed || !t.drv.alive() || !reachable(t.drv, c, m.opts.ActionTimeout) || !t.browser.IsConnected() {
		return
	}
	_ = c.Close()
	src := t.src
	src.mu.Lock()
	defer src.mu.Unlock()
	if m.opts.CloseWhenIdle && src.browser != nil && src.browser == t.browser && m.liveContexts(src.browser) == 0 {
		if m.opts.IdleLinger <= 0 {
			src.closeIdleLocked(src.browser)
			return
		}
		b := src.browser
		time.AfterFunc(m.opts.IdleLinger, func() {
			src.mu.Lock()
			defer src.mu.Unlock()
			if src.browser == b && src.drv != nil && src.drv.alive() && m.liveContexts(b) == 0 {
				src.closeIdleLocked(b)
			}
		})
	}
}

// closeIdleLocked closes b, src's browser with no context left. Call with
// src.mu held.
func (src *source) closeIdleLocked(b playwright.Browser) {
	src.browser = nil
	src.closedByUs.Store(b, true)
	_ = b.Close()
}

// Borrowed reports whether c is a browser's own default context, lent to
// the default role (Endpoint.UseDefaultContext): not retrace's to close.
func (m *Manager) Borrowed(c playwright.BrowserContext) bool {
	m.ctxMu.Lock()
	defer m.ctxMu.Unlock()
	t := m.contexts[c]
	return t != nil && t.borrowed
}

// Contexts counts the contexts handed out and not yet released.
func (m *Manager) Contexts() int {
	m.ctxMu.Lock()
	defer m.ctxMu.Unlock()
	return len(m.contexts)
}

// liveContexts counts the contexts of b not yet released.
func (m *Manager) liveContexts(b playwright.Browser) int {
	m.ctxMu.Lock()
	defer m.ctxMu.Unlock()
	n := 0
	for _, t := range m.contexts {
		if t.browser == b {
			n++
		}
	}
	return n
}

// Prewarm starts the Playwright drivers in the background, so the first
// tool call only waits for Chromium. Chromium itself still starts (or is
// connected to) on first use. A failure is logged and retried by the
// first call, which reports it.
func (m *Manager) Prewarm() {
	for _, src := range m.sources {
		go func() {
			src.mu.Lock()
			defer src.mu.Unlock()
			if err := src.startDriverLocked(); err != nil {
				m.opts.Logger.Info("driver not started ahead of use", "err", err)
			}
		}()
	}
}

func (m *source) startLocked() error {
	m.dropDeadDriverLocked()
	if m.browser != nil && m.browser.IsConnected() {
		return nil
	}
	m.browser = nil
	err := m.startDriverLocked()
	if err == nil {
		err = m.launchLocked()
	}
	if m.closedUnder(err) {
		// It died while launching: once more from the start.
		m.dropDeadDriverLocked()
		if err = m.startDriverLocked(); err == nil {
			err = m.launchLocked()
		}
	}
	return err
}

// dropDeadDriverLocked forgets a driver that exited, and the Chromium it
// ran (which exits with it). Not Stop: playwright-go's reader already
// closed the connection and waited for the process, and a Stop racing it
// could close a channel twice.
func (m *source) dropDeadDriverLocked() {
	if m.drv != nil && !m.drv.alive() {
		m.m.opts.Logger.Info("the playwright driver exited; the next start makes a new one")
		m.drv, m.browser = nil, nil
	}
}

func (m *source) startDriverLocked() error {
	if m.drv != nil {
		return nil
	}
	paths, err := Locate(m.m.opts.DriverDir, m.m.opts.ExecutablePath)
	if err != nil && !(m.ep.URL != "" && isChromiumMissing(err)) {
		return err
	}
	// playwright-go reads the node path only from the environment.
	if paths.Node != "" {
		os.Setenv("PLAYWRIGHT_NODEJS_PATH", paths.Node)
	}
	// The driver's stderr comes through a pipe only it holds, so its end
	// of file says the driver exited, however it died.
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("driver stderr: %w", err)
	}
	d := &driver{exited: make(chan struct{})}
	go func() {
		_, _ = io.Copy(m.m.opts.DriverLog, stderrR)
		stderrR.Close()
		close(d.exited)
	}()
	start := time.Now()
	pw, err := playwright.Run(&playwright.RunOptions{
		DriverDirectory:     paths.DriverDir,
		SkipInstallBrowsers: true,
		Verbose:             false,
		Stdout:              m.m.opts.DriverLog,
		Stderr:              stderrW,
		Logger:              m.m.opts.Logger,
	})
	stderrW.Close() // the driver has its own copy
	if err != nil {
		return &llmerr.Error{Code: llmerr.SetupRequired, Err: err,
			Message: "The Playwright driver did not start.",
			Cause:   err.Error(),
			Note:    "A person must fix the machine: run retrace install. Retrying will fail the same way until then."}
	}
	m.m.opts.Logger.Info("playwright driver started", "ms", time.Since(start).Milliseconds())
	d.pw = pw
	m.drv = d
	if paths.Chromium != "" {
		m.m.opts.ExecutablePath = paths.Chromium
	}
	return nil
}

func (m *source) launchLocked() error {
	start := time.Now()
	var b playwright.Browser
	var err error
	if m.ep.URL != "" {
		if b, err = m.connect(); err != nil {
			return err
		}
	} else {
		sandbox := sandboxed(os.Geteuid(), m.m.opts.NoSandbox)
		b, err = m.drv.pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
			ExecutablePath:  playwright.String(m.m.opts.ExecutablePath),
			Headless:        playwright.Bool(m.m.opts.Headless),
			ChromiumSandbox: playwright.Bool(sandbox),
			Args:            launchArgs(sandbox, m.m.opts.Args),
			Timeout:         playwright.Float(30000),
		})
	}
	if err != nil {
		return &llmerr.Error{Code: llmerr.SetupRequired, Err: err,
			Message: "Chromium did not start.",
			Cause:   llmerr.FirstLine(err.Error()),
			Note:    fmt.Sprintf("A person must check the browser at %s (or --cdp-endpoint; where the sandbox cannot start, --no-sandbox). Retrying will fail the same way until then.", m.m.opts.ExecutablePath),
		}
	}
	m.m.opts.Logger.Info("chromium started", "ms", time.Since(start).Milliseconds(), "version", b.Version())
	m.browser = b
	return nil
}

func isChromiumMissing(err error) bool {
	e, ok := llmerr.As(err)
	return ok && e.Details["missing"] == "Chromium"
}

// Close stops every source's Chromium (or disconnects from it) and driver.
func (m *Manager) Close() error {
	var errs []error
	for _, src := range m.sources {
		errs = append(errs, src.close())
	}
	return errors.Join(errs...)
}

func (src *source) close() error {
	src.mu.Lock()
	defer src.mu.Unlock()
	var errs []error
	if src.browser != nil && src.drv != nil && src.drv.alive() {
		src.closedByUs.Store(src.browser, true)
		errs = append(errs, src.browser.Close())
	}
	src.browser = nil
	if src.drv != nil && src.drv.alive() {
		// A dead driver's connection is closed by playwright-go already.
		errs = append(errs, src.drv.pw.Stop())
	}
	src.drv = nil
	return errors.Join(errs...)
}
