//go:build unix

package session

import (
	"os"
	"syscall"
)

// openFile opens the file at path with flag (creating it with perm if flag says so)
// and returns it if it is a regular file; any other file is ErrCorrupt (see regular).
// The open itself decides, not a look at the path before it, which another process
// could change in between: O_NOFOLLOW fails on a symbolic link instead of following
// it, and O_NONBLOCK keeps the open of a named pipe from waiting for its other end.
// The type is then checked on the opened descriptor.
func openFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, uint32(perm.Perm()))
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		// A link fails with ELOOP (EMLINK or EFTYPE on some BSDs): name what is there.
		if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
			return nil, regular(fi)
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	// Reads of a regular file do not block anyway; clearing the flag makes f a plain
	// blocking file that os does not hand to its poller.
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	fi, err := f.Stat()
	if err == nil {
		err = regular(fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
