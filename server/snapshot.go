package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/retrace-dev/retrace/llmerr"
)

type snapshotArgs struct{}

func (s *Server) addSnapshotTools() {
	addTool(s, &mcp.Tool{
		Name:        "browser_snapshot",
		Description: "Read the current page as a compact accessibility tree. Every element you can act on carries a ref like e12; pass it to browser_click or browser_type. Iframes are expanded inline.",
		Annotations: &mcp.ToolAnnotations{Title: "Page snapshot", ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, s.snapshot)
}

func (s *Server) snapshot(ctx context.Context, c *call, _ snapshotArgs) (*result, error) {
	r := c.sess.role(defaultRole)
	r.mu.Lock()
	defer r.mu.Unlock()
	tab, err := r.ensureTab()
	if err != nil {
		return nil, err
	}
	snap, err := r.eng.Capture(tab.Page, r.reg)
	if err != nil {
		return nil, llmerr.Classify(err, llmerr.Situation{Tool: c.tool, URL: tab.Page.URL()})
	}
	text := snap.Text()
	var extra []byte
	for _, d := range tab.TakeDialogs() {
		extra = append(extra, "\nDialog: "+d.String()...)
	}
	return &result{text: text + string(extra)}, nil
}
