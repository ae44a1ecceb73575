// Package peer installs the browser MCP server the benchmarks measure
// retrace against: @playwright/mcp, at one pinned release, from npm. The
// benchmarks share one install, in the user's cache directory, so that
// they measure the same peer and download it once.
package peer

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Version is the pinned @playwright/mcp release measured against.
const Version = "0.0.83"

// Install installs the pinned peer from npm into dir (once) and returns
// the path of its CLI, which node runs. An empty dir is the user's cache
// directory. It tells logger when it installs, as that takes a while, and
// npm's errors go to logger's writer.
func Install(dir string, logger *log.Logger) (string, error) {
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		dir = filepath.Join(cache, "retrace", "peers", "playwright-mcp-"+Version)
	}
	cli := filepath.Join(dir, "node_modules", "@playwright", "mcp", "cli.js")
	if _, err := os.Stat(cli); err == nil {
		return cli, nil
	}
	logger.Printf("installing @playwright/mcp@%s into %s", Version, dir)
	npm := exec.Command("npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", dir, "@playwright/mcp@"+Version)
	npm.Stderr = logger.Writer()
	if err := npm.Run(); err != nil {
		return "", fmt.Errorf("npm install @playwright/mcp@%s: %w", Version, err)
	}
	return cli, nil
}

// ClickRefArg finds the argument of browser_click that takes the ref:
// "ref" for retrace and older releases of playwright-mcp, "target" in
// newer ones. It falls back to "ref" when the tools cannot be listed.
func ClickRefArg(ctx context.Context, cs *mcp.ClientSession) string {
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return "ref"
	}
	for _, t := range tools.Tools {
		if t.Name != "browser_click" {
			continue
		}
		if m, ok := t.InputSchema.(map[string]any); ok {
			if props, ok := m["properties"].(map[string]any); ok {
				if _, ok := props["target"]; ok {
					return "target"
				}
			}
		}
	}
	return "ref"
}
