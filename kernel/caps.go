package kernel

// Capabilities. Permission checks stand every capability for an
// effective uid of 0; the sets are kept as Linux keeps them, changed by
// capset(2), prctl's bounding-set calls, the uid changes and execve, so
// that programs read back what Linux would give them and are refused
// what Linux refuses.

// CapLast is CAP_LAST_CAP (CAP_CHECKPOINT_RESTORE in Linux 6.12).
const CapLast = 40

// CapAll has every capability.
const CapAll = uint64(1)<<(CapLast+1) - 1

// CapSetPCap is CAP_SETPCAP.
const CapSetPCap = 8

// CapWakeAlarm is CAP_WAKE_ALARM: timers and sleeps on the alarm clocks.
const CapWakeAlarm = 35

// Caps are a process's capability sets.
type Caps struct {
	Effective, Permitted, Inheritable uint64
	Bounding, Ambient                 uint64
}

// initCaps are init's: everything, nothing inheritable.
func initCaps() Caps { return Caps{Effective: CapAll, Permitted: CapAll, Bounding: CapAll} }

// FixCapsAfterSetuid applies a change of the user ids from the old real,
// effective and saved ones, as Linux's cap_task_fix_setuid: leaving
// root in all three drops the permitted, effective and ambient sets (the
// permitted one stays with SECBIT_KEEP_CAPS), leaving an effective uid
// of 0 the effective set, and gaining one makes the effective set the
// permitted one.
func (p *Process) FixCapsAfterSetuid(oldReal, oldEff, oldSaved uint32) {
	if (oldReal == 0 || oldEff == 0 || oldSaved == 0) && p.UID != 0 && p.EUID != 0 && p.SUID != 0 {
		if p.Settings.SecureBits.Load()&SecBitKeepCaps == 0 {
			p.Caps.Permitted = 0
		}
		p.Caps.Effective, p.Caps.Ambient = 0, 0
	}
	if oldEff == 0 && p.EUID != 0 {
		p.Caps.Effective = 0
	}
	if oldEff != 0 && p.EUID == 0 {
		p.Caps.Effective = p.Caps.Permitted
	}
}

// capsOnExec are the sets after execve of a program without file
// capabilities: root (real or effective uid 0) gets the bounding set
// permitted, effective when the effective uid is 0; others get their
// ambient set permitted and effective.
func (p *Process) capsOnExec() {
	c := &p.Caps
	if p.UID == 0 || p.EUID == 0 {
		c.Permitted = c.Inheritable | c.Bounding
		c.Effective = 0
		if p.EUID == 0 {
			c.Effective = c.Permitted
		}
		return
	}
	c.Permitted, c.Effective = c.Ambient, c.Ambient
}

// capFSMask are the capabilities of file-system access (CAP_FS_MASK).
const capFSMask = 1<<0 | 1<<27 | 1<<1 | 1<<2 | 1<<3 | 1<<4 | 1<<32

// FixCapsAfterSetfsuid applies a change of the file-system uid: leaving 0
// drops the file-system capabilities from the effective set, reaching 0
// raises those permitted.
func (p *Process) FixCapsAfterSetfsuid(old uint32) {
	switch {
	case old == 0 && p.FSUID != 0:
		p.Caps.Effective &^= capFSMask
	case old != 0 && p.FSUID == 0:
		p.Caps.Effective |= p.Caps.Permitted & capFSMask
	}
}
