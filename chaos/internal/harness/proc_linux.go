package harness

import "syscall"

// sysProcAttr makes the kernel SIGKILL the child when the test binary dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
