package syscall

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/mm"
)

// Helpers that copy system-call arguments and results across the user
// boundary; a bad pointer is EFAULT.

func copyIn(t *kernel.Task, addr uint64, buf []byte) error {
	if err := t.Proc.CopyIn(uintptr(addr), buf); err != nil {
		return unix.EFAULT
	}
	return nil
}

func copyOut(t *kernel.Task, addr uint64, data []byte) error {
	if err := t.Proc.CopyOut(uintptr(addr), data); err != nil {
		return unix.EFAULT
	}
	return nil
}

// maxPath is PATH_MAX, the NUL included.
const maxPath = 4096

// copyInString reads a path (or another string) argument: EFAULT when it
// faults before its NUL, ENAMETOOLONG when no NUL comes within PATH_MAX
// bytes, as Linux's getname.
func copyInString(t *kernel.Task, addr uint64) (string, error) {
	t.Proc.Lock()
	defer t.Proc.Unlock()
	s, err := t.Proc.AS.CopyInPath(uintptr(addr), maxPath)
	if errors.Is(err, mm.ErrInvalid) {
		return "", unix.ENAMETOOLONG
	}
	if err != nil {
		return "", unix.EFAULT
	}
	return s, nil
}
