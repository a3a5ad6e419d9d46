package syscall

import (
	"encoding/binary"
	"errors"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/kernel/ipc"
	"github.com/jiege-go/jiege/mm"
)

// System V IPC: the handlers decode the arguments and copy the
// structures; kernel/ipc owns the objects. A call that must wait gets a
// channel from kernel/ipc and waits here (Task.Block), then tries again.

func init() {
	register(sysno.Msgget, sysMsgget)
	register(sysno.Msgsnd, sysMsgsnd)
	register(sysno.Msgrcv, sysMsgrcv)
	register(sysno.Msgctl, sysMsgctl)
	register(sysno.Semget, sysSemget)
	register(sysno.Semop, sysSemop)
	register(sysno.Semtimedop, sysSemtimedop)
	register(sysno.Semctl, sysSemctl)
	register(sysno.Shmget, sysShmget)
	register(sysno.Shmat, sysShmat)
	register(sysno.Shmdt, sysShmdt)
	register(sysno.Shmctl, sysShmctl)
}

// sysMsgget implements msgget(2).
func sysMsgget(t *kernel.Task, a Args) (uint64, error) {
	id, err := t.IPC().MsgGet(int32(a[0]), int(int32(a[1])), t.IPCCaller())
	return uint64(id), err
}

// sysMsgsnd implements msgsnd(2): the type is read first (EFAULT before
// any other check, as Linux), then the text; a full queue waits unless
// IPC_NOWAIT.
func sysMsgsnd(t *kernel.Task, a Args) (uint64, error) {
	id, msgp, size, flags := int(int32(a[0])), a[1], int64(a[2]), int(int32(a[3]))
	ns := t.IPC()
	var typ [8]byte
	if err := copyIn(t, msgp, typ[:]); err != nil {
		return 0, err
	}
	if err := ns.MsgCheckSize(size); err != nil {
		return 0, err
	}
	m := ipc.Message{Type: int64(binary.LittleEndian.Uint64(typ[:]))}
	if id < 0 || m.Type < 1 {
		return 0, unix.EINVAL
	}
	if err := ipc.ChargeMessage(int(size)); err != nil {
		return 0, err
	}
	queued := false
	defer func() {
		if !queued {
			ipc.UnchargeMessage(int(size))
		}
	}()
	m.Text = make([]byte, size)
	if err := copyIn(t, msgp+8, m.Text); err != nil {
		return 0, err
	}
	var w ipc.Wait
	for {
		changed, err := ns.MsgSend(id, m, flags, t.IPCCaller(), &w)
		if err != ipc.ErrWouldBlock {
			queued = err == nil
			return 0, err
		}
		if err := t.Block(changed, time.Time{}); err != nil {
			return 0, err
		}
	}
}

// sysMsgrcv implements msgrcv(2): it waits for a message unless
// IPC_NOWAIT, and returns the bytes of text delivered. A buffer that
// faults loses the message, as on Linux.
func sysMsgrcv(t *kernel.Task, a Args) (uint64, error) {
	id, msgp, size, typ, flags := int(int32(a[0])), a[1], int64(a[2]), int64(a[3]), int(int32(a[4]))
	ns := t.IPC()
	var w ipc.Wait
	for {
		m, changed, err := ns.MsgReceive(id, size, typ, flags, t.IPCCaller(), &w)
		if err == ipc.ErrWouldBlock {
			if err := t.Block(changed, time.Time{}); err != nil {
				return 0, err
			}
			continue
		}
		if err != nil {
			return 0, err
		}
		var head [8]byte
		binary.LittleEndian.PutUint64(head[:], uint64(m.Type))
		if err := copyOut(t, msgp, head[:]); err != nil {
			return 0, err
		}
		if err := copyOut(t, msgp+8, m.Text); err != nil {
			return 0, err
		}
		return uint64(len(m.Text)), nil
	}
}

// sysMsgctl implements msgctl(2).
func sysMsgctl(t *kernel.Task, a Args) (uint64, error) {
	id, cmd, buf := int(int32(a[0])), int(int32(a[1])), a[2]
	ns, c := t.IPC(), t.IPCCaller()
	if id < 0 || cmd < 0 {
		return 0, unix.EINVAL
	}
	switch cmd {
	case ipc.CmdInfo, msgInfo:
		info, idx := ns.MsgInfo(cmd == msgInfo)
		return uint64(idx), copyOutStruct(t, buf, info)
	case ipc.CmdStat, msgStat, msgStatAny:
		ds, ret, err := ns.MsgStat(id, cmd != ipc.CmdStat, cmd == msgStatAny, c)
		if err != nil {
			return 0, err
		}
		return uint64(ret), copyOutStruct(t, buf, ds)
	case ipc.CmdSet:
		var ds linux.MsqidDs
		if err := copyInStruct(t, buf, &ds); err != nil {
			return 0, err
		}
		return 0, ns.MsgSet(id, ds, c)
	case ipc.CmdRmid:
		return 0, ns.MsgRemove(id, c)
	}
	return 0, unix.EINVAL
}

