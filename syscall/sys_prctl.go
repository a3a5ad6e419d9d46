package syscall

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/mm"
)

func init() {
	register(sysno.Unshare, func(t *kernel.Task, a Args) (uint64, error) { return 0, t.Unshare(a[0]) })
	register(sysno.Personality, sysPersonality)
}

// stickyTimeouts is the personality flag STICKY_TIMEOUTS.
const stickyTimeouts = 0x4000000

// sysPersonality implements personality(2): the old personality, and
// the new one unless it is 0xffffffff (a query).
func sysPersonality(t *kernel.Task, a Args) (uint64, error) {
	old := t.Proc.Personality.Load()
	if uint32(a[0]) != 0xffffffff {
		t.Proc.Personality.Store(uint32(a[0]))
	}
	return uint64(old), nil
}

// Linux's securebits that PR_SET_SECUREBITS takes (SECURE_ALL_BITS and
// their locks).
const secureBitsAll = 0x55 | 0xaa

// capValid reports a capability number Linux knows (cap_valid).
func capValid(c uint64) bool { return c <= kernel.CapLast }

// sysPrctl implements prctl(2) for the options programs and LTP use,
// with Linux's argument checks; an option it does not know, or one of a
// feature the kernel lacks (seccomp, x86's TSC), is EINVAL as on a
// kernel built without it.
func sysPrctl(t *kernel.Task, a Args) (uint64, error) {
	p := t.Proc
	s := &t.Settings
	switch a[0] {
	case unix.PR_SET_PDEATHSIG:
		if a[1] > 64 {
			return 0, unix.EINVAL
		}
		s.DeathSignal.Store(int32(a[1]))
		return 0, nil
	case unix.PR_GET_PDEATHSIG:
		return 0, copyOutStruct(t, a[1], s.DeathSignal.Load())
	case unix.PR_SET_NAME:
		name, err := copyInName(t, a[1])
		if err != nil {
			return 0, err
		}
		s.Name.Store(&name)
		return 0, nil
	case unix.PR_GET_NAME:
		b := make([]byte, 16)
		copy(b[:15], t.Comm())
		return 0, copyOut(t, a[1], b)
	case unix.PR_SET_DUMPABLE:
		if a[1] > 1 {
			return 0, unix.EINVAL
		}
		p.Settings.NotDumpable.Store(a[1] == 0)
		return 0, nil
	case unix.PR_GET_DUMPABLE:
		if p.Settings.NotDumpable.Load() {
			return 0, nil
		}
		return 1, nil
	case unix.PR_SET_KEEPCAPS:
		if a[1] > 1 {
			return 0, unix.EINVAL
		}
		if a[1] == 1 {
			p.Settings.SecureBits.Or(kernel.SecBitKeepCaps)
		} else {
			p.Settings.SecureBits.And(^uint32(kernel.SecBitKeepCaps))
		}
		return 0, nil
	case unix.PR_GET_KEEPCAPS:
		return uint64(p.Settings.SecureBits.Load()&kernel.SecBitKeepCaps) >> 4, nil
	case unix.PR_SET_SECUREBITS:
		old := p.Settings.SecureBits.Load()
		locks := old & 0xaa
		if p.Caps.Effective&(1<<kernel.CapSetPCap) == 0 || a[1]&^secureBitsAll != 0 ||
			(locks>>1)&(old^uint32(a[1])) != 0 || locks&^uint32(a[1]) != 0 {
			return 0, unix.EPERM
		}
		p.Settings.SecureBits.Store(uint32(a[1]))
		return 0, nil
	case unix.PR_GET_SECUREBITS:
		return uint64(p.Settings.SecureBits.Load()), nil
	case unix.PR_SET_TIMERSLACK:
		if int64(a[1]) <= 0 {
			s.TimerSlack.Store(s.DefaultTimerSlack.Load())
		} else {
			s.TimerSlack.Store(int64(a[1]))
		}
		return 0, nil
	case unix.PR_GET_TIMERSLACK:
		return uint64(s.TimerSlack.Load()), nil
	case unix.PR_SET_TIMING:
		if a[1] != unix.PR_TIMING_STATISTICAL {
			return 0, unix.EINVAL
		}
		return 0, nil
	case unix.PR_GET_TIMING:
		return unix.PR_TIMING_STATISTICAL, nil
	case unix.PR_SET_NO_NEW_PRIVS:
		if a[1] != 1 || a[2] != 0 || a[3] != 0 || a[4] != 0 {
			return 0, unix.EINVAL
		}
		s.NoNewPrivs.Store(true)
		return 0, nil
	case unix.PR_GET_NO_NEW_PRIVS:
		if a[1] != 0 || a[2] != 0 || a[3] != 0 || a[4] != 0 {
			return 0, unix.EINVAL
		}
		if s.NoNewPrivs.Load() {
			return 1, nil
		}
		return 0, nil
	case unix.PR_SET_THP_DISABLE:
		if a[2] != 0 || a[3] != 0 || a[4] != 0 {
			return 0, unix.EINVAL
		}
		p.Settings.THPDisable.Store(a[1] != 0)
		return 0, nil
	case unix.PR_GET_THP_DISABLE:
		if a[1] != 0 || a[2] != 0 || a[3] != 0 || a[4] != 0 {
			return 0, unix.EINVAL
		}
		if p.Settings.THPDisable.Load() {
			return 1, nil
		}
		return 0, nil
	case unix.PR_CAPBSET_READ:
		if !capValid(a[1]) {
			return 0, unix.EINVAL
		}
		return p.Caps.Bounding >> a[1] & 1, nil
	case unix.PR_CAPBSET_DROP:
		if p.Caps.Effective&(1<<kernel.CapSetPCap) == 0 {
			return 0, unix.EPERM
		}
		if !capValid(a[1]) {
			return 0, unix.EINVAL
		}
		p.Caps.Bounding &^= 1 << a[1]
		return 0, nil
	case unix.PR_CAP_AMBIENT:
		return capAmbient(t, a)
	case unix.PR_GET_SECCOMP:
		return uint64(t.SeccompMode()), nil
	case unix.PR_SET_SECCOMP:
		switch a[1] {
		case kernel.SeccompModeStrict:
			return 0, t.SetSeccompStrict()
		case kernel.SeccompModeFilter:
			return seccompFilter(t, 0, a[2])
		}
		return 0, unix.EINVAL
	case unix.PR_SET_MM:
		return 0, prctlSetMM(t, a)
	case unix.PR_SET_CHILD_SUBREAPER:
		p.ChildSubreaper.Store(a[1] != 0)
		return 0, nil
	case unix.PR_TASK_PERF_EVENTS_ENABLE, unix.PR_TASK_PERF_EVENTS_DISABLE:
		t.Kernel().Perf().SetOwnedEnabled(t.PerfEvents(), a[0] == unix.PR_TASK_PERF_EVENTS_ENABLE)
		return 0, nil
	case unix.PR_GET_CHILD_SUBREAPER:
		v := int32(0)
		if p.ChildSubreaper.Load() {
			v = 1
		}
		return 0, copyOutStruct(t, a[1], v)
	}
	return 0, unix.EINVAL
}

