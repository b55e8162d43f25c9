//go:build !unix || solaris || aix

package datadir

import "os"

// tryLock cannot lock without flock: it says so with ErrNoLocks.
func tryLock(*os.File, bool) error { return ErrNoLocks }
