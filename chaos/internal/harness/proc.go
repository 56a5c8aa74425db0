package harness

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Process is one run of a child process whose stdout and stderr are
// appended to a log file. Start it with StartProcess; Kill, Stop and Done
// may be called from any goroutine.
type Process struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{} // closed once the process was reaped; state is set then
	// state is the exit status; read it only after done is closed.
	state *os.ProcessState
}

// StartProcess starts bin with args, appending its output to logPath under
// a header line naming the run. The child gets SIGKILL if the test binary
// dies (Linux), so it never outlives the test.
func StartProcess(name, logPath, bin string, args ...string) (*Process, error) {
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("harness: %s log: %w", name, err)
	}
	fmt.Fprintf(lf, "=== %s %s start %s\n", time.Now().Format("15:04:05.000"), name, strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("harness: start %s: %w", name, err)
	}
	p := &Process{name: name, cmd: cmd, log: lf, done: make(chan struct{})}
	go func() {
		// Wait's error only repeats what ProcessState says (signal, exit
		// code); the state is what callers look at.
		_ = cmd.Wait()
		p.state = cmd.ProcessState
		fmt.Fprintf(lf, "=== %s %s exit: %v\n", time.Now().Format("15:04:05.000"), name, p.state)
		lf.Close()
		close(p.done)
	}()
	return p, nil
}

// Pid is the child's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// State describes how the process ended; call it only after Done is closed.
func (p *Process) State() *os.ProcessState { return p.state }

// Kill sends SIGKILL (if the process still runs) and waits until it is reaped.
func (p *Process) Kill() {
	if !p.Exited() {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-p.done
}

// ErrStopTimeout is returned by Stop when the process did not exit in time
// after SIGTERM (it was then killed).
var ErrStopTimeout = errors.New("harness: process did not exit after SIGTERM")

// Stop sends SIGTERM and waits up to timeout for the process to exit. It
// returns nil only for exit status 0. After the timeout the process is
// killed and the error wraps ErrStopTimeout.
func (p *Process) Stop(timeout time.Duration) error {
	if !p.Exited() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.Kill()
		return fmt.Errorf("%w: %s within %v", ErrStopTimeout, p.name, timeout)
	}
	if !p.state.Success() {
		return fmt.Errorf("harness: %s exited with %v after SIGTERM", p.name, p.state)
	}
	return nil
}

// signalled reports whether the process ended by the signal sig; call it
// only after Done is closed.
func (p *Process) signalled(sig syscall.Signal) bool {
	ws, ok := p.state.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// Tail returns the last n lines of the file at path ("" if unreadable).
func Tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
