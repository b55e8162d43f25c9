//go:build !unix

package gitcli

import "os/exec"

// setProcessGroup leaves the default: cancellation kills git itself, and
// WaitDelay bounds the wait for its children.
func setProcessGroup(*exec.Cmd) {}
