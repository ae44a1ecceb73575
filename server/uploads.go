package server

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/retrace-dev/retrace/llmerr"
)

// uploadDirs returns the directories uploads may come from: --allowed-dirs,
// or the working directory and the temporary directory.
func (s *Server) uploadDirs() []string {
	dirs := s.cfg.UploadDirs
	if len(dirs) == 0 {
		wd, _ := os.Getwd()
		dirs = []string{wd, os.TempDir()}
	}
	var out []string
	for _, d := range dirs {
		if d == "" {
			continue
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		out = append(out, abs)
	}
	return out
}

// checkUpload resolves each path (symlinks included) and refuses one that
// is missing, a directory, or outside every allowed directory.
func (s *Server) checkUpload(tool string, paths []string) ([]string, error) {
	dirs := s.uploadDirs()
	bad := func(p, why string) error {
		return &llmerr.Error{Code: llmerr.InvalidParams, Tool: tool,
			Message: fmt.Sprintf("Cannot upload %s: %s.", p, why),
			Cause:   "files must exist inside the allowed directories: " + strings.Join(dirs, ", ") + " (set with --allowed-dirs)",
			Actions: []llmerr.Action{llmerr.Call(tool, "with files from an allowed directory", llmerr.A("ref", "…"), llmerr.A("paths", []string{filepath.Join(dirs[0], "file.txt")}))},
			Details: map[string]any{"allowedDirs": dirs}}
	}
	var out []string
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			return nil, bad(p, "the path is not absolute")
		}
		real, err := filepath.EvalSymlinks(filepath.Clean(p))
		if err != nil {
			return nil, bad(p, "there is no such file")
		}
		st, err := os.Stat(real)
		if err != nil {
			return nil, bad(p, "it cannot be read")
		}
		if st.IsDir() {
			return nil, bad(p, "it is a directory")
		}
		inside := slices.ContainsFunc(dirs, func(d string) bool {
			rel, err := filepath.Rel(d, real)
			return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
		})
		if !inside {
			return nil, bad(p, "it is outside the allowed directories")
		}
		out = append(out, real)
	}
	return out, nil
}
