package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/retrace-dev/retrace/llmerr"
	"github.com/retrace-dev/retrace/roles"
)

// The saved file is what Playwright itself writes with storageState({path}),
// private from the start, and a new context signs in from it.
func TestSaveAuthWritesPlaywrightFormat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "admin.json")
	token := fx.NewSession("admin")
	writeState(t, path, token, "dark")
	os.Chmod(path, 0o644) // saving also narrows a file others could read
	c := connect(t, Config{Roles: rolesConfig(t, "admin="+path)})
	c.record = true
	mustContain(t, c.ok("browser_navigate", map[string]any{"url": fx.URL + "/account", "role": "admin"}), "Title: <page-content>Account</page-content>")
	c.ok("browser_evaluate", map[string]any{"function": "() => localStorage.setItem('note', 'line \"1\"\\né')", "role": "admin"})
	mustContain(t, c.ok("browser_save_auth", map[string]any{"role": "admin"}),
		"Saved the sign-in of role admin to "+path+": 1 cookie, local storage of 1 origin.")
	c.assertNoSecret(token)

	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("saved file: %v, %v; want mode 0600", st.Mode(), err)
	}
	ours, _ := os.ReadFile(path)
	theirs := filepath.Join(dir, "playwright.json")
	r := c.srv.sessionForTest().peek("admin")
	r.mu.Lock()
	_, err = r.bctx.StorageState(theirs)
	r.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(theirs)
	var a, b any
	if err := json.Unmarshal(ours, &a); err != nil {
		t.Fatalf("saved file is not JSON: %v", err)
	}
	json.Unmarshal(want, &b)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("saved file differs from Playwright's:\nours:   %s\ntheirs: %s", ours, want)
	}

	// A fresh session loads it: signed in, with the local storage.
	c2 := connect(t, Config{Roles: rolesConfig(t, "admin="+path)})
	c2.ok("browser_navigate", map[string]any{"url": fx.URL + "/account", "role": "admin"})
	mustContain(t, c2.ok("browser_snapshot", map[string]any{"role": "admin"}), "Signed in as admin", "Theme: dark")
	got := c2.ok("browser_evaluate", map[string]any{"function": "() => localStorage.getItem('note')", "role": "admin"})
	mustContain(t, got, `line \"1\"\né`)
}

// A symlinked auth file stays a link; the file it points to is replaced,
// and the result says so.
func TestSaveAuthThroughSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "vault", "admin.json")
	os.MkdirAll(filepath.Dir(target), 0o700)
	token := fx.NewSession("admin")
	writeState(t, target, token, "")
	link := filepath.Join(dir, "admin.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	c := connect(t, Config{Roles: rolesConfig(t, "admin="+link)})
	c.record = true
	c.ok("browser_navigate", map[string]any{"url": fx.URL + "/account", "role": "admin"})
	c.ok("browser_evaluate", map[string]any{"function": "() => localStorage.setItem('theme', 'light')", "role": "admin"})
	mustContain(t, c.ok("browser_save_auth", map[string]any{"role": "admin"}),
		"Saved the sign-in of role admin to "+link+" (a symlink: the file it points to, "+target+", was replaced and the link kept)")
	c.assertNoSecret(token)
	if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced by a file")
	}
	data, _ := os.ReadFile(target)
	if !strings.Contains(string(data), `"light"`) {
		t.Errorf("the link's target was not rewritten: %s", data)
	}
	if st, _ := os.Stat(target); st.Mode().Perm() != 0o600 {
		t.Errorf("target mode %v, want 0600", st.Mode().Perm())
	}
}

// A save that cannot write is AUTH_SAVE_FAILED naming what to fix, the
// old file stays whole, and the plan works once the cause is fixed.
func TestSaveAuthDiskFull(t *testing.T) {
	t.Parallel()
	dir := smallDisk(t)
	path := filepath.Join(dir, "admin.json")
	token := fx.NewSession("admin")
	writeState(t, path, token, "")
	old, _ := os.ReadFile(path)
	c := connect(t, Config{Roles: rolesConfig(t, "admin="+path)})
	c.record = true
	mustContain(t, c.ok("browser_navigate", map[string]any{"url": fx.URL + "/account", "role": "admin"}), "Title: <page-content>Account</page-content>")
	c.ok("browser_evaluate", map[string]any{"function": "() => localStorage.setItem('theme', 'x'.repeat(3000))", "role": "admin"})
	filler := fillDisk(t, dir)

	r := c.fail("browser_save_auth", map[string]any{"role": "admin"}, llmerr.AuthSaveFailed)
	t.Logf("as the model reads it:\n%s", r.Text)
	mustContain(t, r.Text, "Could not save the sign-in of role admin to "+path+": the disk is full.",
		"no space left on device",
		`1. browser_save_auth(role="admin") — after a person has freed space on the disk that holds `+dir,
		"The old auth file "+path+" is kept unchanged, and no temporary file was left behind.",
		"Saving again before the fix fails the same way.")
	if strings.Contains(r.Text, ".tmp-") {
		t.Errorf("the plan names the temporary file:\n%s", r.Text)
	}
	if got, _ := os.ReadFile(path); string(got) != string(old) {
		t.Fatalf("the old auth file changed:\n%s", got)
	}
	onlyFilesIn(t, dir, "admin.json", "filler")

	// The person frees space; the plan's step now saves.
	os.Remove(filler)
	mustContain(t, c.follow(r), "Saved the sign-in of role admin to "+path)
	if data, _ := os.ReadFile(path); !strings.Contains(string(data), "xxxx") {
		t.Errorf("the retried save did not write the new state")
	}
	onlyFilesIn(t, dir, "admin.json")
	c.assertNoSecret(token)
}

// A directory in the way is AUTH_SAVE_FAILED too, and nothing is written.
func TestSaveAuthDirectoryMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	os.WriteFile(plain, []byte("not a directory"), 0o600)
	path := filepath.Join(plain, "admin.json")
	c := connect(t, Config{Roles: rolesConfig(t, "admin="+path)})
	c.ok("browser_navigate", map[string]any{"url": fx.Page("form.html"), "role": "admin"})
	r := c.fail("browser_save_auth", map[string]any{"role": "admin"}, llmerr.AuthSaveFailed)
	mustContain(t, r.Text, "its directory is missing", "created the directory "+plain, "Nothing was written to "+path)
	if r.Structured["category"] != "auth" || r.Structured["retryable"] != false {
		t.Errorf("structured = %v", r.Structured)
	}
	d, _ := r.Structured["details"].(map[string]any)
	if d["reason"] != roles.SaveDirMissing || d["authFile"] != path {
		t.Errorf("details = %v", d)
	}
	// The role's sign-in warning stays: nothing was saved.
	mustContain(t, c.ok("browser_snapshot", map[string]any{"role": "admin"}), "Warnings:")
}

// smallDisk mounts a 64 KiB tmpfs for the test, or skips it where mounting
// is not allowed.
func smallDisk(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// fillDisk writes a file in dir until the disk is full and returns it.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 1024)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return p
		}
	}
}

func onlyFilesIn(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if fmt.Sprint(got) != fmt.Sprint(names) {
		t.Errorf("%s holds %q, want %q", dir, got, names)
	}
}
