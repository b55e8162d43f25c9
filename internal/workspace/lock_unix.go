//go:build unix && !solaris && !aix

package workspace

import (
	"errors"
	"os"
	"syscall"
)

// Flock takes an flock on f, exclusive or shared, without waiting. Another
// open file holding it in a way that excludes this one, in this process or
// another, gives ErrLocked.
func Flock(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return ErrLocked
		}
		return err
	}
}
