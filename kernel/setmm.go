package kernel

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
)

// prctl(PR_SET_MM): checkpoint/restore tools put a restored process's
// memory layout back, field by field (with CAP_SYS_RESOURCE) or all at
// once (PR_SET_MM_MAP, unprivileged), as Linux's prctl_set_mm.

// MMMap is struct prctl_mm_map: a whole layout, with the break, the
// saved auxiliary vector (nil: unchanged) and the descriptor of a new
// executable (-1: unchanged).
type MMMap struct {
	mm.Layout
	StartBrk, Brk uintptr
	Auxv          []byte
	ExeFD         int32
}

// MaxSavedAuxv is the most bytes of auxiliary vector a process keeps
// (Linux's saved_auxv on riscv64: AT_VECTOR_SIZE words).
const MaxSavedAuxv = 64 * 8

// SetMMField implements PR_SET_MM for one field of the layout or the
// break (PR_SET_MM_START_CODE to PR_SET_MM_ENV_END): EPERM without
// CAP_SYS_RESOURCE, EINVAL for an address outside user memory or a
// layout out of order, EFAULT for a stack or argument address no
// mapping holds.
func (t *Task) SetMMField(opt int, addr uintptr) error {
	p := t.Proc
	if p.Caps.Effective&(1<<unix.CAP_SYS_RESOURCE) == 0 {
		return unix.EPERM
	}
	if addr >= mm.MaxUserVA || addr < mm.UserMin {
		return unix.EINVAL
	}
	p.Lock()
	defer p.Unlock()
	as := p.AS
	m := MMMap{Layout: as.Layout, StartBrk: as.BrkBase, Brk: as.Brk}
	fields := map[int]*uintptr{
		unix.PR_SET_MM_START_CODE: &m.StartCode, unix.PR_SET_MM_END_CODE: &m.EndCode,
		unix.PR_SET_MM_START_DATA: &m.StartData, unix.PR_SET_MM_END_DATA: &m.EndData,
		unix.PR_SET_MM_START_BRK: &m.StartBrk, unix.PR_SET_MM_BRK: &m.Brk,
		unix.PR_SET_MM_START_STACK: &m.StartStack, unix.PR_SET_MM_ARG_START: &m.ArgStart,
		unix.PR_SET_MM_ARG_END: &m.ArgEnd, unix.PR_SET_MM_ENV_START: &m.EnvStart, unix.PR_SET_MM_ENV_END: &m.EnvEnd,
	}
	f, ok := fields[opt]
	if !ok {
		return unix.EINVAL
	}
	*f = addr
	if err := p.ValidLayout(&m); err != nil {
		return err
	}
	switch opt {
	case unix.PR_SET_MM_START_STACK, unix.PR_SET_MM_ARG_START, unix.PR_SET_MM_ARG_END,
		unix.PR_SET_MM_ENV_START, unix.PR_SET_MM_ENV_END:
		if !as.MapsAtOrAbove(addr) {
			return unix.EFAULT
		}
	}
	as.Layout, as.BrkBase, as.Brk = m.Layout, m.StartBrk, m.Brk
	return nil
}

// ValidLayout checks a layout as Linux's validate_prctl_map_addr: every
// address in user memory, the pairs in order, and the data and heap
// within RLIMIT_DATA; EINVAL otherwise.
func (p *Process) ValidLayout(m *MMMap) error {
	for _, a := range []uintptr{m.StartCode, m.EndCode, m.StartData, m.EndData, m.StartBrk, m.Brk,
		m.StartStack, m.ArgStart, m.ArgEnd, m.EnvStart, m.EnvEnd} {
		if a >= mm.MaxUserVA || a < mm.UserMin {
			return unix.EINVAL
		}
	}
	if m.StartCode >= m.EndCode || m.StartData > m.EndData || m.StartBrk > m.Brk ||
		m.ArgStart > m.ArgEnd || m.EnvStart > m.EnvEnd {
		return unix.EINVAL
	}
	if lim := p.Limit(unix.RLIMIT_DATA).Cur; lim != unix.RLIM_INFINITY &&
		uint64(m.Brk-m.StartBrk)+uint64(m.EndData-m.StartData) > lim {
		return unix.EINVAL
	}
	return nil
}

// SetMMMap implements PR_SET_MM_MAP: the whole layout at once, checked
// as one field is, with the saved auxiliary vector (EINVAL past
// MaxSavedAuxv) and a new executable, which needs CAP_SYS_ADMIN or
// CAP_CHECKPOINT_RESTORE (EPERM).
func (t *Task) SetMMMap(m MMMap) error {
	p := t.Proc
	if err := p.ValidLayout(&m); err != nil {
		return err
	}
	if len(m.Auxv) > MaxSavedAuxv {
		return unix.EINVAL
	}
	if m.ExeFD != -1 {
		if p.Caps.Effective&(1<<unix.CAP_SYS_ADMIN|1<<capCheckpointRestore) == 0 {
			return unix.EPERM
		}
		if err := t.SetExeFile(int(m.ExeFD)); err != nil {
			return err
		}
	}
	p.Lock()
	defer p.Unlock()
	as := p.AS
	as.Layout, as.BrkBase, as.Brk = m.Layout, m.StartBrk, m.Brk
	if m.Auxv != nil {
		as.SavedAuxv = endAuxv(m.Auxv)
	}
	return nil
}

// SetMMAuxv implements PR_SET_MM_AUXV: the saved auxiliary vector that
// /proc/PID/auxv shows (EINVAL past MaxSavedAuxv, EPERM without
// CAP_SYS_RESOURCE).
func (t *Task) SetMMAuxv(auxv []byte) error {
	p := t.Proc
	if p.Caps.Effective&(1<<unix.CAP_SYS_RESOURCE) == 0 {
		return unix.EPERM
	}
	if len(auxv) > MaxSavedAuxv {
		return unix.EINVAL
	}
	p.Lock()
	defer p.Unlock()
	v := make([]byte, MaxSavedAuxv)
	copy(v, p.AS.SavedAuxv)
	copy(v, auxv) // the rest stays, as Linux copies only what was given
	clear(v[MaxSavedAuxv-16:])
	p.AS.SavedAuxv = v
	return nil
}

// endAuxv is auxv in a vector of MaxSavedAuxv bytes whose last entry is
// AT_NULL whatever the caller gave, as Linux terminates saved_auxv.
func endAuxv(auxv []byte) []byte {
	v := make([]byte, MaxSavedAuxv)
	copy(v, auxv)
	clear(v[MaxSavedAuxv-16:])
	return v
}

// SetExeFile implements PR_SET_MM_EXE_FILE: /proc/PID/exe becomes the
// file open on fd (EBADF), which must be a regular file t may execute
// (EACCES), once the old executable is mapped no more (EBUSY), as
// Linux's replace_mm_exe_file. The caller checked privilege.
func (t *Task) SetExeFile(fd int) error {
	p := t.Proc
	d, err := p.Files.Get(fd)
	if err != nil {
		return err
	}
	defer d.DecRef()
	nf, ok := d.NodeFile()
	if !ok || !nf.Node().Mode.IsRegular() || fs.Access(nf.Node(), p.Cred(), fs.MayExec) != nil {
		return unix.EACCES
	}
	p.Lock()
	defer p.Unlock()
	for _, v := range p.AS.VMAs() {
		if v.Path != "" && v.Path == p.Exe {
			return unix.EBUSY
		}
	}
	p.mu.Lock()
	p.Exe = nf.Path()
	p.mu.Unlock()
	return nil
}
