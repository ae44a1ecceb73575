package server

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/retrace-dev/retrace/llmerr"
)

// defaultUploadDir is where uploads come from when --allowed-dirs is not
// given: a directory of retrace's own, so that neither the directory
// retrace was started in nor the shared temporary directory can be sent to
// a page by default.
func defaultUploadDir() (string, error) { return cacheDir("uploads") }

// cacheDir is <user cache dir>/retrace/name, where retrace keeps the
// directories it makes by default.
func cacheDir(name string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(cache, "retrace", name), nil
}

// CheckUploadDirs refuses --allowed-dirs that would let an agent send a
// page any of the user's files: the root directory, the home directory,
// or a directory that holds it, symlinks resolved. allowBroad
// (--allow-broad-dirs) lets them through.
func CheckUploadDirs(dirs []string, allowBroad bool) error {
	if allowBroad {
		return nil
	}
	home, err := os.UserHomeDir()
	if err == nil {
		home = resolveDir(home)
	}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		resolved := resolveDir(d)
		var what string
		switch {
		case filepath.Dir(resolved) == resolved:
			what = "the root directory"
		case home != "" && resolved == home:
			what = "the home directory"
		case home != "" && within(resolved, home):
			what = "a directory that holds the home directory " + home
		default:
			continue
		}
		named := d
		if resolved != filepath.Clean(d) {
			named += " (" + resolved + ")"
		}
		return fmt.Errorf("%s is %s: every file in it, SSH keys and saved sign-ins included, could be uploaded to any page; "+
			"name a narrower directory that holds only the files to upload, or pass --allow-broad-dirs to allow it anyway", named, what)
	}
	return nil
}

// resolveDir is d made absolute, with symlinks resolved where it exists.
func resolveDir(d string) string {
	abs, err := filepath.Abs(d)
	if err != nil {
		return filepath.Clean(d)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// within reports whether path is inside dir (or is dir).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// uploadDirs returns the directories uploads may come from: --allowed-dirs,
// or else the default upload directory, created 0700 on first use.
func (s *Server) uploadDirs() ([]string, error) {
	dirs := s.cfg.UploadDirs
	if len(dirs) > 0 {
		// main refuses these at startup; a server built another way
		// refuses them here.
		if err := CheckUploadDirs(dirs, s.cfg.AllowBroadDirs); err != nil {
			return nil, err
		}
	} else {
		d := s.cfg.DefaultUploadDir
		if d == "" {
			var err error
			if d, err = defaultUploadDir(); err != nil {
				return nil, fmt.Errorf("there is no default upload directory (%v); start retrace with --allowed-dirs", err)
			}
		}
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("the default upload directory %s cannot be created (%v); create it or start retrace with --allowed-dirs", d, err)
		}
		dirs = []string{d}
	}
	var out []string
	for _, d := range dirs {
		if d != "" {
			out = append(out, resolveDir(d))
		}
	}
	return out, nil
}

// checkUpload resolves each path (symlinks included) and refuses one that
// is missing, a directory, or outside every allowed directory.
func (s *Server) checkUpload(tool string, paths []string) ([]string, error) {
	dirs, err := s.uploadDirs()
	if err != nil {
		return nil, &llmerr.Error{Code: llmerr.InvalidParams, Tool: tool,
			Message: "No file can be uploaded: " + err.Error() + ".",
			Cause:   "the server's upload directories are not usable",
			Note:    "A person must fix how retrace is started; retrying will fail the same way until then."}
	}
	where := "files must exist inside the allowed directories: " + strings.Join(dirs, ", ") + " (set with --allowed-dirs)"
	if len(s.cfg.UploadDirs) == 0 {
		where = "files must exist inside " + dirs[0] + ", the upload directory retrace uses when started without --allowed-dirs: " +
			"a person puts the files to upload there, or starts retrace with --allowed-dirs naming the directory that holds them"
	}
	bad := func(p, why string) error {
		return &llmerr.Error{Code: llmerr.InvalidParams, Tool: tool,
			Message: fmt.Sprintf("Cannot upload %s: %s.", p, why),
			Cause:   where,
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
		if !slices.ContainsFunc(dirs, func(d string) bool { return within(d, real) }) {
			return nil, bad(p, "it is outside the allowed directories")
		}
		out = append(out, real)
	}
	return out, nil
}
