package eval

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is an MCP browser server under evaluation: a command the
// evaluation starts over stdio, as any MCP client would, and talks to only
// through the protocol. retrace itself is one, started from its binary.
type Server struct {
	// Name labels the server in the report.
	Name string
	// Command is the shell command line that starts it (run with sh -c, as
	// `exec COMMAND`, so the process is the server itself).
	Command string
	// Dir is the working directory of its processes ("": a fresh temporary
	// one per process, as some servers write files into their directory).
	Dir string
	// Log, when set, gets the processes' stderr.
	Log io.Writer

	// What probing it found: its own name and version, its tools and
	// the adapter that maps the evaluation's calls onto them.
	info    *mcp.Implementation
	tools   []*mcp.Tool
	adapter *Adapter
}

// Adapter maps the calls policies make onto one server's tools. Policies
// speak retrace's tool and argument names (browser_navigate(url),
// browser_click(ref), ...); a server whose names differ gets an adapter,
// written as data in adapters.json, not as code.
type Adapter struct {
	Name string `json:"name"`
	// Detect is a tool whose presence in tools/list picks this adapter.
	Detect string `json:"detect"`
	// ServerName, when set, picks this adapter by the server's own name
	// (initialize's serverInfo.name) before any Detect is tried.
	ServerName string `json:"serverName,omitempty"`
	// Tools maps a policy's tool name to this server's tool, and the
	// policy's argument names to the server's.
	Tools map[string]ToolMap `json:"tools"`
	// RefLine matches one element line of a snapshot, with the named
	// groups role, name and ref.
	RefLine string `json:"refLine"`
	// Styles says the server renders errors in retrace's styles, chosen
	// with --error-style: the evaluation runs it once per style.
	Styles bool `json:"styles,omitempty"`
	// Roles says the server takes retrace's role configuration (--config):
	// scenarios with a role then run with it, in a process of their own.
	Roles bool `json:"roles,omitempty"`

	refLine *regexp.Regexp
}

// ToolMap is one tool of an adapter.
type ToolMap struct {
	Name string            `json:"name"`
	Args map[string]string `json:"args,omitempty"`
}

//go:embed adapters.json
var adaptersJSON []byte

// Adapters returns the built-in adapters, in the order they are tried.
func Adapters() ([]*Adapter, error) {
	var as []*Adapter
	if err := json.Unmarshal(adaptersJSON, &as); err != nil {
		return nil, fmt.Errorf("eval/adapters.json: %w", err)
	}
	for _, a := range as {
		re, err := regexp.Compile(a.RefLine)
		if err != nil {
			return nil, fmt.Errorf("eval/adapters.json: %s: refLine: %w", a.Name, err)
		}
		for _, g := range []string{"role", "name", "ref"} {
			if re.SubexpIndex(g) < 0 {
				return nil, fmt.Errorf("eval/adapters.json: %s: refLine has no group %q", a.Name, g)
			}
		}
		a.refLine = re
	}
	return as, nil
}

// pick returns the adapter for a server with this name and these tools.
func pick(as []*Adapter, info *mcp.Implementation, tools []*mcp.Tool) (*Adapter, error) {
	if info != nil {
		for _, a := range as {
			if a.ServerName != "" && a.ServerName == info.Name {
				return a, nil
			}
		}
	}
	for _, a := range as {
		if slices.ContainsFunc(tools, func(t *mcp.Tool) bool { return t.Name == a.Detect }) {
			return a, nil
		}
	}
	names := make([]string, len(as))
	for i, a := range as {
		names[i] = a.Name + " (" + a.Detect + ")"
	}
	return nil, fmt.Errorf("no adapter knows its tools: eval/adapters.json has %s", strings.Join(names, ", "))
}

// Probe starts the server once, reads its name and tools, and picks its
// adapter: a command that does not start, or a server no adapter fits, is
// an error before any run.
func (s *Server) Probe(ctx context.Context, adapters []*Adapter) error {
	p, err := s.start(ctx, nil, nil)
	if err != nil {
		return err
	}
	defer p.Close()
	s.info = p.cs.InitializeResult().ServerInfo
	s.tools = p.tools
	if s.adapter, err = pick(adapters, s.info, s.tools); err != nil {
		return fmt.Errorf("server %s: %w", s.Name, err)
	}
	// The calls every policy and the harness make must reach a tool.
	for _, need := range []string{"browser_navigate", "browser_snapshot", "browser_click", "browser_type", "browser_evaluate"} {
		if tool, _ := p.native(need, nil); !p.has(tool) {
			return fmt.Errorf("server %s: adapter %s maps %s to %s, which its tools/list does not have", s.Name, s.adapter.Name, need, tool)
		}
	}
	return nil
}

// Styled reports whether the server renders retrace's error styles.
func (s *Server) Styled() bool { return s.adapter != nil && s.adapter.Styles }

// Version is the server's name and version as it gave them.
func (s *Server) Version() string {
	if s.info == nil {
		return ""
	}
	return s.info.Name + " " + s.info.Version
}

