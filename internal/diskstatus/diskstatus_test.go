package diskstatus

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestError(t *testing.T) {
	full := fmt.Errorf("sync: %w", &os.PathError{Op: "write", Path: "seg", Err: syscall.ENOSPC})
	st := status.Convert(Error("storing batch 3", full))
	if st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "no space left on device") || !strings.Contains(st.Message(), "restart") {
		t.Errorf("full disk: %v %q", st.Code(), st.Message())
	}
	st = status.Convert(Error("storing batch 3", &os.PathError{Op: "write", Path: "seg", Err: syscall.EIO}))
	if st.Code() != codes.Internal || !strings.Contains(st.Message(), "input/output error") || !strings.Contains(st.Message(), "restart") {
		t.Errorf("EIO: %v %q", st.Code(), st.Message())
	}
}
