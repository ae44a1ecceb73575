package roles

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const oldState = `{"cookies":[{"name":"session","value":"old-secret"}],"origins":[]}`
const newState = `{"cookies":[{"name":"session","value":"new-secret"}],"origins":[]}`

// onlyFiles fails the test unless dir holds exactly the named files: no
// temporary file is left behind.
func onlyFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if fmt.Sprint(got) != fmt.Sprint(names) {
		t.Errorf("directory holds %q, want %q", got, names)
	}
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

func TestWriteAuthFileReplaces(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "admin.json")
	// An old file readable by everyone is replaced by one only its owner
	// can read.
	if err := os.WriteFile(path, []byte(oldState), 0o644); err != nil {
		t.Fatal(err)
	}
	saved, err := WriteAuthFile(path, []byte(newState))
	if err != nil {
		t.Fatal(err)
	}
	if saved.Target != path || saved.ViaSymlink() {
		t.Errorf("saved = %+v, want the file itself", saved)
	}
	if got, _ := os.ReadFile(path); string(got) != newState {
		t.Errorf("file holds %q", got)
	}
	if m := mode(t, path); m != 0o600 {
		t.Errorf("mode = %v, want 0600", m)
	}
	if err := CheckAuthFile(path); err != nil {
		t.Error(err)
	}
	onlyFiles(t, dir, "admin.json")
}

func TestWriteAuthFileCreatesDirectory(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "auth", "nested", "admin.json")
	if _, err := WriteAuthFile(path, []byte(newState)); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, filepath.Dir(path)); m != 0o700 {
		t.Errorf("new directory mode = %v, want 0700", m)
	}
	if m := mode(t, path); m != 0o600 {
		t.Errorf("mode = %v, want 0600", m)
	}
}

// The temporary file is 0600 before the first byte is written to it, so
// there is no moment when another user could open it.
func TestWriteAuthFilePrivateFromCreation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "admin.json")
	steps := osSteps()
	var before fs.FileMode
	var size int64 = -1
	write := steps.write
	steps.write = func(f *os.File, data []byte) error {
		st, err := f.Stat()
		if err != nil {
			return err
		}
		before, size = st.Mode().Perm(), st.Size()
		if filepath.Dir(f.Name()) != dir {
			t.Errorf("temporary file %s is not beside the target", f.Name())
		}
		return write(f, data)
	}
	if _, err := writeAuthFile(path, []byte(newState), steps); err != nil {
		t.Fatal(err)
	}
	if before != 0o600 || size != 0 {
		t.Errorf("before the write the temporary file had mode %v and %d bytes, want 0600 and empty", before, size)
	}
}

// A save that fails at any step keeps the old file whole and leaves no
// temporary file behind.
func TestWriteAuthFileFailureKeepsOldFile(t *testing.T) {
	t.Parallel()
	enospc := &fs.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}
	cases := []struct {
		name      string
		breakStep func(*saveSteps)
		step      string
		reason    string
	}{
		{"disk full mid-write", func(s *saveSteps) {
			s.write = func(f *os.File, data []byte) error {
				f.Write(data[:len(data)/2]) // half the JSON reaches the disk
				return enospc
			}
		}, "write the temporary file", SaveDiskFull},
		{"sync fails", func(s *saveSteps) {
			s.sync = func(*os.File) error { return &fs.PathError{Op: "sync", Path: "x", Err: syscall.EIO} }
		}, "sync the temporary file", SaveOtherFailed},
		{"rename refused", func(s *saveSteps) {
			s.rename = func(string, string) error { return &os.LinkError{Op: "rename", Err: syscall.EACCES} }
		}, "rename the temporary file over the auth file", SavePermission},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "admin.json")
			if err := os.WriteFile(path, []byte(oldState), 0o600); err != nil {
				t.Fatal(err)
			}
			steps := osSteps()
			tc.breakStep(&steps)
			_, err := writeAuthFile(path, []byte(newState), steps)
			var se *SaveError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *SaveError", err)
			}
			if se.Step != tc.step || se.Reason != tc.reason || se.Path != path || se.Dir() != dir {
				t.Errorf("error = %+v, want step %q, reason %q", se, tc.step, tc.reason)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("the error carried the data: %v", err)
			}
			if got, _ := os.ReadFile(path); string(got) != oldState {
				t.Errorf("old file changed to %q", got)
			}
			onlyFiles(t, dir, "admin.json")
		})
	}
}

func TestWriteAuthFileProblemsBeforeWriting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notDir := filepath.Join(dir, "plain")
	os.WriteFile(notDir, []byte("x"), 0o600)
	cases := []struct {
		path   string
		reason string
	}{
		{filepath.Join(notDir, "admin.json"), SaveDirMissing}, // a part of the path is a file
		{dir, SaveNotAFile}, // a directory
		{"/dev/null", SaveNotAFile},
	}
	for _, tc := range cases {
		_, err := WriteAuthFile(tc.path, []byte(newState))
		var se *SaveError
		if !errors.As(err, &se) || se.Reason != tc.reason {
			t.Errorf("WriteAuthFile(%s) = %v, want reason %q", tc.path, err, tc.reason)
		}
	}
	onlyFiles(t, dir, "plain")
}

// A symlink stays a symlink: the file it points to is replaced, and the
// result says which file that was.
func TestWriteAuthFileFollowsSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "target", "admin.json")
	os.MkdirAll(filepath.Dir(target), 0o700)
	os.WriteFile(target, []byte(oldState), 0o600)
	// A chain: link -> relative link -> file.
	mid := filepath.Join(dir, "target", "current.json")
	if err := os.Symlink("admin.json", mid); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "admin.json")
	if err := os.Symlink(mid, link); err != nil {
		t.Fatal(err)
	}
	saved, err := WriteAuthFile(link, []byte(newState))
	if err != nil {
		t.Fatal(err)
	}
	if !saved.ViaSymlink() || saved.Target != target {
		t.Errorf("saved = %+v, want target %s", saved, target)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link was replaced by a file")
	}
	if got, _ := os.ReadFile(link); string(got) != newState {
		t.Errorf("through the link: %q", got)
	}
	onlyFiles(t, filepath.Join(dir, "target"), "admin.json", "current.json")

	// A link to a file that does not exist yet creates it.
	dangling := filepath.Join(dir, "new.json")
	os.Symlink(filepath.Join(dir, "target", "fresh.json"), dangling)
	saved, err = WriteAuthFile(dangling, []byte(newState))
	if err != nil || saved.Target != filepath.Join(dir, "target", "fresh.json") {
		t.Errorf("dangling link: %+v, %v", saved, err)
	}

	// A loop is an error, not a hang.
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	os.Symlink(b, a)
	os.Symlink(a, b)
	if _, err := WriteAuthFile(a, []byte(newState)); err == nil {
		t.Error("a symlink loop was written through")
	}
}
