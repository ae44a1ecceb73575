package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrace-dev/retrace/llmerr"
)

// Without --allowed-dirs, uploads come only from retrace's own directory,
// created 0700 on first use and named in the plan: never from the working
// directory, the temporary directory or /etc.
func TestFileUploadDefaultDir(t *testing.T) {
	t.Parallel()
	uploads := filepath.Join(t.TempDir(), "cache", "retrace", "uploads")
	c := connect(t, Config{DefaultUploadDir: uploads})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_input.html")})
	input := refOf(t, c.ok("browser_snapshot", nil), `button "Attachment"`)

	inWD, err := filepath.Abs("main_test.go")
	if err != nil {
		t.Fatal(err)
	}
	inTemp := filepath.Join(t.TempDir(), "report.txt")
	os.WriteFile(inTemp, []byte("x"), 0o600)
	for _, p := range []string{inWD, "/etc/passwd", inTemp} {
		r := c.fail("browser_file_upload", map[string]any{"ref": input, "paths": []string{p}}, llmerr.InvalidParams)
		mustContain(t, r.Text, "Cannot upload "+p+": it is outside the allowed directories.",
			"files must exist inside "+uploads+", the upload directory retrace uses when started without --allowed-dirs",
			`browser_file_upload(ref="…", paths=["`+filepath.Join(uploads, "file.txt")+`"])`)
	}
	st, err := os.Stat(uploads)
	if err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
		t.Fatalf("the upload directory after first use: %v, %v; want a 0700 directory", st, err)
	}

	file := filepath.Join(uploads, "report.txt")
	os.WriteFile(file, []byte("hello world"), 0o600)
	mustContain(t, c.ok("browser_file_upload", map[string]any{"ref": input, "paths": []string{file}}), "Chose 1 file (report.txt)")
	mustContain(t, c.ok("browser_snapshot", nil), "report.txt (11 bytes)")
}

func TestDefaultUploadDirIsInTheUserCache(t *testing.T) {
	t.Parallel()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skip(err)
	}
	d, err := defaultUploadDir()
	if err != nil || d != filepath.Join(cache, "retrace", "uploads") {
		t.Errorf("defaultUploadDir() = %q, %v", d, err)
	}
	if wd, _ := os.Getwd(); d == wd || d == os.TempDir() {
		t.Errorf("the default upload directory is %s", d)
	}
}

// --allowed-dirs naming the root or the home directory, directly or
// through a symlink, is refused unless --allow-broad-dirs.
func TestCheckUploadDirs(t *testing.T) {
	t.Parallel()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	rootLink := filepath.Join(tmp, "root")
	if err := os.Symlink("/", rootLink); err != nil {
		t.Fatal(err)
	}
	narrow := filepath.Join(tmp, "uploads")
	os.Mkdir(narrow, 0o700)
	cases := []struct {
		dirs []string
		want string // "" when allowed
	}{
		{[]string{"/"}, "/ is the root directory"},
		{[]string{narrow, "/"}, "/ is the root directory"},
		{[]string{"/etc/.."}, "the root directory"},
		{[]string{rootLink}, rootLink + " (/) is the root directory"},
		{[]string{home}, "is the home directory"},
		{[]string{home + "/"}, "is the home directory"},
		{[]string{narrow}, ""},
		{nil, ""},
	}
	if parent := filepath.Dir(home); parent != "/" {
		cases = append(cases, struct {
			dirs []string
			want string
		}{[]string{parent}, "a directory that holds the home directory"})
	}
	for _, tc := range cases {
		err := CheckUploadDirs(tc.dirs, false)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckUploadDirs(%q) = %v, want allowed", tc.dirs, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--allow-broad-dirs")):
			t.Errorf("CheckUploadDirs(%q) = %v, want an error saying %q and naming --allow-broad-dirs", tc.dirs, err, tc.want)
		}
		if err := CheckUploadDirs(tc.dirs, true); err != nil {
			t.Errorf("CheckUploadDirs(%q, allowBroad) = %v", tc.dirs, err)
		}
	}
}

// A server built with a broad directory but without AllowBroadDirs (not
// through main, which refuses it at startup) uploads nothing.
func TestFileUploadBroadDirRefused(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "report.txt")
	os.WriteFile(file, []byte("hello world"), 0o600)
	c := connect(t, Config{UploadDirs: []string{"/"}})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_input.html")})
	input := refOf(t, c.ok("browser_snapshot", nil), `button "Attachment"`)
	r := c.fail("browser_file_upload", map[string]any{"ref": input, "paths": []string{file}}, llmerr.InvalidParams)
	mustContain(t, r.Text, "No file can be uploaded: / is the root directory", "--allow-broad-dirs", "A person must fix how retrace is started")

	c = connect(t, Config{UploadDirs: []string{"/"}, AllowBroadDirs: true})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("_input.html")})
	input = refOf(t, c.ok("browser_snapshot", nil), `button "Attachment"`)
	mustContain(t, c.ok("browser_file_upload", map[string]any{"ref": input, "paths": []string{file}}), "Chose 1 file (report.txt)")
}
