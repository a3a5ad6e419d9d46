package kernel

import (
	"strings"

	"golang.org/x/sys/unix"
)

// capPerfmon and capBPF are CAP_PERFMON and CAP_BPF.
const (
	capPerfmon = 38
	capBPF     = 39
)

// bpfUnprivDefault is kernel.unprivileged_bpf_disabled's default on
// Debian (CONFIG_BPF_UNPRIV_DEFAULT_OFF): disabled, until root says
// otherwise.
const bpfUnprivDefault = 2

// UnprivilegedBPFDisabled is /proc/sys/kernel/unprivileged_bpf_disabled:
// 0 lets any user make BPF maps and socket filters, 1 and 2 ask CAP_BPF
// or CAP_SYS_ADMIN (1 for good: it cannot be set back).
func (k *Kernel) UnprivilegedBPFDisabled() string {
	return string(rune('0' + k.bpfUnprivDisabled()))
}

func (k *Kernel) bpfUnprivDisabled() int32 {
	return k.bpfUnpriv.Load() ^ bpfUnprivDefault // stored so that the zero value is the default
}

// SetUnprivilegedBPFDisabled sets it from what root wrote, as Linux's
// bpf_unpriv_handler: 0, 1 or 2 (EINVAL otherwise); once 1, only 1
// (EPERM).
func (k *Kernel) SetUnprivilegedBPFDisabled(b []byte) error {
	var v int32
	switch strings.TrimSpace(string(b)) {
	case "0":
		v = 0
	case "1":
		v = 1
	case "2":
		v = 2
	default:
		return unix.EINVAL
	}
	if k.bpfUnprivDisabled() == 1 && v != 1 {
		return unix.EPERM
	}
	k.bpfUnpriv.Store(v ^ bpfUnprivDefault)
	return nil
}

// BPFAllowed reports whether t may make BPF maps and programs: with
// unprivileged BPF disabled, only with CAP_BPF or CAP_SYS_ADMIN, as
// Linux's bpf_capable.
func (t *Task) BPFAllowed() bool {
	return t.Proc.k.bpfUnprivDisabled() == 0 || t.BPFCapable()
}

// BPFCapable reports whether t holds CAP_BPF or CAP_SYS_ADMIN.
func (t *Task) BPFCapable() bool {
	return t.Proc.Caps.Effective&(1<<capBPF|1<<unix.CAP_SYS_ADMIN) != 0
}

// PerfmonCapable reports whether t holds CAP_PERFMON or CAP_SYS_ADMIN
// (Linux's perfmon_capable): perf events whatever perf_event_paranoid
// says, and BPF programs that may read stack they did not write (Linux's
// bpf_allow_uninit_stack).
func (t *Task) PerfmonCapable() bool {
	return t.Proc.Caps.Effective&(1<<capPerfmon|1<<unix.CAP_SYS_ADMIN) != 0
}