// copyInName reads a thread name as Linux's strncpy_from_user of 15
// bytes: up to a NUL or 15 bytes, EFAULT when it faults before either.
func copyInName(t *kernel.Task, addr uint64) (string, error) {
	t.Proc.Lock()
	defer t.Proc.Unlock()
	s, err := t.Proc.AS.CopyInString(uintptr(addr), 16)
	if err == nil {
		return s, nil
	}
	if !errors.Is(err, mm.ErrInvalid) {
		return "", unix.EFAULT
	}
	b := make([]byte, 15)
	if t.Proc.AS.CopyIn(uintptr(addr), b) != nil {
		return "", unix.EFAULT
	}
	return string(b), nil
}

// capAmbient is prctl(PR_CAP_AMBIENT, ...): the ambient set, whose
// capabilities must be permitted and inheritable to be raised.
func capAmbient(t *kernel.Task, a Args) (uint64, error) {
	c := &t.Proc.Caps
	if a[1] == unix.PR_CAP_AMBIENT_CLEAR_ALL {
		if a[2] != 0 || a[3] != 0 || a[4] != 0 {
			return 0, unix.EINVAL
		}
		c.Ambient = 0
		return 0, nil
	}
	if !capValid(a[2]) || a[3] != 0 || a[4] != 0 {
		return 0, unix.EINVAL
	}
	bit := uint64(1) << a[2]
	switch a[1] {
	case unix.PR_CAP_AMBIENT_IS_SET:
		if c.Ambient&bit != 0 {
			return 1, nil
		}
		return 0, nil
	case unix.PR_CAP_AMBIENT_RAISE:
		if c.Permitted&bit == 0 || c.Inheritable&bit == 0 || t.Proc.Settings.SecureBits.Load()&0x40 != 0 {
			return 0, unix.EPERM
		}
		c.Ambient |= bit
		return 0, nil
	case unix.PR_CAP_AMBIENT_LOWER:
		c.Ambient &^= bit
		return 0, nil
	}
	return 0, unix.EINVAL
}

