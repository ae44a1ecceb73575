package browser

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// VideoRegistry makes Playwright record videos with the machine's ffmpeg.
// Playwright encodes a context's video with an ffmpeg of its own registry,
// which its installer downloads and this project does not: the registry
// directory it returns (under cacheDir) holds a link, where the driver of
// driverDir looks for that ffmpeg, to the ffmpeg on PATH. The driver finds
// it when started with PLAYWRIGHT_BROWSERS_PATH set to the directory; the
// browser itself is launched from its own path, so nothing else moves.
func VideoRegistry(driverDir, cacheDir string) (string, error) {
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		return "", errors.New("recording video needs ffmpeg on PATH (Debian: apt-get install ffmpeg; make setup installs it)")
	}
	dir, _, err := FindDriver(driverDir)
	if err != nil {
		return "", err
	}
	revs, err := Revisions(dir)
	if err != nil {
		return "", err
	}
	rev := revs["ffmpeg"]
	if rev == "" {
		return "", errors.New("the driver's browser list names no ffmpeg")
	}
	registry := filepath.Join(cacheDir, "ms-playwright")
	link := filepath.Join(registry, "ffmpeg-"+rev, "ffmpeg-linux")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return "", err
	}
	if cur, err := os.Readlink(link); err != nil || cur != ffmpeg {
		_ = os.Remove(link)
		if err := os.Symlink(ffmpeg, link); err != nil {
			return "", err
		}
	}
	return registry, nil
}

// Revisions reads the driver's browser list (package/browsers.json of the
// driver directory dir): the revision of each browser and tool its
// registry holds, by name (chromium, chromium-headless-shell, ffmpeg).
func Revisions(dir string) (map[string]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "package", "browsers.json"))
	if err != nil {
		return nil, fmt.Errorf("reading the driver's browser list: %w", err)
	}
	var list struct {
		Browsers []struct {
			Name     string `json:"name"`
			Revision string `json:"revision"`
		} `json:"browsers"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("reading the driver's browser list: %w", err)
	}
	revs := map[string]string{}
	for _, br := range list.Browsers {
		revs[br.Name] = br.Revision
	}
	return revs, nil
}
