// Command retrace is an MCP server that gives LLM agents a real browser,
// and whose every error is a recovery plan the agent can follow.
//
// Usage:
//
//	retrace [flags]            serve MCP over stdio
//	retrace --port 8931        serve Streamable HTTP at http://127.0.0.1:8931/mcp
//	retrace install            install the Playwright driver, check for Chromium
//	retrace version            print the version
//	retrace eval --out DIR     measure recovery from failures (docs/eval.md)
//	retrace roles check ...    permission matrix of roles over URLs (docs/roles-check.md)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/roles"
	"github.com/retrace-dev/retrace/server"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "retrace:", err)
		os.Exit(1)
	}
}

type options struct {
	port              int
	host              string
	headless          bool
	executablePath    string
	cdpEndpoint       string
	viewport          string
	userAgent         string
	ignoreHTTPSErrors bool
	initScripts       []string
	outputDir         string
	caps              string
	saveTrace         bool
	saveVideo         string
	storageState      string
	userDataDir       string
	proxyServer       string
	proxyBypass       string
	device            string
	viewportGiven     bool
	isolated          bool
	timeoutAction     int
	timeoutNavigation int
	errorStyle        string
	snapshotBudget    int
	maxResultBytes    int
	allowedOrigins    string
	allowFileURLs     bool
	noSandbox         bool
	noEvaluate        bool
	allowedDirs       string
	allowBroadDirs    bool
	configFile        string
	roleFlags         []string
	blockedOrigins    string
	dialog            string
	logFile           string
	driverDir         string
	// Streamable HTTP protections (server.HTTPOptions).
	allowedHTTPOrigins string
	allowedHosts       string
	authToken          string
	insecureNoAuth     bool
	maxSessions        int
	sessionIdle        time.Duration
	instance           string
	// Browser endpoints (--browser-endpoint, --browser-endpoint-header).
	endpoints       []string
	endpointHeaders []string
}

// recordTo is where retrace record writes the session's test.
var recordTo string

// recordOut takes retrace record's --out FILE (or --out=FILE) out of args,
// leaving the server's own flags.
func recordOut(args []string) (string, []string, error) {
	var out string
	var rest []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--out" || a == "-out":
			if i+1 >= len(args) {
				return "", nil, errors.New("retrace record: --out needs a file name")
			}
			out = args[i+1]
			i++
		case strings.HasPrefix(a, "--out=") || strings.HasPrefix(a, "-out="):
			out = a[strings.Index(a, "=")+1:]
		default:
			rest = append(rest, a)
		}
	}
	if out == "" {
		return "", nil, errors.New("usage: retrace record --out FILE.spec.ts [server flags]: serves over stdio as retrace does, and writes the session's actions as a Playwright test to FILE when it stops")
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return "", nil, err
	}
	if st, err := os.Stat(filepath.Dir(abs)); err != nil || !st.IsDir() {
		return "", nil, fmt.Errorf("retrace record: the directory of %s does not exist", out)
	}
	return abs, rest, nil
}

