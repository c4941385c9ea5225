//go:build !unix

package session

import (
	"errors"
	"io/fs"
	"os"
)

// openFile opens the file at path with flag (creating it with perm if flag says so)
// and returns it if it is a regular file; any other file is ErrCorrupt (see regular).
// Without O_NOFOLLOW the path is looked at before the open and the opened file
// after it; a link swapped in between is followed, but what was opened is checked.
func openFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err == nil {
		err = regular(fi)
	} else if errors.Is(err, fs.ErrNotExist) && flag&os.O_CREATE != 0 {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err == nil {
		err = regular(fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
