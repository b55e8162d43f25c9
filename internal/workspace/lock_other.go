//go:build !unix || solaris || aix

package workspace

import "os"

// Flock cannot lock without flock: it says so with ErrNoLocks.
func Flock(*os.File, bool) error { return ErrNoLocks }
