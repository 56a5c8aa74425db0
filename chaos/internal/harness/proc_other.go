//go:build !linux

package harness

import "syscall"

// sysProcAttr: without Pdeathsig the test cleanups alone stop the children.
func sysProcAttr() *syscall.SysProcAttr { return nil }
