package syscall

import (
	"fmt"
	"io"
	"path"
	"reflect"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/kernel/loader"
	jnet "github.com/jiege-go/jiege/net"
)

// Args are a system call's six raw arguments (a0-a5).
type Args [6]uint64

// handler implements one system call; it returns the result, or an errno.
type handler func(t *kernel.Task, a Args) (uint64, error)

// table maps Linux riscv64 system call numbers to handlers (nil: not
// implemented). An array, not a map: every system call looks it up.
var table [tableSize]handler

// tableSize bounds the numbers: Linux riscv64's end below 512.
const tableSize = 512

func register(nr uint64, h handler) {
	if nr >= tableSize {
		panic(fmt.Sprintf("syscall %s (%d) past the table", sysno.Name(nr), nr))
	}
	if table[nr] != nil {
		panic(fmt.Sprintf("syscall %s registered twice", sysno.Name(nr)))
	}
	table[nr] = h
}

// Dispatch runs the system call in the task's registers and stores its
// result in a0. The caller has already stepped pc past the ECALL.
func Dispatch(t *kernel.Task) {
	r := &t.Regs.X
	nr := r[arch.RegA7]
	a := Args{r[arch.RegA0], r[arch.RegA1], r[arch.RegA2], r[arch.RegA3], r[arch.RegA4], r[arch.RegA5]}
	var ret uint64
	var err error
	if t.SeccompActive() {
		switch verdict, errno := t.SeccompCheck(nr, a, t.Regs.PC); verdict {
		case kernel.SeccompFail:
			r[arch.RegA0] = uint64(-int64(errno))
			return
		case kernel.SeccompSkip:
			return // a0 keeps the first argument, as Linux's syscall_rollback leaves it
		}
	}
	if nr < tableSize && table[nr] != nil {
		ret, err = table[nr](t, a)
	} else {
		err = unix.ENOSYS
	}
	if err != nil {
		ret = uint64(-int64(errnoOf(err)))
		switch err {
		case unix.EINTR:
			t.Interrupted(restartOf(nr), a[0])
		case unix.EPIPE:
			raiseSIGPIPE(t, nr, a)
		}
	}
	r[arch.RegA0] = ret
	if w := t.Kernel().SyscallTrace; w != nil {
		trace(w, t, nr, a, ret, err)
	}
}

func trace(w io.Writer, t *kernel.Task, nr uint64, a Args, ret uint64, err error) {
	var b strings.Builder
	fmt.Fprintf(&b, "[pid %d] %s(%#x, %#x, %#x, %#x, %#x, %#x) = ", t.TID, sysno.Name(nr), a[0], a[1], a[2], a[3], a[4], a[5])
	if err != nil {
		fmt.Fprintf(&b, "-1 %s (%v)", unix.ErrnoName(errnoOf(err)), err)
	} else {
		fmt.Fprintf(&b, "%#x", ret)
	}
	b.WriteByte('\n')
	io.WriteString(w, b.String())
}

// errnoOf turns a handler's error into an errno: errnos pass through, the
// memory manager's and exec's errors map to theirs, anything else is EIO.
func errnoOf(err error) unix.Errno {
	switch e := err.(type) {
	case unix.Errno:
		return e
	case *loader.ExecError:
		return e.Errno
	case jnet.QuietErrno:
		return e.Errno()
	case socketTimeout:
		return unix.EAGAIN
	}
	return memErrno(err)
}

// Entry is one implemented system call: its number, name and the file of
// its handler (its family).
type Entry struct {
	Nr   uint64
	Name string
	File string
}

// Implemented lists the table's system calls by number.
func Implemented() []Entry {
	var out []Entry
	for nr, h := range table {
		if h == nil {
			continue
		}
		file, _ := runtime.FuncForPC(reflect.ValueOf(h).Pointer()).FileLine(reflect.ValueOf(h).Pointer())
		out = append(out, Entry{Nr: uint64(nr), Name: sysno.Name(uint64(nr)), File: path.Base(file)})
	}
	return out
}
