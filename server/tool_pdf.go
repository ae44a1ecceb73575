package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/playwright-community/playwright-go"

	"github.com/retrace-dev/retrace/browser"
	"github.com/retrace-dev/retrace/llmerr"
)

type pdfArgs struct {
	Filename string `json:"filename,omitempty" jsonschema:"File name in --output-dir (default: page.pdf)"`
	roleArg
}

// pdfResult is what Page.PDF returned.
type pdfResult struct {
	b []byte
	e error
}

// addPDFTools adds the tools of --caps pdf.
func (s *Server) addPDFTools() {
	addTool(s, def("browser_pdf_save", "Save as PDF", readOnly, "Save the current page as a PDF file in --output-dir (headless Chromium)."), s.pdfSave)
}

func (s *Server) pdfSave(ctx context.Context, c *call, in pdfArgs) (*response, error) {
	_, tab, unlock, err := c.lockTab()
	if err != nil {
		return nil, err
	}
	defer unlock()
	raw, ok := bounded(s.cfg.NavigationTimeout, func() pdfResult {
		b, e := tab.Page.PDF(playwright.PagePdfOptions{PrintBackground: playwright.Bool(true)})
		return pdfResult{b, e}
	})
	if !ok {
		return nil, busyPage(c.tool, tab.Page.URL(), fmt.Errorf("no PDF within %s", s.cfg.NavigationTimeout))
	}
	if raw.e != nil {
		e := llmerr.Classify(raw.e, llmerr.Situation{Tool: c.tool, URL: tab.Page.URL()})
		if strings.Contains(strings.ToLower(raw.e.Error()), "headless") {
			e.Cause = "Chromium prints PDFs only when it runs headless"
			e.Note = "Start the server without --headless=false to save PDFs; browser_take_screenshot works headed too."
			e.Actions = []llmerr.Action{llmerr.Call("browser_take_screenshot", "a picture of the page instead", llmerr.A("fullPage", true))}
		}
		return nil, e
	}
	name := in.Filename
	if name == "" {
		name = "page.pdf"
	}
	path, err := s.writeOutput(name, ".pdf", raw.b)
	if err != nil {
		return nil, err
	}
	return textResponse(fmt.Sprintf("Saved %s as PDF (%s) to %s.", tab.Page.URL(), browser.HumanSize(int64(len(raw.b))), path)), nil
}
