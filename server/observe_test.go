package server

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/retrace-dev/retrace/llmerr"
)

func TestConsoleMessages(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_observe.html")})
	c.ok("browser_wait_for", map[string]any{"time": 0.2})
	all := c.ok("browser_console_messages", nil)
	mustContain(t, all, "[info] page ready (", "_observe.html:", "[info] info line", "[warning] deprecated API used",
		"[error] widget failed to load", "[error] Uncaught Error: boom in timer")
	if strings.Contains(all, "debug detail") {
		t.Errorf("debug shown at the default level:\n%s", all)
	}
	errs := c.ok("browser_console_messages", map[string]any{"level": "error"})
	if strings.Contains(errs, "[warning]") || strings.Contains(errs, "[info]") || !strings.Contains(errs, "widget failed") {
		t.Errorf("level=error:\n%s", errs)
	}
	mustContain(t, c.ok("browser_console_messages", map[string]any{"level": "debug"}), "[debug] debug detail")
	// Messages of a page left are still listed, marked as such.
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html")})
	mustContain(t, c.ok("browser_console_messages", map[string]any{"level": "error"}), "widget failed to load (", "(on an earlier page)")
	r := c.fail("browser_console_messages", map[string]any{"level": "fatal"}, llmerr.InvalidParams)
	mustContain(t, r.Text, `"fatal" is not a console level`)
}

func TestNetworkRequests(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_observe.html")})
	snap := c.ok("browser_snapshot", nil)
	c.ok("browser_click", map[string]any{"ref": refOf(t, snap, `button "Load orders"`)})
	c.ok("browser_wait_for", map[string]any{"time": 0.3})
	res := c.ok("browser_network_requests", nil)
	mustContain(t, res, "GET "+fx.Page("_observe.html")+" → 200 [document",
		"GET "+fx.Page("status/404")+" → 404 [fetch",
		"GET "+fx.DeadURL+"/api/orders → FAILED net::ERR_CONNECTION_REFUSED [fetch]")
	only := c.ok("browser_network_requests", map[string]any{"filter": "/api/orders"})
	if strings.Contains(only, "→ 404") || !strings.Contains(only, "ERR_CONNECTION_REFUSED") {
		t.Errorf("filter:\n%s", only)
	}
	mustContain(t, c.ok("browser_network_requests", map[string]any{"filter": `/status/\d+$/`}), "→ 404")
	mustContain(t, c.ok("browser_network_requests", map[string]any{"filter": "nothing-like-this"}), "No request matches")
	c.fail("browser_network_requests", map[string]any{"filter": "/([/"}, llmerr.InvalidParams)
}

func TestScreenshot(t *testing.T) {
	t.Parallel()
	c := connect(t, Config{})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_observe.html")})
	shot := func(args map[string]any) (string, image.Image, string) {
		t.Helper()
		res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "browser_take_screenshot", Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("screenshot %v: %v %v", args, err, res)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		img := res.Content[1].(*mcp.ImageContent)
		var dec image.Image
		if img.MIMEType == "image/jpeg" {
			dec, err = jpeg.Decode(bytes.NewReader(img.Data))
		} else {
			dec, err = png.Decode(bytes.NewReader(img.Data))
		}
		if err != nil {
			t.Fatalf("%s does not decode: %v", img.MIMEType, err)
		}
		return text, dec, img.MIMEType
	}
	text, img, mime := shot(nil)
	if mime != "image/png" || img.Bounds().Dx() > maxShotWidth || img.Bounds().Dx() < 800 {
		t.Errorf("viewport shot: %s %v", mime, img.Bounds())
	}
	mustContain(t, text, "Screenshot of the viewport of "+fx.Page("_observe.html"))
	// The element shot is the red box, at its size.
	snap := c.ok("browser_snapshot", nil)
	_, box, _ := shot(map[string]any{"ref": refOf(t, snap, `button "Red box"`)})
	if dx, dy := box.Bounds().Dx(), box.Bounds().Dy(); dx < 199 || dx > 201 || dy < 99 || dy > 101 {
		t.Errorf("element shot is %v, want 200x100 (give or take a subpixel row)", box.Bounds())
	}
	if r, g, b, _ := box.At(100, 50).RGBA(); r>>8 != 255 || g>>8 != 0 || b>>8 != 0 {
		t.Errorf("the box is not red in the shot: %d %d %d", r>>8, g>>8, b>>8)
	}
	_, _, mime = shot(map[string]any{"type": "jpeg", "fullPage": true})
	if mime != "image/jpeg" {
		t.Errorf("type jpeg gave %s", mime)
	}
	r := c.fail("browser_take_screenshot", map[string]any{"ref": "e1", "fullPage": true}, llmerr.InvalidParams)
	mustContain(t, r.Text, "cannot be used together")
	c.fail("browser_take_screenshot", map[string]any{"type": "gif"}, llmerr.InvalidParams)
	c.fail("browser_take_screenshot", map[string]any{"ref": "e999"}, llmerr.UnknownRef)
}

func TestFitWidth(t *testing.T) {
	t.Parallel()
	src := image.NewRGBA(image.Rect(0, 0, 2560, 100))
	for x := 0; x < 2560; x++ {
		for y := 0; y < 100; y++ {
			if x < 1280 {
				src.Pix[(y*2560+x)*4+3] = 255 // left half opaque black
			}
		}
	}
	out := fitWidth(src, 1280)
	if out.Bounds().Dx() != 1280 || out.Bounds().Dy() != 50 {
		t.Fatalf("scaled to %v", out.Bounds())
	}
	if _, _, _, a := out.At(10, 10).RGBA(); a>>8 != 255 {
		t.Errorf("left half lost its alpha: %d", a>>8)
	}
	if _, _, _, a := out.At(1270, 10).RGBA(); a != 0 {
		t.Errorf("right half gained alpha: %d", a)
	}
}
