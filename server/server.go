// Package server is retrace's MCP layer: the tool definitions and handlers,
// the per-session state that wires the browser, snapshot and ref packages
// together, and the transports.
package server

import (
	"context"
	"crypto/rand"
	_ "embed"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/roles"
)

//go:embed instructions.md
var instructions string

// Version is the server version reported to clients and printed by
// retrace version.
const Version = "0.1.0"

// DefaultMaxResultBytes is the most text one tool result carries unless
// Config.MaxResultBytes says otherwise: well under the buffers of the MCP
// clients (the TypeScript SDK's stdio transport stops at 10 MB).
const DefaultMaxResultBytes = 1_000_000

// Config holds what the server needs beyond the browser manager.
type Config struct {
	// ActionTimeout and NavigationTimeout override the manager's, when set.
	ActionTimeout     time.Duration
	NavigationTimeout time.Duration
	// SnapshotBudget is the default size budget of browser_snapshot, in
	// characters of tree; 0 means no limit.
	SnapshotBudget int
	// MaxResultBytes is the most text one tool result may carry, in bytes;
	// 0 means DefaultMaxResultBytes. A snapshot past it is cut and read on
	// with offset; other results are cut with a note saying what to do.
	MaxResultBytes int
	// Roles are the users an agent can act as; nil means only the default
	// role.
	Roles *roles.Config
	// UploadDirs are the directories browser_file_upload may take files
	// from; empty means DefaultUploadDir.
	UploadDirs []string
	// DefaultUploadDir is where uploads come from when UploadDirs is
	// empty, created 0700 on first use; empty means
	// <user cache dir>/retrace/uploads.
	DefaultUploadDir string
	// AllowBroadDirs lets UploadDirs name the root or the home directory,
	// which CheckUploadDirs otherwise refuses.
	AllowBroadDirs bool
	// NoEvaluate leaves browser_evaluate out of the tools.
	NoEvaluate bool
	// Upstream is the proxy the network guard sends requests on to
	// (--proxy-server, --proxy-bypass); zero means direct.
	Upstream Upstream
	// StorageState is a Playwright storage-state file (cookies, local
	// storage) the default role's context starts with (--storage-state):
	// not a role's sign-in, which the server would check and keep.
	StorageState string
	// Caps are the capabilities whose tools are listed besides the default
	// set (--caps): "pdf" adds browser_pdf_save. The default set stays
	// within the tools/list token budget.
	Caps []string
	// OutputDir is where files the server writes go (downloads), created
	// 0700 on first use; empty means <user cache dir>/retrace/output.
	OutputDir string
	// SaveTrace records a Playwright trace of each role's context, saved
	// to OutputDir when it closes (--save-trace); SaveVideo, when set,
	// records a video of each page at that size (--save-video; needs
	// ffmpeg, browser.VideoRegistry).
	SaveTrace bool
	SaveVideo *playwright.Size
	// RecordTo, when set, is where the server writes, when it closes, the
	// actions of its sessions as a Playwright test (retrace record).
	RecordTo string
	// InitScripts run in every page of every role before the page's own
	// scripts (--init-script): their text, read at start.
	InitScripts []string
	// Instance names this process among several behind one reverse proxy:
	// every Streamable HTTP session ID starts with it and a dash, so the
	// proxy can send a session's requests back here (docs/deploy.md).
	// Empty means plain random IDs. CheckInstance says what is accepted.
	Instance string
	// Origins limits what the browser may load.
	Origins      OriginPolicy
	ErrorStyle   llmerr.Style
	DialogPolicy browser.DialogPolicy
	Logger       *slog.Logger
}

// Server is one retrace MCP server. Every MCP session (one per stdio
// connection, one per Streamable HTTP session) gets its own browser
// contexts, refs and state; Chromium itself is shared through the manager.
type Server struct {
	cfg      Config
	browsers *browser.Manager
	mcp      *mcp.Server
	log      *slog.Logger

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*session
	// recorded are the sessions whose actions retrace record writes as a
	// test when the server closes (Config.RecordTo).
	recorded []*session

	// quickMouse counts the clicks and hovers the mouse made at once,
	// without Playwright's waits (tests tell the two paths apart by it).
	quickMouse atomic.Int64
}