// prctlMMMapSize is sizeof(struct prctl_mm_map).
const prctlMMMapSize = 104

// prctlSetMM decodes prctl(PR_SET_MM) in Linux's order of checks (the
// fields' own checks are kernel.SetMMField's).
func prctlSetMM(t *kernel.Task, a Args) error {
	opt, addr, arg4 := int(a[1]), a[2], a[3]
	if a[4] != 0 || arg4 != 0 && opt != unix.PR_SET_MM_AUXV && opt != unix.PR_SET_MM_MAP && opt != unix.PR_SET_MM_MAP_SIZE {
		return unix.EINVAL
	}
	switch opt {
	case unix.PR_SET_MM_MAP_SIZE:
		return copyOutStruct(t, addr, uint32(prctlMMMapSize))
	case unix.PR_SET_MM_MAP:
		return prctlSetMMMap(t, addr, arg4)
	}
	if t.Proc.Caps.Effective&(1<<unix.CAP_SYS_RESOURCE) == 0 {
		return unix.EPERM
	}
	switch opt {
	case unix.PR_SET_MM_EXE_FILE:
		return t.SetExeFile(int(int32(addr)))
	case unix.PR_SET_MM_AUXV:
		if arg4 > kernel.MaxSavedAuxv {
			return unix.EINVAL
		}
		auxv := make([]byte, arg4)
		if err := copyIn(t, addr, auxv); err != nil {
			return err
		}
		return t.SetMMAuxv(auxv)
	}
	return t.SetMMField(opt, uintptr(addr))
}

// prctlSetMMMap decodes PR_SET_MM_MAP's struct prctl_mm_map.
func prctlSetMMMap(t *kernel.Task, addr, size uint64) error {
	if size != prctlMMMapSize {
		return unix.EINVAL
	}
	var w [13]uint64 // eleven addresses, auxv, then auxv_size and exe_fd
	if err := copyInStruct(t, addr, &w); err != nil {
		return err
	}
	m := kernel.MMMap{Layout: mm.Layout{StartCode: uintptr(w[0]), EndCode: uintptr(w[1]), StartData: uintptr(w[2]),
		EndData: uintptr(w[3]), StartStack: uintptr(w[6]), ArgStart: uintptr(w[7]), ArgEnd: uintptr(w[8]),
		EnvStart: uintptr(w[9]), EnvEnd: uintptr(w[10])}, StartBrk: uintptr(w[4]), Brk: uintptr(w[5]),
		ExeFD: int32(w[12] >> 32)}
	if err := t.Proc.ValidLayout(&m); err != nil {
		return err
	}
	if auxvSize := uint32(w[12]); auxvSize != 0 {
		if w[11] == 0 || auxvSize > kernel.MaxSavedAuxv {
			return unix.EINVAL
		}
		m.Auxv = make([]byte, auxvSize)
		if err := copyIn(t, w[11], m.Auxv); err != nil {
			return err
		}
	}
	return t.SetMMMap(m)
}
