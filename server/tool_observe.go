package server

import (
	"bytes"
	"context"
	"fmt"
	"image/jpeg"
	"image/png"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/llmerr"
)

type consoleArgs struct {
	Level string `json:"level,omitempty" jsonschema:"Least level shown: error, warning, info (default), debug"`
	roleArg
}

type networkArgs struct {
	Filter string `json:"filter,omitempty" jsonschema:"Only URLs containing this, or matching /regex/"`
	roleArg
}

type screenshotArgs struct {
	Ref      string `json:"ref,omitempty" jsonschema:"Only this element"`
	FullPage bool   `json:"fullPage,omitempty" jsonschema:"The whole scrollable page"`
	Type     string `json:"type,omitempty" jsonschema:"png (default) or jpeg"`
	Filename string `json:"filename,omitempty" jsonschema:"Also save to this file"`
	roleArg
}

// Bounds of what the observation tools return.
const (
	maxConsoleShown  = 100
	maxRequestsShown = 100
	maxShotWidth     = 1280
)

func (s *Server) addObserveTools() {
	addTool(s, def("browser_console_messages", "Console messages", readOnly, "Console messages and uncaught errors of the tab, newest last."), s.consoleMessages)
	addTool(s, def("browser_network_requests", "Network requests", readOnly, "Requests of the current tab: method, URL, status or failure, type, size."), s.networkRequests)
	addTool(s, def("browser_take_screenshot", "Screenshot", readOnly, "Screenshot of the viewport, the full page or an element (ref), at most 1280 px wide."), s.screenshot)
}

var levelRank = map[string]int{"error": 0, "warning": 1, "info": 2, "debug": 3}

func (s *Server) consoleMessages(ctx context.Context, c *call, in consoleArgs) (*response, error) {
	level := strings.ToLower(strings.TrimSpace(in.Level))
	if level == "" {
		level = "info"
	}
	rank, ok := levelRank[level]
	if !ok {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool,
			Message: fmt.Sprintf("%q is not a console level.", in.Level), Cause: "level is error, warning, info or debug",
			Actions: []llmerr.Action{llmerr.Call(c.tool, "errors only", llmerr.A("level", "error"))}}
	}
	_, tab, unlock, err := c.lockTab()
	if err != nil {
		return nil, err
	}
	defer unlock()
	all, dropped := tab.Console()
	nav := tab.Navigations()
	var shown []browser.ConsoleEntry
	for _, e := range all {
		if levelRank[e.Level] <= rank {
			shown = append(shown, e)
		}
	}
	var b strings.Builder
	if len(shown) == 0 {
		fmt.Fprintf(&b, "No console messages at level %s or more severe (%d in all).", level, len(all))
		return textResponse(b.String()), nil
	}
	matched := len(shown)
	shown, head := newest(shown, maxConsoleShown, dropped, "messages")
	lines := make([]string, len(shown))
	for i, e := range shown {
		l := fmt.Sprintf("[%s] %s", e.Level, oneLineCut(e.Text, 500))
		if e.Where != "" {
			l += fmt.Sprintf(" (%s)", e.Where)
		}
		if e.Nav < nav {
			l += " (on an earlier page)"
		}
		lines[i] = l
	}
	// Within the result limit, newest kept.
	lines, over := fitLines(lines, s.outputRoom(), true)
	if over > 0 {
		head = fmt.Sprintf("[%d older messages not shown: the result limit is reached; level=\"error\" shows fewer]\n", matched-len(lines))
	}
	b.WriteString(head)
	// The messages are the page's words, fenced like a snapshot's tree.
	b.WriteString(strings.Join(fenceBlock(lines), "\n"))
	return textResponse(b.String()), nil
}

// staticTypes are the resource types left out by default when they
// succeeded.
var staticTypes = map[string]bool{"image": true, "stylesheet": true, "font": true, "script": true, "media": true, "manifest": true}

func (s *Server) networkRequests(ctx context.Context, c *call, in networkArgs) (*response, error) {
	match := func(string) bool { return true }
	if f := in.Filter; f != "" {
		if len(f) > 2 && strings.HasPrefix(f, "/") && strings.HasSuffix(f, "/") {
			re, err := regexp.Compile(f[1 : len(f)-1])
			if err != nil {
				return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool,
					Message: fmt.Sprintf("filter %s is not a valid regular expression: %v.", f, err), Cause: "the /.../ form is a Go (RE2) regular expression",
					Actions: []llmerr.Action{llmerr.Call(c.tool, "with a plain substring instead", llmerr.A("filter", "api"))}}
			}
			match = re.MatchString
		} else {
			match = func(u string) bool { return strings.Contains(u, f) }
		}
	}
	r, tab, unlock, err := c.lockTab()
	if err != nil {
		return nil, err
	}
	defer unlock()
	all, dropped := tab.Requests()
	r.nameGuardFailures(all)
	var shown []browser.RequestEntry
	hidden := 0
	for _, r := range all {
		if !match(r.URL) {
			continue
		}
		if in.Filter == "" && staticTypes[r.Type] && r.Failed == "" && r.Status > 0 && r.Status < 400 {
			hidden++
			continue
		}
		shown = append(shown, r)
	}
	var b strings.Builder
	matched := len(shown)
	shown, head := newest(shown, maxRequestsShown, dropped, "requests")
	lines := make([]string, len(shown))
	numbered := s.hasCap("network")
	for i, r := range shown {
		lines[i] = oneLineCut(r.String(), 600)
		if numbered {
			// browser_network_request takes the number.
			lines[i] = fmt.Sprintf("#%d %s", r.ID, lines[i])
		}
	}
	lines, over := fitLines(lines, s.outputRoom(), true)
	if over > 0 {
		head = fmt.Sprintf("[%d older requests not shown: the result limit is reached; filter= shows fewer]\n", matched-len(lines))
	}
	b.WriteString(head)
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	if hidden > 0 {
		fmt.Fprintf(&b, "[%d successful static files (scripts, styles, images, fonts) not listed; filter=\"/./\" lists everything]\n", hidden)
	}
	if b.Len() == 0 {
		if in.Filter != "" {
			return textResponse(fmt.Sprintf("No request matches %q (%d in all).", in.Filter, len(all))), nil
		}
		return textResponse("No requests yet in this tab."), nil
	}
	return textResponse(b.String()), nil
}