// New builds a server that gets its browsers from m.
func New(cfg Config, m *browser.Manager) *Server {
	if cfg.ErrorStyle == "" {
		cfg.ErrorStyle = llmerr.StyleRecovery
	}
	if cfg.DialogPolicy == "" {
		cfg.DialogPolicy = browser.DialogDismiss
	}
	if cfg.ActionTimeout == 0 {
		cfg.ActionTimeout = m.Options().ActionTimeout
	}
	if cfg.NavigationTimeout == 0 {
		cfg.NavigationTimeout = m.Options().NavigationTimeout
	}
	if cfg.MaxResultBytes <= 0 {
		cfg.MaxResultBytes = DefaultMaxResultBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Roles == nil {
		cfg.Roles = roles.New()
	}
	if cfg.Origins.AllowFileURLs && len(cfg.Origins.FileDirs) == 0 {
		// file: URLs load from the same directories uploads come from, and
		// from nowhere when none is named.
		for _, d := range cfg.UploadDirs {
			if abs, err := filepath.Abs(d); err == nil {
				if real, err := filepath.EvalSymlinks(abs); err == nil {
					abs = real
				}
				cfg.Origins.FileDirs = append(cfg.Origins.FileDirs, abs)
			}
		}
	}
	s := &Server{cfg: cfg, browsers: m, log: cfg.Logger,
		sessions: map[*mcp.ServerSession]*session{}}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "retrace", Title: "retrace browser", Version: Version},
		&mcp.ServerOptions{Instructions: instructions, Logger: cfg.Logger, GetSessionID: sessionIDs(cfg.Instance),
			// Tools only: nothing is sent as MCP log messages (a feature the
			// protocol has deprecated), so logging is not declared. A long
			// call tells its progress instead (progressWhile).
			Capabilities: &mcp.ServerCapabilities{}})
	// The tools, one family per tool_*.go file.
	s.addNavigateTools()
	s.addTabTools()
	s.addDialogTools()
	s.addWaitTools()
	s.addObserveTools()
	s.addInputTools()
	s.addFormTools()
	s.addStructureTools()
	s.addSnapshotTools()
	s.addEvaluateTools()
	s.addRoleTools()
	s.addCompareTools()
	s.addCaps(cfg.Caps)
	return s
}

// CheckInstance reports what is wrong with an instance name: it must be 1
// to 32 letters, digits, dots or underscores, so that it fits a session ID
// header as is and a proxy can match it with a plain prefix.
func CheckInstance(name string) error {
	if name == "" {
		return nil
	}
	if len(name) > 32 {
		return fmt.Errorf("%d characters; at most 32", len(name))
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_') {
			return fmt.Errorf("%q may hold only letters, digits, dots and underscores", name)
		}
	}
	return nil
}

// sessionIDs makes the session IDs of an instance: its name, a dash and
// 128 random bits. With no name, the SDK's own random IDs.
func sessionIDs(instance string) func() string {
	if instance == "" {
		return nil
	}
	return func() string { return instance + "-" + rand.Text() }
}

// MCP returns the underlying MCP server, for transports and tests.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// RunStdio serves one session over in and out, one JSON-RPC message per
// line, until the client leaves. Nothing else may write to out.
func (s *Server) RunStdio(ctx context.Context, in io.ReadCloser, out io.Writer) error {
	return s.mcp.Run(ctx, stdio(in, out, s.log))
}

// session returns the state of ss, creating it on first use. The state is
// released (its browser contexts closed) when the session ends.
func (s *Server) session(ss *mcp.ServerSession) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.sessions[ss]; ok {
		return st
	}
	st := newSession(s)
	s.sessions[ss] = st
	if s.cfg.RecordTo != "" {
		s.recorded = append(s.recorded, st)
	}
	if ss != nil {
		go func() {
			_ = ss.Wait()
			s.mu.Lock()
			delete(s.sessions, ss)
			s.mu.Unlock()
			st.close()
		}()
	}
	return st
}

// abortSession closes the browser contexts of the session with the given
// MCP session ID at once, so its calls in flight end and the session can
// close: the SDK's close waits for them.
func (s *Server) abortSession(id string) {
	s.mu.Lock()
	var found *session
	for ss, st := range s.sessions {
		if ss != nil && ss.ID() == id {
			found = st
		}
	}
	s.mu.Unlock()
	if found != nil {
		found.abort()
	}
}

// Close releases every session's browser contexts.
func (s *Server) Close() {
	s.mu.Lock()
	all := s.sessions
	s.sessions = map[*mcp.ServerSession]*session{}
	s.mu.Unlock()
	for _, st := range all {
		st.close()
	}
	if s.cfg.RecordTo != "" {
		if err := s.writeSessionTest(s.cfg.RecordTo); err != nil {
			s.log.Error("retrace record: writing the test", "path", s.cfg.RecordTo, "err", err)
		} else {
			s.log.Info("retrace record: wrote the session as a Playwright test", "path", s.cfg.RecordTo)
		}
	}
}