func run(args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "eval":
			return runEval(args[1:], os.Stdout)
		case "install":
			return install(args[1:])
		case "roles":
			// Its exit code tells differences (1) from setup errors (2).
			os.Exit(runRoles(args[1:], os.Stdout, os.Stderr))
		case "record":
			// The server as usual, which writes its sessions' actions as a
			// Playwright test when it stops.
			out, rest, err := recordOut(args[1:])
			if err != nil {
				return err
			}
			recordTo = out
			return run(rest)
		case "version", "--version":
			fmt.Println("retrace", server.Version, "(Playwright driver "+browser.DriverVersion+")")
			return nil
		}
	}
	fs := flag.NewFlagSet("retrace", flag.ContinueOnError)
	var o options
	fs.IntVar(&o.port, "port", 0, "serve Streamable HTTP on this port instead of stdio")
	fs.StringVar(&o.host, "host", "127.0.0.1", "address to bind with --port")
	fs.StringVar(&o.authToken, "auth-token", "", "with --port: bearer token every HTTP request must carry (Authorization: Bearer <token>); prefer RETRACE_AUTH_TOKEN, which ps does not show")
	fs.BoolVar(&o.insecureNoAuth, "insecure-no-auth", false, "with --port: serve a non-loopback --host without --auth-token (trusted networks only)")
	fs.StringVar(&o.allowedHTTPOrigins, "allowed-http-origins", "", "with --port: comma-separated browser origins (https://app.example) that may call the server besides loopback ones; they get CORS headers")
	fs.StringVar(&o.allowedHosts, "allowed-hosts", "", "with --port: comma-separated Host header values (name or name:port, * for any) accepted besides the bound address")
	fs.IntVar(&o.maxSessions, "max-sessions", server.DefaultMaxSessions, "with --port: most live MCP sessions at once (0: no cap)")
	fs.DurationVar(&o.sessionIdle, "session-idle-timeout", server.DefaultSessionTimeout, "with --port: close an MCP session (and its browser contexts) idle this long")
	fs.StringVar(&o.instance, "instance", "", "with --port: name of this process among several behind one reverse proxy; every session ID starts with it and a dash, so the proxy can route a session back (see docs/deploy.md)")
	fs.BoolVar(&o.headless, "headless", true, "run Chromium headless (--headless=false shows the window)")
	fs.StringVar(&o.executablePath, "executable-path", "", "Chromium executable (default: found on the machine)")
	fs.StringVar(&o.cdpEndpoint, "cdp-endpoint", "", "attach to your running Chrome or Chromium at this CDP endpoint (started with --remote-debugging-port): the default role works in its profile, sign-ins and open tabs, and browser_close leaves your tabs open")
	fs.Func("browser-endpoint", "run browsers on this endpoint instead of a local Chromium (repeatable; RETRACE_BROWSER_ENDPOINT takes several, space-separated): ws:// or wss:// for a Playwright browser server (playwright run-server, launchServer), http:// or https:// for a Chromium DevTools (CDP) endpoint; each session goes to the healthy one with the fewest sessions", func(v string) error {
		o.endpoints = append(o.endpoints, strings.Fields(v)...)
		return nil
	})
	fs.Func("browser-endpoint-header", "header sent when connecting to every --browser-endpoint, 'Name: value' (repeatable); write secrets as ${ENV_VAR}, read from the environment and never printed", func(v string) error {
		o.endpointHeaders = append(o.endpointHeaders, v)
		return nil
	})
	fs.StringVar(&o.viewport, "viewport-size", "1280x720", "viewport size, WIDTHxHEIGHT")
	fs.StringVar(&o.userAgent, "user-agent", "", "user agent string")
	fs.Func("init-script", "JavaScript file run in every page before the page's own scripts (repeatable)", func(v string) error {
		o.initScripts = append(o.initScripts, v)
		return nil
	})
	fs.BoolVar(&o.isolated, "isolated", true, "accepted for playwright-mcp's command lines: retrace's browser profiles are always in memory")
	fs.StringVar(&o.device, "device", "", `emulate a device of Playwright's list, like "iPhone 15" or "Pixel 7": its viewport (unless --viewport-size is given), user agent, touch and scale`)
	fs.BoolVar(&o.ignoreHTTPSErrors, "ignore-https-errors", false, "load pages whose TLS certificate the browser does not trust (self-signed test servers)")
	fs.IntVar(&o.timeoutAction, "timeout-action", 5000, "action timeout in milliseconds")
	fs.IntVar(&o.timeoutNavigation, "timeout-navigation", 30000, "navigation timeout in milliseconds (a call stays well inside the 60 s many clients allow)")
	fs.IntVar(&o.snapshotBudget, "snapshot-budget", 50000, "default size budget of browser_snapshot, in characters of tree (0: no limit)")
	fs.IntVar(&o.maxResultBytes, "max-result-bytes", server.DefaultMaxResultBytes, "most bytes of text in one tool result; a snapshot past it is read on with offset, other results are cut with a note (at least 10000)")
	fs.StringVar(&o.configFile, "config", "", "JSON file with the roles (see docs/roles.md)")
	fs.Func("role", "add a role: name=authfile[,defaultURL] (repeatable)", func(v string) error {
		o.roleFlags = append(o.roleFlags, v)
		return nil
	})
	fs.StringVar(&o.proxyServer, "proxy-server", "", "send the browser's requests on through this HTTP proxy, http://[user:pass@]host:port (loopback goes direct)")
	fs.StringVar(&o.proxyBypass, "proxy-bypass", "", "comma-separated hosts that go direct, not through --proxy-server: host, .domain or *.domain")
	fs.StringVar(&o.userDataDir, "user-data-dir", "", "run Chromium on this profile directory (created if missing): the default role works in its own context, whose cookies and storage outlive the server")
	fs.StringVar(&o.storageState, "storage-state", "", "Playwright storage-state file (cookies, local storage) the default role's context starts with, as playwright-mcp's; a signed-in user the server checks is a role (--role, docs/roles.md)")
	fs.BoolVar(&o.saveTrace, "save-trace", false, "record a Playwright trace of each role's browser, saved to --output-dir at browser_close (npx playwright show-trace opens it)")
	fs.StringVar(&o.saveVideo, "save-video", "", "record a video of each page at this size, like 800x600, saved to --output-dir when the page closes (needs ffmpeg)")
	fs.StringVar(&o.caps, "caps", "", "comma-separated capabilities whose tools are listed besides the default set: network (request details, stubs, slow or offline network), pdf, or all; docs/debugging.md lists their tools")
	fs.BoolVar(&o.noEvaluate, "no-evaluate", false, "leave browser_evaluate out (no arbitrary JavaScript)")
	fs.StringVar(&o.allowedDirs, "allowed-dirs", "", "directories browser_file_upload may read, comma-separated (default: <user cache dir>/retrace/uploads, created on first use)")
	fs.BoolVar(&o.allowBroadDirs, "allow-broad-dirs", false, "let --allowed-dirs name / or the home directory (refused otherwise)")
	fs.StringVar(&o.allowedOrigins, "allowed-origins", "", "semicolon-separated origins or hosts the browser may load (default: every http(s) origin but link-local and cloud-metadata addresses)")
	fs.BoolVar(&o.noSandbox, "no-sandbox", false, "turn Chromium's sandbox off (it is on unless running as root)")
	fs.BoolVar(&o.allowFileURLs, "allow-file-urls", false, "let file: URLs load, only inside --allowed-dirs (default: refused)")
	fs.StringVar(&o.blockedOrigins, "blocked-origins", "", "semicolon-separated origins or hosts the browser may not load (checked first)")
	fs.StringVar(&o.errorStyle, "error-style", "recovery", "error rendering: recovery (plans) or plain (one line, a baseline)")
	fs.StringVar(&o.dialog, "dialog", "dismiss", "how JavaScript dialogs are answered: accept or dismiss (beforeunload is always accepted)")
	fs.StringVar(&o.logFile, "log-file", "", "write logs to this file instead of stderr")
	fs.StringVar(&o.outputDir, "output-dir", "", "directory for files the server writes: downloads (default: <user cache dir>/retrace/output, created 0700)")
	fs.StringVar(&o.driverDir, "driver-dir", "", "Playwright driver directory (default $RETRACE_DRIVER_DIR or the user cache dir)")
	fs.Usage = func() { printUsage(fs) }
	if wantsHelp(args) {
		// Asked for, the help is the output; stdio's JSON-RPC never starts.
		fs.SetOutput(os.Stdout)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (see retrace --help)", fs.Arg(0))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if err := applyEnv(fs); err != nil {
		return err
	}
	if o.configFile != "" {
		if err := applyConfig(fs, o.configFile, given); err != nil {
			return err
		}
	}
	o.viewportGiven = o.viewport != fs.Lookup("viewport-size").DefValue
	return serve(o)
}

