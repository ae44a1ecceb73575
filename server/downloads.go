package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/playwright-community/playwright-go"
)

// Downloads. A file the page downloads because of an action (a link with
// download, a response sent as an attachment) is saved in the output
// directory, and the action's result names it, its size and its path.

// downloadWait bounds saving one download: the file must have arrived.
const downloadWait = 30 * time.Second

// saveDownloads saves the downloads the action's tab started and says so
// in the result.
func (a *acting) saveDownloads() {
	if a.tab == nil {
		return
	}
	for _, d := range a.tab.TakeDownloads() {
		a.res.notes = append(a.res.notes, a.srv.saveDownload(d))
	}
}

// saveDownload saves d in the output directory under its suggested name
// (made unique), and returns the line that tells the agent.
func (s *Server) saveDownload(d playwright.Download) string {
	name := safeFileName(d.SuggestedFilename())
	dir, err := s.outputDir()
	if err != nil {
		_ = d.Cancel()
		return fmt.Sprintf("The page downloaded %q, but it could not be saved: %v.", name, err)
	}
	path := uniquePath(dir, name)
	saveErr, ok := bounded(downloadWait, func() error { return d.SaveAs(path) })
	if !ok {
		_ = d.Cancel()
		return fmt.Sprintf("The page started downloading %q, which did not finish within %s.", name, downloadWait)
	}
	st, err := os.Stat(path)
	if saveErr != nil || err != nil {
		why := d.Failure()
		if why == nil {
			why = saveErr
		}
		if why == nil {
			why = err
		}
		return fmt.Sprintf("The page's download of %q failed: %v.", name, why)
	}
	return fmt.Sprintf("Downloaded %q (%d bytes) to %s.", name, st.Size(), path)
}

// outputDir returns the directory files are written to, created if needed.
func (s *Server) outputDir() (string, error) {
	dir := s.cfg.OutputDir
	if dir == "" {
		var err error
		if dir, err = cacheDir("output"); err != nil {
			return "", err
		}
	}
	return dir, os.MkdirAll(dir, 0o700)
}

// safeFileName keeps a page's suggested name to one plain file name.
func safeFileName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	if name == "" || name == "." || name == ".." || name == "/" {
		return "download"
	}
	return name
}

// uniquePath is dir/name, or dir/name with -2, -3… before its extension
// when that file exists.
func uniquePath(dir, name string) string {
	path := filepath.Join(dir, name)
	ext := filepath.Ext(name)
	base := strings.TrimSuffix(name, ext)
	for i := 2; ; i++ {
		if _, err := os.Lstat(path); os.IsNotExist(err) {
			return path
		}
		path = filepath.Join(dir, fmt.Sprintf("%s-%d%s", base, i, ext))
	}
}

// writeOutput writes data as name in the output directory (with ext when
// name has none; made unique, never over another file) and returns its
// path.
func (s *Server) writeOutput(name, ext string, data []byte) (string, error) {
	dir, err := s.outputDir()
	if err != nil {
		return "", err
	}
	name = safeFileName(name)
	if filepath.Ext(name) == "" {
		name += ext
	}
	path := uniquePath(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", err
	}
	return path, nil
}
