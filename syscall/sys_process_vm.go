package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/mm"
)

func init() {
	register(sysno.ProcessVmReadv, sysProcessVMReadv)
	register(sysno.ProcessVmWritev, sysProcessVMWritev)
}

// sysProcessVMReadv implements process_vm_readv(2).
func sysProcessVMReadv(t *kernel.Task, a Args) (uint64, error) {
	return processVM(t, a, false)
}

// sysProcessVMWritev implements process_vm_writev(2).
func sysProcessVMWritev(t *kernel.Task, a Args) (uint64, error) {
	return processVM(t, a, true)
}

// processVM moves bytes between the caller's buffers and another
// process's (pid, local iovecs, count, remote iovecs, count, flags), with
// Linux's checks in Linux's order (process_vm_rw): the flags, the local
// iovecs, which must lie in user memory, nothing to do when they are empty,
// the remote iovecs, nothing to do when those are empty, then the target
// (ESRCH) and whether the caller may ptrace it (EPERM). The copy goes
// through both address spaces page by page and stops at the first page
// that faults on either side: the bytes moved before it, EFAULT when none.
func processVM(t *kernel.Task, a Args, write bool) (uint64, error) {
	if a[5] != 0 {
		return 0, unix.EINVAL
	}
	var localFew, remoteFew [fewIovecs]iovec
	local, err := copyInIovecs(t, a[1], a[2], &localFew)
	if err != nil {
		return 0, err
	}
	for _, v := range local {
		if top := uint64(mm.MaxUserVA); v.len > top || v.base > top-v.len { // Linux's access_ok
			return 0, unix.EFAULT
		}
	}
	if local = capIovecs(local); iovecsLen(local) == 0 {
		return 0, nil
	}
	remote, err := copyInIovecs(t, a[3], a[4], &remoteFew)
	if err != nil {
		return 0, err
	}
	if remote = capIovecs(remote); iovecsLen(remote) == 0 {
		return 0, nil
	}
	target := t.FindTask(int(int32(a[0])))
	if target == nil || target.Proc.Gone() {
		return 0, unix.ESRCH
	}
	q := target.Proc
	if !t.MayPtrace(q) {
		return 0, unix.EPERM
	}
	mine, theirs := newUserIO(t, local), newUserIOOf(t, q, remote)
	defer mine.release()
	defer theirs.release()
	var from, to fs.UserIO = theirs, mine
	if write {
		from, to = mine, theirs
	}
	done := uint64(0)
	for from.Len() > 0 && to.Len() > 0 {
		if done > 0 && !t.Preempt() {
			break
		}
		n, err := fs.WriteCopied(from, to.CopyOut)
		done += uint64(n)
		if err != nil {
			if done > 0 {
				break
			}
			return 0, err
		}
	}
	return done, nil
}
