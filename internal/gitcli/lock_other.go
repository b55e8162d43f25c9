//go:build !unix || solaris || aix

package gitcli

import "os"

// Without flock, a mirror is locked within this process only (see
// Git.holdMirror); processes sharing a data directory are not kept apart.
func tryLockFile(*os.File) error { return nil }
