//go:build unix && !solaris && !aix

package workspace

import (
	"errors"
	"os"
	"syscall"
)

// TryLock takes an exclusive flock on f without waiting. Another open file
// holding it, in this process or another, gives ErrLocked.
func TryLock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
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
