//go:build !unix || solaris || aix

package workspace

import "os"

// TryLock cannot lock without flock: it says so with ErrNoLocks.
func TryLock(*os.File) error { return ErrNoLocks }
