package roles

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Saved says where WriteAuthFile put an auth file.
type Saved struct {
	// Path is the file as configured.
	Path string
	// Target is the file written: Path itself, or the file a symlink at
	// Path points to.
	Target string
}

// ViaSymlink reports whether Path is a symlink and Target the file it
// points to.
func (s Saved) ViaSymlink() bool { return s.Path != s.Target }

// Why an auth file could not be saved; each reason names what a person
// must fix.
const (
	SaveDiskFull    = "disk full"
	SavePermission  = "permission denied"
	SaveReadOnly    = "read-only file system"
	SaveDirMissing  = "directory missing"
	SaveNotAFile    = "not a regular file"
	SaveOtherFailed = "write failed"
)

// SaveError is a failed WriteAuthFile. The file at Target, if there was
// one, is unchanged: nothing is written to it in place.
type SaveError struct {
	Path   string
	Target string
	// Step is what could not be done, as a phrase: "create the directory",
	// "write the temporary file", ...
	Step string
	// Reason is one of the Save* constants.
	Reason string
	Err    error
}

func (e *SaveError) Error() string {
	return fmt.Sprintf("save auth file %s: %s: %s (%v)", e.Path, e.Step, e.Reason, e.Err)
}

func (e *SaveError) Unwrap() error { return e.Err }

// Dir is the directory the file is written in.
func (e *SaveError) Dir() string { return filepath.Dir(e.Target) }

// WriteAuthFile replaces the auth file at path with data, atomically: the
// data goes to a temporary file in the same directory, created 0600 (it
// holds sign-in secrets) before anything is written, synced, then renamed
// over the target. A reader sees the old file or the new one, never half
// of one; a failure leaves the old file as it was and removes the
// temporary one. A symlink at path is followed and its target replaced,
// so the link stays a link; Saved.Target says which file was written.
// A missing directory is created 0700.
func WriteAuthFile(path string, data []byte) (Saved, error) {
	return writeAuthFile(path, data, osSteps())
}

// saveSteps are the file operations of a save that can fail half-way;
// tests replace one to make it fail.
type saveSteps struct {
	write  func(f *os.File, data []byte) error
	sync   func(f *os.File) error
	rename func(from, to string) error
}

func osSteps() saveSteps {
	return saveSteps{
		write:  func(f *os.File, data []byte) error { _, err := f.Write(data); return err },
		sync:   (*os.File).Sync,
		rename: os.Rename,
	}
}

func writeAuthFile(path string, data []byte, steps saveSteps) (Saved, error) {
	saved := Saved{Path: path, Target: path}
	fail := func(step string, err error) (Saved, error) {
		return saved, &SaveError{Path: path, Target: saved.Target, Step: step, Reason: saveReason(err), Err: err}
	}
	target, err := resolveLinks(path)
	if err != nil {
		return fail("follow the symlink", err)
	}
	saved.Target = target
	switch st, err := os.Stat(target); {
	case err == nil && !st.Mode().IsRegular():
		return saved, &SaveError{Path: path, Target: target, Step: "check the file", Reason: SaveNotAFile,
			Err: fmt.Errorf("%s is a %s", target, kind(st.Mode()))}
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fail("check the file", err)
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail("create the directory", err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return fail("create a temporary file", err)
	}
	tmp := f.Name()
	abandon := func(step string, err error) (Saved, error) {
		_ = f.Close()
		_ = os.Remove(tmp)
		return fail(step, err)
	}
	// CreateTemp asks for 0600, less the umask; set it exactly, before the
	// first secret byte lands.
	if err := f.Chmod(0o600); err != nil {
		return abandon("create a temporary file", err)
	}
	if err := steps.write(f, data); err != nil {
		return abandon("write the temporary file", err)
	}
	if err := steps.sync(f); err != nil {
		return abandon("sync the temporary file", err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(tmp)
		return fail("write the temporary file", err)
	}
	if err := steps.rename(tmp, target); err != nil {
		_ = os.Remove(tmp)
		return fail("rename the temporary file over the auth file", err)
	}
	// The rename is done and the new file is what readers see; syncing
	// the directory only makes it survive a power cut, so its failure
	// (some file systems refuse to sync a directory) is not a failed save.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return saved, nil
}

// resolveLinks follows symlinks at the last element of path, through
// chains, to the file they name, which need not exist yet.
func resolveLinks(path string) (string, error) {
	p := path
	for range 40 {
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) || (err == nil && st.Mode()&fs.ModeSymlink == 0) {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		link, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(p), link)
		}
		p = filepath.Clean(link)
	}
	return "", &fs.PathError{Op: "readlink", Path: path, Err: syscall.ELOOP}
}

// saveReason names what a person must fix, from the system's error.
func saveReason(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return SaveDiskFull
	case errors.Is(err, syscall.EROFS):
		return SaveReadOnly
	case errors.Is(err, fs.ErrPermission):
		return SavePermission
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return SaveDirMissing
	}
	return SaveOtherFailed
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "device"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}