// envName is the environment variable of a flag: RETRACE_<NAME>, with
// dashes as underscores.
func envName(flag string) string {
	return "RETRACE_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// applyEnv sets every flag not given on the command line from
// RETRACE_<NAME>, with dashes as underscores.
func applyEnv(fs *flag.FlagSet) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		env := envName(f.Name)
		if v, ok := os.LookupEnv(env); ok && !given[f.Name] && err == nil {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s=%q: %v", env, v, e)
			}
		}
	})
	return err
}

func serve(o options) error {
	logOut := io.Writer(os.Stderr)
	if o.logFile != "" {
		f, err := os.OpenFile(o.logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("--log-file: %w", err)
		}
		defer f.Close()
		logOut = f
	}
	logger := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: slog.LevelInfo}))
	style, err := llmerr.ParseStyle(o.errorStyle)
	if err != nil {
		return fmt.Errorf("--error-style: %w", err)
	}
	dialog := browser.DialogPolicy(o.dialog)
	if dialog != browser.DialogAccept && dialog != browser.DialogDismiss {
		return fmt.Errorf("--dialog: want accept or dismiss, got %q", o.dialog)
	}
	roleCfg := roles.New()
	if o.configFile != "" {
		if roleCfg, err = roles.Load(o.configFile); err != nil {
			return err
		}
	}
	for _, r := range o.roleFlags {
		if err := roleCfg.AddFlag(r); err != nil {
			return err
		}
	}
	var initScripts []string
	for _, f := range o.initScripts {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("--init-script: %w", err)
		}
		initScripts = append(initScripts, string(b))
	}
	viewport, err := parseViewport(o.viewport)
	if err != nil {
		return fmt.Errorf("--viewport-size: %w", err)
	}
	if o.timeoutAction <= 0 || o.timeoutNavigation <= 0 {
		return errors.New("--timeout-action and --timeout-navigation must be positive milliseconds")
	}
	// Every flag is checked before the browser starts: a bad value must not
	// cost a Chromium launch.
	var upstream server.Upstream
	if o.proxyServer != "" {
		u, err := url.Parse(o.proxyServer)
		if err != nil || u.Scheme != "http" || u.Host == "" {
			shown := "(not a URL)"
			if err == nil {
				shown = u.Redacted() // a password is never printed
			}
			return fmt.Errorf("--proxy-server %s: want http://[user:pass@]host:port (an HTTP proxy)", shown)
		}
		upstream = server.Upstream{URL: u, Bypass: splitList(o.proxyBypass)}
	} else if o.proxyBypass != "" {
		return errors.New("--proxy-bypass needs --proxy-server")
	}
	if o.storageState != "" {
		if err := roles.CheckAuthFile(o.storageState); err != nil {
			return fmt.Errorf("--storage-state: %w", err)
		}
	}
	caps := splitList(o.caps)
	for _, c := range caps {
		if _, ok := server.Caps[c]; !ok && c != "all" {
			return fmt.Errorf("--caps: %q is not a capability (%s)", c, strings.Join(server.CapNames(), ", "))
		}
	}
	var videoSize *playwright.Size
	if o.saveVideo != "" {
		if videoSize, err = parseViewport(o.saveVideo); err != nil {
			return fmt.Errorf("--save-video: %w", err)
		}
		cache, err := os.UserCacheDir()
		if err != nil {
			return fmt.Errorf("--save-video: %w", err)
		}
		registry, err := browser.VideoRegistry(o.driverDir, filepath.Join(cache, "retrace"))
		if err != nil {
			return fmt.Errorf("--save-video: %w", err)
		}
		// The driver, started later, reads it: its ffmpeg is the machine's.
		os.Setenv("PLAYWRIGHT_BROWSERS_PATH", registry)
	}
	if o.device != "" {
		if err := browser.CheckDevice(o.driverDir, o.device); err != nil {
			return fmt.Errorf("--device: %w", err)
		}
	}
	if o.port < 0 || o.port > 65535 {
		return fmt.Errorf("--port %d: a TCP port is 1 to 65535", o.port)
	}
	for _, d := range splitList(o.allowedDirs) {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return fmt.Errorf("--allowed-dirs: %s is not a directory on this machine", d)
		}
	}
	if err := server.CheckUploadDirs(splitList(o.allowedDirs), o.allowBroadDirs); err != nil {
		return fmt.Errorf("--allowed-dirs: %w", err)
	}
	if o.snapshotBudget < 0 {
		return errors.New("--snapshot-budget must be 0 (no limit) or a positive number of characters")
	}
	if o.maxResultBytes < minResultBytes {
		return fmt.Errorf("--max-result-bytes must be at least %d: a result must hold an error's plan", minResultBytes)
	}
	httpOpts := server.HTTPOptions{BindHost: o.host, AuthToken: o.authToken, InsecureNoAuth: o.insecureNoAuth,
		AllowedOrigins: splitList(o.allowedHTTPOrigins), AllowedHosts: splitList(o.allowedHosts), MaxSessions: o.maxSessions,
		SessionTimeout: o.sessionIdle}
	if o.sessionIdle <= 0 {
		return errors.New("--session-idle-timeout must be a positive duration, such as 30m")
	}
	if err := server.CheckInstance(o.instance); err != nil {
		return fmt.Errorf("--instance: %w", err)
	}
	if o.port != 0 {
		if err := httpOpts.Check(); err != nil {
			return err
		}
	}
	endpoints, err := browserEndpoints(o, roleCfg)
	if err != nil {
		return err
	}
	if o.userDataDir != "" {
		if len(endpoints) > 0 {
			return browser.ErrProfileWithEndpoints
		}
		profile, err := browser.StartProfile(browser.Options{ExecutablePath: o.executablePath, Headless: o.headless,
			NoSandbox: o.noSandbox, Viewport: viewport, DriverLog: logOut}, o.userDataDir)
		if err != nil {
			return err
		}
		defer profile.Close()
		// Reached as a user's own browser is: the default role in the
		// profile's context.
		endpoints = []browser.Endpoint{{URL: profile.URL, UseDefaultContext: true}}
	}
	mgr := browser.NewManager(browser.Options{
		DriverDir:         o.driverDir,
		ExecutablePath:    o.executablePath,
		Endpoints:         endpoints,
		Headless:          o.headless,
		NoSandbox:         o.noSandbox,
		Viewport:          viewport,
		UserAgent:         o.userAgent,
		IgnoreHTTPSErrors: o.ignoreHTTPSErrors,
		Device:            o.device,
		ViewportGiven:     o.viewportGiven,
		ActionTimeout:     time.Duration(o.timeoutAction) * time.Millisecond,
		NavigationTimeout: time.Duration(o.timeoutNavigation) * time.Millisecond,
		CloseWhenIdle:     true,
		IdleLinger:        idleLinger,
		DriverLog:         logOut,
		Logger:            logger,
	})
	defer mgr.Close()
	mgr.Prewarm()
	for _, ep := range endpoints {
		logger.Info("browser endpoint", "endpoint", ep.String(), "kind", ep.Kind())
		if !ep.OnThisMachine() {
			logger.Warn("the network guard does not reach a browser on another machine: request routes still apply the origin policy, but redirect hops, WebSockets, workers and the link-local rule are not checked by retrace there (docs/security.md)",
				"endpoint", ep.String())
		}
	}
	// Say at start what is missing; tool calls will say it again.
	if _, err := browser.Locate(o.driverDir, o.executablePath); err != nil && len(endpoints) == 0 {
		if e, ok := llmerr.As(err); ok {
			logger.Warn("browser setup incomplete; tool calls will fail until fixed", "cause", e.Cause, "fix", e.Details["fix"])
		}
	}
	srv := server.New(server.Config{ErrorStyle: style, DialogPolicy: dialog, Logger: logger,
		SnapshotBudget: o.snapshotBudget,
		MaxResultBytes: o.maxResultBytes,
		NoEvaluate:     o.noEvaluate,
		InitScripts:    initScripts,
		Caps:           caps,
		StorageState:   o.storageState,
		Upstream:       upstream,
		OutputDir:      o.outputDir,
		SaveTrace:      o.saveTrace,
		RecordTo:       recordTo,
		SaveVideo:      videoSize,
		Instance:       o.instance,
		UploadDirs:     splitList(o.allowedDirs),
		AllowBroadDirs: o.allowBroadDirs,
		Roles:          roleCfg,
		Origins: server.OriginPolicy{Allowed: server.ParseOrigins(o.allowedOrigins), Blocked: server.ParseOrigins(o.blockedOrigins),
			AllowFileURLs: o.allowFileURLs}}, mgr)
	defer srv.Close()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.port == 0 {
		logger.Info("serving MCP over stdio")
		return srv.RunStdio(ctx, os.Stdin, os.Stdout)
	}
	addr := net.JoinHostPort(o.host, strconv.Itoa(o.port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.HTTPHandler(httpOpts))
	hs := server.NewHTTPServer(mux)
	if o.authToken == "" && o.insecureNoAuth && !ln.Addr().(*net.TCPAddr).IP.IsLoopback() {
		logger.Warn("serving without a token on a non-loopback address (--insecure-no-auth): anyone who reaches it drives the browser", "addr", ln.Addr().String())
	}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(shut)
	}()
	printConnect(os.Stderr, "http://"+ln.Addr().String()+"/mcp")
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// browserEndpoints gathers the endpoints of --cdp-endpoint,
// --browser-endpoint and the config file's browserEndpoints, with their
// headers, ${VAR} references read from the environment. Errors never
// show a header's value.
func browserEndpoints(o options, cfg *roles.Config) ([]browser.Endpoint, error) {
	flagHeaders := map[string]string{}
	for _, h := range o.endpointHeaders {
		name, value, ok := strings.Cut(h, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("--browser-endpoint-header: want 'Name: value', got a header without a name or colon")
		}
		v, err := expandEnv(strings.TrimSpace(value))
		if err != nil {
			return nil, fmt.Errorf("--browser-endpoint-header %s: %w", name, err)
		}
		flagHeaders[name] = v
	}
	var eps []browser.Endpoint
	add := func(raw string, headers map[string]string, from string) error {
		ep, err := browser.ParseEndpoint(raw, headers)
		if err != nil {
			return fmt.Errorf("%s: %w", from, err)
		}
		eps = append(eps, ep)
		return nil
	}
	if o.cdpEndpoint != "" {
		if err := add(o.cdpEndpoint, flagHeaders, "--cdp-endpoint"); err != nil {
			return nil, err
		}
		// The user's own browser: the default role works in its profile
		// and tabs, not in a new empty context.
		eps[len(eps)-1].UseDefaultContext = true
	}
	for _, raw := range o.endpoints {
		if err := add(raw, flagHeaders, "--browser-endpoint"); err != nil {
			return nil, err
		}
	}
	for i, e := range cfg.Endpoints {
		headers := map[string]string{}
		for name, value := range e.Headers {
			v, err := expandEnv(value)
			if err != nil {
				return nil, fmt.Errorf("config browserEndpoints[%d] header %s: %w", i, name, err)
			}
			headers[name] = v
		}
		if err := add(e.URL, headers, fmt.Sprintf("config browserEndpoints[%d]", i)); err != nil {
			return nil, err
		}
	}
	return eps, nil
}

