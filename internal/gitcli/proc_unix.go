//go:build unix

package gitcli

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup starts git in a process group of its own and makes
// cancellation kill the whole group: git-remote-https, index-pack and the
// credential helper are git's children and would outlive a killed git.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
}