// msgctl's own commands (linux/msg.h).
const (
	msgStat    = 11
	msgInfo    = 12
	msgStatAny = 13
)

// sysSemget implements semget(2).
func sysSemget(t *kernel.Task, a Args) (uint64, error) {
	id, err := t.IPC().SemGet(int32(a[0]), int(int32(a[1])), int(int32(a[2])), t.IPCCaller())
	return uint64(id), err
}

// sysSemop implements semop(2).
func sysSemop(t *kernel.Task, a Args) (uint64, error) {
	return semTimedOp(t, int(int32(a[0])), a[1], uint64(uint32(a[2])), 0)
}

// sysSemtimedop implements semtimedop(2).
func sysSemtimedop(t *kernel.Task, a Args) (uint64, error) {
	return semTimedOp(t, int(int32(a[0])), a[1], uint64(uint32(a[2])), a[3])
}

// semTimedOp makes the checks of Linux's do_semtimedop in its order (the
// timeout's pointer, the count, the operations' pointer, the id, the
// timeout's value), then waits until the operations can all be done, a
// signal comes (EINTR, never restarted), the set goes (EIDRM) or the
// timeout passes (EAGAIN).
func semTimedOp(t *kernel.Task, id int, sops, nsops, timeout uint64) (uint64, error) {
	ns := t.IPC()
	var ts linux.Timespec
	if timeout != 0 {
		if err := copyInStruct(t, timeout, &ts); err != nil {
			return 0, err
		}
	}
	if nsops > uint64(ns.SemOpMax()) {
		return 0, unix.E2BIG
	}
	if nsops < 1 {
		return 0, unix.EINVAL
	}
	// semopm is root's to raise: the operations are charged while read.
	opsSize := int(nsops) * int(unsafe.Sizeof(linux.Sembuf{}))
	if mm.Charged.Charge(opsSize) != nil {
		return 0, unix.ENOMEM
	}
	defer mm.Charged.Uncharge(opsSize)
	ops := make([]linux.Sembuf, nsops)
	if err := copyIn(t, sops, linux.SliceAsBytes(ops)); err != nil {
		return 0, err
	}
	if id < 0 {
		return 0, unix.EINVAL
	}
	var deadline time.Time
	if timeout != 0 {
		if ts.Sec < 0 || ts.Nsec < 0 || ts.Nsec >= 1e9 {
			return 0, unix.EINVAL
		}
		deadline = time.Now().Add(time.Duration(ts.Sec)*time.Second + time.Duration(ts.Nsec))
	}
	var w ipc.Wait
	defer ns.SemDone(&w)
	for {
		changed, err := ns.SemOp(id, ops, t.IPCCaller(), &w)
		if err != ipc.ErrWouldBlock {
			return 0, err
		}
		if err := t.Block(changed, deadline); err != nil {
			if err == unix.ETIMEDOUT {
				return 0, unix.EAGAIN
			}
			return 0, err
		}
	}
}

// sysSemctl implements semctl(2); its fourth argument is the union semun
// passed by value: a value or a pointer.
func sysSemctl(t *kernel.Task, a Args) (uint64, error) {
	id, num, cmd, arg := int(int32(a[0])), int(int32(a[1])), int(int32(a[2])), a[3]
	ns, c := t.IPC(), t.IPCCaller()
	if id < 0 {
		return 0, unix.EINVAL
	}
	switch cmd {
	case ipc.CmdInfo, ipc.SemInfo:
		info, idx := ns.SemInfo(cmd == ipc.SemInfo)
		return uint64(idx), copyOutStruct(t, arg, info)
	case ipc.CmdStat, ipc.SemStat, ipc.SemStatAny:
		ds, ret, err := ns.SemStat(id, cmd != ipc.CmdStat, cmd == ipc.SemStatAny, c)
		if err != nil {
			return 0, err
		}
		return uint64(ret), copyOutStruct(t, arg, ds)
	case ipc.SemGetVal, ipc.SemGetPid, ipc.SemGetNcnt, ipc.SemGetZcnt, ipc.SemSetVal:
		v, err := ns.SemCtl(id, num, cmd, int(int32(arg)), c)
		return uint64(v), err
	case ipc.SemGetAll:
		vals, err := ns.SemGetAll(id, c)
		if err != nil {
			return 0, err
		}
		return 0, copyOut(t, arg, linux.SliceAsBytes(vals))
	case ipc.SemSetAll:
		n, err := ns.SemCount(id, c, true)
		if err != nil {
			return 0, err
		}
		vals := make([]uint16, n)
		if err := copyIn(t, arg, linux.SliceAsBytes(vals)); err != nil {
			return 0, err
		}
		return 0, ns.SemSetAll(id, vals, c)
	case ipc.CmdSet:
		var ds linux.SemidDs
		if err := copyInStruct(t, arg, &ds); err != nil {
			return 0, err
		}
		return 0, ns.SemSet(id, ds, c)
	case ipc.CmdRmid:
		return 0, ns.SemRemove(id, c)
	}
	return 0, unix.EINVAL
}

