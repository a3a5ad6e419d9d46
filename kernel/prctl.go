package kernel

import (
	"strings"
	"sync/atomic"
)

// TaskSettings are what prctl(2) sets of a thread.
type TaskSettings struct {
	// Name is PR_SET_NAME's (nil: the executable's base name).
	Name atomic.Pointer[string]
	// DeathSignal is PR_SET_PDEATHSIG's; kept and read back, not sent
	// (the parent's exit does not signal it yet).
	DeathSignal atomic.Int32
	// TimerSlack and its default, in ns (PR_SET_TIMERSLACK): kept, the
	// kernel's timers fire without slack.
	TimerSlack, DefaultTimerSlack atomic.Int64
	// NoNewPrivs: execve applies no set-user-ID or set-group-ID bit.
	NoNewPrivs atomic.Bool
}

// defaultTimerSlack is init's timer slack, 50 us as on Linux.
const defaultTimerSlack = 50000

// initSettings gives init's first thread Linux's defaults.
func (t *Task) initSettings() {
	t.Settings.TimerSlack.Store(defaultTimerSlack)
	t.Settings.DefaultTimerSlack.Store(defaultTimerSlack)
}

// inheritSettings gives a new thread its creator's settings as Linux's
// copy_process does: the name and no_new_privs, the creator's current
// timer slack as both its slack and its default, no death signal.
func (t *Task) inheritSettings(parent *Task) {
	t.Settings.Name.Store(parent.Settings.Name.Load())
	slack := parent.Settings.TimerSlack.Load()
	t.Settings.TimerSlack.Store(slack)
	t.Settings.DefaultTimerSlack.Store(slack)
	t.Settings.NoNewPrivs.Store(parent.Settings.NoNewPrivs.Load())
}

// ProcessSettings are what prctl(2) sets of a process.
type ProcessSettings struct {
	// NotDumpable is PR_SET_DUMPABLE 0 (no core dumps are written).
	NotDumpable atomic.Bool
	// THPDisable is PR_SET_THP_DISABLE's (no huge pages are made anyway).
	THPDisable atomic.Bool
	// SecureBits are PR_SET_SECUREBITS' (SECBIT_KEEP_CAPS is
	// PR_SET_KEEPCAPS', which FixCapsAfterSetuid honours).
	SecureBits atomic.Uint32
	// CoredumpFilter is /proc/PID/coredump_filter's: which kinds of
	// mapping a core dump holds (mm.CoreSegments), inherited across fork
	// and execve.
	CoredumpFilter atomic.Uint32
}

// ChildSubreaper is PR_SET_CHILD_SUBREAPER's mark: the process's
// orphaned descendants become its children (reparentChildren); not
// inherited.
type ChildSubreaper = atomic.Bool

// Personality is personality(2)'s execution domain and flags, inherited
// across fork and execve: the flags the kernel acts on are
// STICKY_TIMEOUTS (ppoll and pselect6 leave their timeout alone).
type Personality = atomic.Uint32

// SecBitKeepCaps is SECBIT_KEEP_CAPS.
const SecBitKeepCaps = 1 << 4

// Comm is the thread's name (PR_GET_NAME, a core file's %e): what
// PR_SET_NAME gave it, else the executable's base name, at most 15 bytes.
func (t *Task) Comm() string {
	if name := t.Settings.Name.Load(); name != nil {
		return *name
	}
	t.Proc.mu.Lock()
	exe := t.Proc.Exe
	t.Proc.mu.Unlock()
	base := exe[strings.LastIndexByte(exe, '/')+1:]
	return base[:min(len(base), 15)]
}