func (s *Server) screenshot(ctx context.Context, c *call, in screenshotArgs) (*response, error) {
	kind := strings.ToLower(strings.TrimSpace(in.Type))
	if kind == "" {
		kind = "png"
	}
	if kind == "jpg" {
		kind = "jpeg"
	}
	if kind != "png" && kind != "jpeg" {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool,
			Message: fmt.Sprintf("%q is not an image type.", in.Type), Cause: "type is png or jpeg",
			Actions: []llmerr.Action{llmerr.Call(c.tool, "as JPEG", llmerr.A("type", "jpeg"))}}
	}
	if in.Ref != "" && in.FullPage {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: c.tool, Ref: in.Ref,
			Message: "ref and fullPage cannot be used together.", Cause: "a screenshot is of one element or of the whole page",
			Actions: []llmerr.Action{
				llmerr.Call(c.tool, "the element only", llmerr.A("ref", in.Ref)),
				llmerr.Call(c.tool, "or the whole page", llmerr.A("fullPage", true)),
			}}
	}
	timeout := playwright.Float(float64(s.cfg.ActionTimeout.Milliseconds()))
	var raw []byte
	var what string
	if in.Ref != "" {
		r, unlock, err := c.lockRole()
		if err != nil {
			return nil, err
		}
		defer unlock()
		t, err := c.resolve(r, in.Ref, c.sameCall())
		if err != nil {
			return nil, err
		}
		raw, err = t.el.Screenshot(playwright.ElementHandleScreenshotOptions{Type: playwright.ScreenshotTypePng, Timeout: timeout})
		if err != nil {
			return nil, shotError(c.tool, t.tab, err, llmerr.Situation{Tool: c.tool, Ref: in.Ref, Element: t.rec.Element(), URL: t.rec.URL, Timeout: s.cfg.ActionTimeout})
		}
		what = describe(t.rec, "")
	} else {
		_, tab, unlock, err := c.lockTab()
		if err != nil {
			return nil, err
		}
		defer unlock()
		raw, err = tab.Page.Screenshot(playwright.PageScreenshotOptions{Type: playwright.ScreenshotTypePng, FullPage: playwright.Bool(in.FullPage), Timeout: timeout})
		if err != nil {
			return nil, shotError(c.tool, tab, err, llmerr.Situation{Tool: c.tool, URL: tab.Page.URL(), Timeout: s.cfg.ActionTimeout})
		}
		what = "the viewport of " + tab.Page.URL()
		if in.FullPage {
			what = "the full page " + tab.Page.URL()
		}
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("decoding the screenshot: %w", err)
	}
	w0, h0 := img.Bounds().Dx(), img.Bounds().Dy()
	img = fitWidth(img, maxShotWidth)
	var buf bytes.Buffer
	mime := "image/png"
	if kind == "jpeg" {
		mime = "image/jpeg"
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80})
	} else {
		err = png.Encode(&buf, img)
	}
	if err != nil {
		return nil, err
	}
	w, h := img.Bounds().Dx(), img.Bounds().Dy()
	text := fmt.Sprintf("Screenshot of %s: %dx%d %s, %s.", what, w, h, strings.ToUpper(kind), browser.HumanSize(int64(buf.Len())))
	if w != w0 {
		text += fmt.Sprintf(" Scaled down from %dx%d.", w0, h0)
	}
	if in.Filename != "" {
		path, err := s.writeOutput(in.Filename, "."+map[string]string{"png": "png", "jpeg": "jpg"}[kind], buf.Bytes())
		if err != nil {
			return nil, err
		}
		text += " Saved to " + path + "."
	}
	res := textResponse(text)
	res.images = []*mcp.ImageContent{{Data: buf.Bytes(), MIMEType: mime}}
	return res, nil
}

// newest keeps the last max items of a history and says above them what is
// left out: items not shown, or older ones the journal did not keep.
func newest[T any](items []T, max, dropped int, noun string) ([]T, string) {
	if len(items) > max {
		return items[len(items)-max:], fmt.Sprintf("[%d older %s not shown]\n", len(items)-max, noun)
	}
	if dropped > 0 {
		return items, fmt.Sprintf("[%d older %s were not kept]\n", dropped, noun)
	}
	return items, ""
}

// shotError classifies a failed screenshot; one that timed out on a page
// that does not answer says so, since waiting longer will not help.
func shotError(tool string, tab *browser.Tab, err error, sit llmerr.Situation) error {
	e := llmerr.Classify(err, sit)
	if e.Code == llmerr.ActionTimeout && !answers(tab) {
		return busyPage(tool, tab.Page.URL(), err)
	}
	return e
}