// sysShmget implements shmget(2).
func sysShmget(t *kernel.Task, a Args) (uint64, error) {
	id, err := t.IPC().ShmGet(int32(a[0]), a[1], int(int32(a[2])), t.IPCCaller())
	return uint64(id), err
}

// shmLBA is SHMLBA on riscv64: a page.
const shmLBA = mm.PageSize

// shmatFlags are the flags shmat(2) knows.
const shmatFlags = ipc.ShmRdonly | ipc.ShmRnd | ipc.ShmRemap | ipc.ShmExec

// sysShmat implements shmat(2) as Linux's do_shmat: the address checks
// (SHM_RND rounds down to SHMLBA; SHM_REMAP needs an address), the
// segment and access checks, then a shared mapping of the segment at the
// address (EINVAL when it overlaps a mapping, unless SHM_REMAP) or
// wherever there is room. It returns the address.
func sysShmat(t *kernel.Task, a Args) (uint64, error) {
	id, addr, flags := int(int32(a[0])), uintptr(a[1]), int(int32(a[2]))
	if id < 0 {
		return 0, unix.EINVAL
	}
	if addr != 0 {
		if addr%shmLBA != 0 {
			if flags&ipc.ShmRnd == 0 {
				return 0, unix.EINVAL
			}
			addr &^= shmLBA - 1
			if addr == 0 && flags&ipc.ShmRemap != 0 {
				return 0, unix.EINVAL
			}
		}
	} else if flags&ipc.ShmRemap != 0 {
		return 0, unix.EINVAL
	}
	ns, c := t.IPC(), t.IPCCaller()
	at, err := ns.ShmAttach(id, flags, c)
	if err != nil {
		return 0, err
	}
	m := mm.Mapping{Perm: mm.Perm(true, flags&ipc.ShmRdonly == 0, flags&ipc.ShmExec != 0), Held: at.Mem,
		NoWrite: flags&ipc.ShmRdonly != 0}
	if addr != 0 {
		m.Fixed = flags&ipc.ShmRemap != 0
		m.NoReplace = !m.Fixed
	}
	p := t.Proc
	got, err := func() (uintptr, error) {
		p.Lock()
		defer p.Unlock()
		return p.AS.Mmap(addr, at.Size, m)
	}()
	ns.ShmAttached(at, err == nil, c)
	if errors.Is(err, mm.ErrExists) {
		return 0, unix.EINVAL
	}
	if err != nil {
		return 0, err
	}
	return uint64(got), nil
}

// sysShmdt implements shmdt(2).
func sysShmdt(t *kernel.Task, a Args) (uint64, error) {
	addr := uintptr(a[0])
	if addr%mm.PageSize != 0 {
		return 0, unix.EINVAL
	}
	ns := t.IPC()
	p := t.Proc
	seg, err := func() (*mm.SharedMemory, error) {
		p.Lock()
		defer p.Unlock()
		return p.AS.DetachSegment(addr, ns.IsSegment)
	}()
	if err != nil {
		return 0, err
	}
	ns.ShmDetached(seg, t.IPCCaller())
	return 0, nil
}

// sysShmctl implements shmctl(2).
func sysShmctl(t *kernel.Task, a Args) (uint64, error) {
	id, cmd, buf := int(int32(a[0])), int(int32(a[1])), a[2]
	ns, c := t.IPC(), t.IPCCaller()
	if id < 0 || cmd < 0 {
		return 0, unix.EINVAL
	}
	switch cmd {
	case ipc.CmdInfo:
		info, idx := ns.ShmInfo()
		return uint64(idx), copyOutStruct(t, buf, info)
	case ipc.ShmInfo:
		info, idx := ns.ShmUsage()
		return uint64(idx), copyOutStruct(t, buf, info)
	case ipc.CmdStat, ipc.ShmStat, ipc.ShmStatAny:
		ds, ret, err := ns.ShmStat(id, cmd != ipc.CmdStat, cmd == ipc.ShmStatAny, c)
		if err != nil {
			return 0, err
		}
		return uint64(ret), copyOutStruct(t, buf, ds)
	case ipc.CmdSet:
		var ds linux.ShmidDs
		if err := copyInStruct(t, buf, &ds); err != nil {
			return 0, err
		}
		return 0, ns.ShmSet(id, ds, c)
	case ipc.CmdRmid:
		return 0, ns.ShmRemove(id, c)
	case ipc.ShmLock, ipc.ShmUnlock:
		return 0, ns.ShmLock(id, cmd == ipc.ShmLock, t.Proc.Limit(unix.RLIMIT_MEMLOCK).Cur, c)
	}
	return 0, unix.EINVAL
}
