package syscall

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/kernel"
)

// cloneArgs encodes struct clone_args.
func cloneArgs(flags, childTID, parentTID, exitSignal, stack, stackSize, tls uint64) []byte {
	return words(flags, 0, childTID, parentTID, exitSignal, stack, stackSize, tls, 0, 0, 0)
}

// TestClone3 decodes clone3's struct as glibc's pthread_create passes it:
// the child's sp is stack + stack_size, tp the tls, the tid words written.
func TestClone3(t *testing.T) {
	var started []*kernel.Task
	task, _ := newTaskIn(t, kernel.New(kernel.Config{StartTask: func(c *kernel.Task) { started = append(started, c) }}))
	flags := uint64(unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD |
		unix.CLONE_SYSVSEM | unix.CLONE_SETTLS | unix.CLONE_PARENT_SETTID | unix.CLONE_CHILD_CLEARTID)
	put(t, task, scratch, cloneArgs(flags, scratch+512, scratch+520, 0, scratch+0x1000, 0x2000, 0xabc0))
	tid := call(task, sysno.Clone3, scratch, 88)
	if tid <= 0 || len(started) != 1 || started[0].TID != int(tid) {
		t.Fatalf("clone3 = %d, started %d", tid, len(started))
	}
	c := started[0]
	if c.Proc != task.Proc || c.Regs.X[arch.RegSP] != scratch+0x3000 || c.Regs.X[arch.RegTP] != 0xabc0 ||
		c.Regs.X[arch.RegA0] != 0 || c.ClearTID != scratch+512 {
		t.Fatalf("child: sp %#x tp %#x a0 %d cleartid %#x", c.Regs.X[arch.RegSP], c.Regs.X[arch.RegTP], c.Regs.X[arch.RegA0], c.ClearTID)
	}
	if got := get(t, task, scratch+520, 4); int64(got[0])|int64(got[1])<<8 != tid {
		t.Fatalf("parent tid word %v, want %d", got, tid)
	}

	for name, tc := range map[string]struct {
		args []byte
		size uint64
		want unix.Errno
	}{
		"too small":            {cloneArgs(flags, 0, 0, 0, 0, 0, 0), 56, unix.EINVAL},
		"too big":              {cloneArgs(flags, 0, 0, 0, 0, 0, 0), 8192, unix.E2BIG},
		"unknown tail":         {append(cloneArgs(flags, 0, 0, 0, 0, 0, 0), 1, 0, 0, 0, 0, 0, 0, 0), 96, unix.E2BIG},
		"signal in flags":      {cloneArgs(uint64(unix.SIGCHLD), 0, 0, 0, 0, 0, 0), 88, unix.EINVAL},
		"thread exit signal":   {cloneArgs(flags, 0, 0, uint64(unix.SIGCHLD), 0, 0, 0), 88, unix.EINVAL},
		"stack without size":   {cloneArgs(flags, 0, 0, 0, scratch, 0, 0), 88, unix.EINVAL},
		"exit signal too high": {cloneArgs(0, 0, 0, 65, 0, 0, 0), 88, unix.EINVAL},
	} {
		put(t, task, scratch, tc.args)
		if r := call(task, sysno.Clone3, scratch, tc.size); r != -int64(tc.want) {
			t.Errorf("%s: clone3 = %d, want -%s", name, r, unix.ErrnoName(tc.want))
		}
	}
	if len(started) != 1 {
		t.Errorf("%d tasks started, want only the first", len(started))
	}
}