// proc is one running server process and the evaluation's MCP session
// with it.
type proc struct {
	server *Server
	cmd    *exec.Cmd
	cs     *mcp.ClientSession
	tools  []*mcp.Tool
	tmp    string
}

// start runs the server with extra arguments appended to its command and
// extra variables added to its environment.
func (s *Server) start(ctx context.Context, extra, env []string) (*proc, error) {
	line := s.Command
	for _, a := range extra {
		line += " " + shellQuote(a)
	}
	p := &proc{server: s}
	dir := s.Dir
	if dir == "" {
		var err error
		if p.tmp, err = os.MkdirTemp("", "retrace-eval-server-"); err != nil {
			return nil, err
		}
		dir = p.tmp
	}
	p.cmd = exec.Command("sh", "-c", "exec "+line)
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stderr = s.Log
	if s.Log == nil {
		p.cmd.Stderr = io.Discard
	}
	sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "retrace-eval", Version: "1"}, nil).
		Connect(sctx, &mcp.CommandTransport{Command: p.cmd, TerminateDuration: 3 * time.Second}, nil)
	if err != nil {
		p.removeTmp()
		return nil, fmt.Errorf("server %s (%s): %w", s.Name, line, err)
	}
	p.cs = cs
	for t, err := range cs.Tools(sctx, nil) {
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("server %s: tools/list: %w", s.Name, err)
		}
		p.tools = append(p.tools, t)
	}
	return p, nil
}

func (p *proc) has(tool string) bool {
	return slices.ContainsFunc(p.tools, func(t *mcp.Tool) bool { return t.Name == tool })
}

// Close ends the session, which stops the process.
func (p *proc) Close() {
	if p.cs != nil {
		p.cs.Close()
	}
	p.removeTmp()
}

func (p *proc) removeTmp() {
	if p.tmp != "" {
		os.RemoveAll(p.tmp)
	}
}

// native returns the server's tool and arguments for a policy's call. A
// tool the adapter does not map keeps its name, as do its arguments; a
// "ref" argument goes to "target" when the tool takes target and not ref
// (playwright-mcp's newer releases).
func (p *proc) native(tool string, args map[string]any) (string, map[string]any) {
	a := p.server.adapter
	if tm, ok := a.Tools[tool]; ok {
		out := make(map[string]any, len(args))
		for k, v := range args {
			if n, ok := tm.Args[k]; ok {
				k = n
			}
			out[k] = v
		}
		tool, args = tm.Name, out
	}
	if v, ok := args["ref"]; ok && !p.takes(tool, "ref") && p.takes(tool, "target") {
		args = maps(args)
		delete(args, "ref")
		args["target"] = v
	}
	return tool, args
}

// takes reports whether the tool's input schema has the property.
func (p *proc) takes(tool, prop string) bool {
	i := slices.IndexFunc(p.tools, func(t *mcp.Tool) bool { return t.Name == tool })
	if i < 0 {
		return false
	}
	m, ok := p.tools[i].InputSchema.(map[string]any)
	if !ok {
		return false
	}
	props, _ := m["properties"].(map[string]any)
	_, ok = props[prop]
	return ok
}

func maps(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// call makes one tool call and returns its text; a protocol error is an
// error result whose text says so.
func (p *proc) call(ctx context.Context, tool string, args map[string]any) (Result, string) {
	tool, args = p.native(tool, args)
	if args == nil {
		args = map[string]any{} // some servers refuse arguments: null
	}
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	res, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return Result{Text: "protocol error: " + err.Error(), IsError: true}, ""
	}
	var r Result
	r.IsError = res.IsError
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			r.Text += t.Text
		}
	}
	var code string
	if sc, ok := res.StructuredContent.(map[string]any); ok {
		code, _ = sc["code"].(string)
	}
	return r, code
}

// ParseServer reads a --server flag value, NAME=COMMAND.
func ParseServer(v string) (Server, error) {
	name, cmd, ok := strings.Cut(v, "=")
	name, cmd = strings.TrimSpace(name), strings.TrimSpace(cmd)
	if !ok || name == "" || cmd == "" {
		return Server{}, errors.New(`--server wants NAME=COMMAND, like retrace=bin/retrace or playwright-mcp="npx @playwright/mcp@0.0.83 --headless --isolated"`)
	}
	if strings.ContainsAny(name, " \t/") {
		return Server{}, fmt.Errorf("--server %q: the name is a label for the report, without spaces or slashes", name)
	}
	// Its processes run in a directory of their own: a relative program
	// path is made absolute from where eval was started.
	if prog, rest, _ := strings.Cut(cmd, " "); strings.Contains(prog, "/") && !filepath.IsAbs(prog) && !strings.ContainsAny(prog, `'"$\`) {
		if abs, err := filepath.Abs(prog); err == nil {
			cmd = strings.TrimSpace(shellQuote(abs) + " " + rest)
		}
	}
	return Server{Name: name, Command: cmd}, nil
}

// shellQuote quotes one argument for sh.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ':' || r == ',' ||
			(r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