// expandEnv replaces ${VAR} (and $VAR) in s with the environment's value;
// a variable that is not set is an error naming it.
func expandEnv(s string) (string, error) {
	var missing []string
	out := os.Expand(s, func(name string) string {
		v, ok := os.LookupEnv(name)
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("environment variable %s is not set", strings.Join(missing, ", "))
	}
	return out, nil
}

// minResultBytes is the smallest --max-result-bytes: below it, plans and
// the notes that say how to read on would be cut.
const minResultBytes = 10000

// idleLinger is how long Chromium outlives its last context: long enough
// that browser_close followed by a new task (an agent starting over, an
// evaluation's next run) skips the browser's start, short enough that a
// closed browser's memory is soon given back.
const idleLinger = 30 * time.Second

// The sides a viewport may have.
const (
	minViewport = 16
	maxViewport = 16384
)

func parseViewport(s string) (*playwright.Size, error) {
	w, h, ok := strings.Cut(strings.ToLower(s), "x")
	if !ok {
		return nil, fmt.Errorf("want WIDTHxHEIGHT, got %q", s)
	}
	wi, err1 := strconv.Atoi(strings.TrimSpace(w))
	hi, err2 := strconv.Atoi(strings.TrimSpace(h))
	if err1 != nil || err2 != nil || wi <= 0 || hi <= 0 {
		return nil, fmt.Errorf("want WIDTHxHEIGHT in pixels, got %q", s)
	}
	if wi < minViewport || hi < minViewport || wi > maxViewport || hi > maxViewport {
		return nil, fmt.Errorf("%q: each side must be %d to %d pixels", s, minViewport, maxViewport)
	}
	return &playwright.Size{Width: wi, Height: hi}, nil
}

func printConnect(w io.Writer, url string) {
	self, err := os.Executable()
	if err != nil {
		self = "retrace"
	}
	fmt.Fprintf(w, `retrace is serving MCP (Streamable HTTP) at %s

Connect an HTTP client:
  Cursor (~/.cursor/mcp.json):   {"mcpServers": {"retrace": {"url": "%s"}}}
  VS Code (.vscode/mcp.json):    {"servers": {"retrace": {"type": "http", "url": "%s"}}}
  Claude Code:                   claude mcp add --transport http retrace %s

Or run it over stdio instead (Claude Desktop / Claude Code):
  {"mcpServers": {"retrace": {"command": %q, "args": []}}}
VS Code (.vscode/mcp.json):
  {"servers": {"retrace": {"type": "stdio", "command": %q, "args": []}}}

Press Ctrl+C to stop.
`, url, url, url, url, self, self)
}

func install(args []string) error {
	fs := flag.NewFlagSet("retrace install", flag.ContinueOnError)
	dir := fs.String("driver-dir", "", "where to install the driver (default $RETRACE_DRIVER_DIR or the user cache dir)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := browser.Install(ctx, *dir, os.Stderr); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "retrace is ready.")
	return nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// wantsHelp reports whether the command line asks for the help.
func wantsHelp(args []string) bool {
	return slices.ContainsFunc(args, func(a string) bool {
		return a == "-h" || a == "--h" || a == "-help" || a == "--help"
	})
}

// flagGroups sorts the flags for --help: each group, then its flags in
// the order given. A flag in no group is listed under "Other"
// (TestHelpGroupsEveryFlag keeps that list empty).
var flagGroups = []struct {
	name  string
	flags []string
}{
	{"Server", []string{"port", "host", "log-file", "output-dir", "caps", "save-trace", "save-video", "error-style", "instance", "max-sessions", "session-idle-timeout"}},
	{"Browser", []string{"headless", "executable-path", "viewport-size", "device", "user-agent", "ignore-https-errors", "init-script", "dialog", "isolated", "user-data-dir", "proxy-server", "proxy-bypass",
		"cdp-endpoint", "browser-endpoint", "browser-endpoint-header", "no-sandbox", "driver-dir"}},
	{"Roles (signed-in users; docs/roles.md)", []string{"config", "role", "storage-state"}},
	{"Safety", []string{"allowed-origins", "blocked-origins", "allow-file-urls", "allowed-dirs", "allow-broad-dirs", "no-evaluate",
		"auth-token", "insecure-no-auth", "allowed-hosts", "allowed-http-origins"}},
	{"Limits", []string{"timeout-action", "timeout-navigation", "snapshot-budget", "max-result-bytes"}},
}

const usageHead = `retrace: an MCP server that gives agents a real browser, and whose every
error is a recovery plan.

Usage:
  retrace [flags]        serve MCP over stdio (Streamable HTTP with --port)
  retrace install        install the Playwright driver, check Chromium
  retrace eval           measure how often agents recover from faults, on any MCP server (retrace eval --help)
  retrace roles check    compare roles over a list of URLs, write a permission matrix (retrace roles check --help)
  retrace version

Examples:
  retrace                                        stdio, for Claude Desktop, Cursor or VS Code
  retrace --port 8931                            Streamable HTTP at http://127.0.0.1:8931/mcp
  retrace --config roles.json                    signed-in roles: admin, customer... (docs/roles.md)
  retrace --allowed-origins "app.example.com"    load only that site
  retrace --browser-endpoint ws://host:3000/     browsers on a Playwright browser server
  retrace eval --out eval-out                    the recovery benchmark (docs/eval.md)

Every flag can also be set as RETRACE_<FLAG> (for example RETRACE_PORT=8931).
`

// printUsage writes the help: the commands, examples, then the flags by
// group.
func printUsage(fs *flag.FlagSet) {
	w := fs.Output()
	fmt.Fprint(w, usageHead)
	seen := map[string]bool{}
	group := func(name string, names []string) {
		var fl []*flag.Flag
		for _, n := range names {
			if f := fs.Lookup(n); f != nil {
				fl = append(fl, f)
				seen[n] = true
			}
		}
		if len(fl) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s:\n", name)
		for _, f := range fl {
			kind, usage := flag.UnquoteUsage(f)
			head := "  --" + f.Name
			if kind != "" {
				head += " " + kind
			}
			if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
				usage += " (default " + f.DefValue + ")"
			}
			fmt.Fprintf(w, "%s\n      %s\n", head, usage)
		}
	}
	for _, g := range flagGroups {
		group(g.name, g.flags)
	}
	var other []string
	fs.VisitAll(func(f *flag.Flag) {
		if !seen[f.Name] {
			other = append(other, f.Name)
		}
	})
	group("Other", other)
}

// applyConfig sets, from the --config file's keys that playwright-mcp's
// config uses (browser, server, network, timeouts, capabilities,
// outputDir), every flag that neither the command line (given) nor the
// environment set: a config written for playwright-mcp works here.
func applyConfig(fs *flag.FlagSet, path string, given map[string]bool) error {
	vals, err := roles.FlagValues(path)
	if err != nil {
		return err
	}
	for name, v := range vals {
		if _, fromEnv := os.LookupEnv(envName(name)); given[name] || fromEnv {
			continue
		}
		for _, one := range strings.Split(v, "\n") {
			if err := fs.Set(name, one); err != nil {
				return fmt.Errorf("config %s: %s: %v", path, name, err)
			}
		}
	}
	return nil
}
