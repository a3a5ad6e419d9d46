package kernel

import (
	"encoding/binary"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

// Seccomp (Linux's kernel/seccomp.c). A thread in strict mode may only
// read, write, exit and return from signal handlers; one in filter mode
// runs each of its system calls through classic BPF programs over
// struct seccomp_data, the most recent first, and the most severe answer
// decides: kill the process or the thread, SIGSYS (TRAP), an errno,
// allow. Filters are inherited by clone and kept across execve; a thread
// adds them with no_new_privs or CAP_SYS_ADMIN. A supervisor's
// notifications (SECCOMP_RET_USER_NOTIF) and tracers (SECCOMP_RET_TRACE)
// have no listener here, so those answers fail the call with ENOSYS, as
// Linux does when none is attached.

// Seccomp modes (linux/seccomp.h).
const (
	SeccompModeDisabled = 0
	SeccompModeStrict   = 1
	SeccompModeFilter   = 2
)

// Filter answers (SECCOMP_RET_*), their action part and their data.
const (
	SeccompRetKillProcess = 0x80000000
	SeccompRetKillThread  = 0x00000000
	SeccompRetTrap        = 0x00030000
	SeccompRetErrno       = 0x00050000
	SeccompRetUserNotif   = 0x7fc00000
	SeccompRetTrace       = 0x7ff00000
	SeccompRetLog         = 0x7ffc0000
	SeccompRetAllow       = 0x7fff0000
	seccompRetActionFull  = 0xffff0000
	seccompRetData        = 0x0000ffff
)

// AuditArchRISCV64 is seccomp_data's arch on riscv64 (AUDIT_ARCH_RISCV64).
const AuditArchRISCV64 = 0xc00000f3

// SECCOMP_SET_MODE_FILTER's flags (SECCOMP_FILTER_FLAG_*).
const (
	SeccompFlagTsync            = 1
	SeccompFlagLog              = 2
	SeccompFlagSpecAllow        = 4
	SeccompFlagNewListener      = 8
	SeccompFlagTsyncESRCH       = 16
	SeccompFlagWaitKillableRecv = 32
	seccompFlagsKnown           = 63
)

// Limits and sizes, as Linux's.
const (
	seccompMaxInsnsPerPath = 1 << 18 / bpfInsnSize // MAX_INSNS_PER_PATH
	bpfMaxInsns            = 4096                  // BPF_MAXINSNS
	bpfMemWords            = 16                    // BPF_MEMWORDS
	bpfInsnSize            = 8                     // sizeof(struct sock_filter)
	seccompDataSize        = 64                    // sizeof(struct seccomp_data)
	seccompFilterCost      = 256                   // a filter's own struct, besides its program
	maxErrno               = 4095
	siSysSeccomp           = 1 // SYS_SECCOMP, SIGSYS's si_code
	seccompModeDead        = 3 // SECCOMP_MODE_DEAD: a kill is under way
)

// The calls strict mode allows.
const sysRead, sysWrite, sysExit, sysRtSigreturn = 63, 64, 93, 139

// BPFInsn is struct sock_filter: a classic BPF instruction.
type BPFInsn struct {
	Code   uint16
	JT, JF uint8
	K      uint32
}

// seccompFilter is one program, and the filters installed before it
// (which run after it). Filters never change once installed.
type seccompFilter struct {
	prog  []BPFInsn
	prev  *seccompFilter
	log   bool
	insns int // this program's and its predecessors', with Linux's 4 per filter
}

// taskSeccomp is a thread's seccomp state.
type taskSeccomp struct {
	mode   atomic.Uint32
	filter atomic.Pointer[seccompFilter]
}

// SeccompActive says whether t's calls go through SeccompCheck.
func (t *Task) SeccompActive() bool { return t.seccomp.mode.Load() != SeccompModeDisabled }

// SeccompMode returns t's seccomp mode (PR_GET_SECCOMP).
func (t *Task) SeccompMode() int { return int(t.seccomp.mode.Load()) }

// inheritSeccomp gives a new thread its creator's mode and filters.
func (t *Task) inheritSeccomp(parent *Task) {
	t.seccomp.filter.Store(parent.seccomp.filter.Load())
	t.seccomp.mode.Store(parent.seccomp.mode.Load())
}

// SetSeccompStrict puts t in strict mode: EINVAL once it has filters.
func (t *Task) SetSeccompStrict() error {
	if m := t.seccomp.mode.Load(); m != SeccompModeDisabled && m != SeccompModeStrict {
		return unix.EINVAL
	}
	t.seccomp.mode.Store(SeccompModeStrict)
	return nil
}

// AddSeccompFilter installs prog, as seccomp(SECCOMP_SET_MODE_FILTER)
// does: EACCES without no_new_privs or CAP_SYS_ADMIN, EINVAL for a bad
// program, unknown flags or strict mode, ENOMEM past 256 KiB of programs
// on the path or the kernel's budget. With SECCOMP_FILTER_FLAG_TSYNC
// every thread of the process gets the filters, unless one has filters
// of its own: then the result is that thread's id (or ESRCH with
// TSYNC_ESRCH) and nothing changes.
func (t *Task) AddSeccompFilter(prog []BPFInsn, flags uint32) (int, error) {
	p := t.Proc
	switch {
	case flags&^seccompFlagsKnown != 0,
		flags&SeccompFlagNewListener != 0: // no supervisor's listener here
		return 0, unix.EINVAL
	case !t.Settings.NoNewPrivs.Load() && p.Caps.Effective&(1<<unix.CAP_SYS_ADMIN) == 0:
		return 0, unix.EACCES
	}
	if err := checkSeccompProgram(prog); err != nil {
		return 0, err
	}
	if m := t.seccomp.mode.Load(); m != SeccompModeDisabled && m != SeccompModeFilter {
		return 0, unix.EINVAL
	}
	prev := t.seccomp.filter.Load()
	f := &seccompFilter{prog: prog, prev: prev, log: flags&SeccompFlagLog != 0, insns: len(prog)}
	if prev != nil {
		f.insns += prev.insns + 4
	}
	if f.insns > seccompMaxInsnsPerPath {
		return 0, unix.ENOMEM
	}
	if err := mm.Charged.Charge(seccompFilterCost + len(prog)*bpfInsnSize); err != nil {
		return 0, unix.ENOMEM
	}
	if flags&SeccompFlagTsync == 0 {
		t.seccomp.filter.Store(f)
		t.seccomp.mode.Store(SeccompModeFilter)
		return 0, nil
	}
	threads := tasksOf(p)
	for _, o := range threads {
		if o != t && !o.seccomp.descendsTo(prev) {
			mm.Charged.Uncharge(seccompFilterCost + len(prog)*bpfInsnSize)
			if flags&SeccompFlagTsyncESRCH != 0 {
				return 0, unix.ESRCH
			}
			return o.TID, nil
		}
	}
	for _, o := range threads {
		o.seccomp.filter.Store(f)
		o.seccomp.mode.Store(SeccompModeFilter)
	}
	return 0, nil
}

// descendsTo reports whether s's filters are those of f or f's
// predecessors (is_ancestor): TSYNC may replace them with f's successor.
func (s *taskSeccomp) descendsTo(f *seccompFilter) bool {
	if s.mode.Load() == SeccompModeStrict {
		return false
	}
	cur := s.filter.Load()
	for g := f; ; g = g.prev {
		if g == cur {
			return true
		}
		if g == nil {
			return false
		}
	}
}

// Classic BPF's instruction fields (linux/filter.h).
const (
	bpfLD, bpfLDX, bpfST, bpfSTX, bpfALU, bpfJMP, bpfRET, bpfMISC = 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07
	bpfW, bpfIMM, bpfABS, bpfMEM, bpfLEN                          = 0x00, 0x00, 0x20, 0x60, 0x80
	bpfADD, bpfSUB, bpfMUL, bpfDIV, bpfOR, bpfAND, bpfLSH, bpfRSH = 0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70
	bpfNEG, bpfXOR                                                = 0x80, 0xa0
	bpfJA, bpfJEQ, bpfJGT, bpfJGE, bpfJSET                        = 0x00, 0x10, 0x20, 0x30, 0x40
	bpfK, bpfX, bpfA                                              = 0x00, 0x08, 0x10
	bpfTAX, bpfTXA                                                = 0x00, 0x80
)

// checkSeccompProgram checks a program as Linux's bpf_check_classic and
// seccomp_check_filter: 1 to 4096 instructions of the subset seccomp
// runs, loads of struct seccomp_data only at aligned offsets inside it,
// jumps forward inside the program, no division by a zero constant or
// shift past 31, scratch memory written before it is read, and a return
// last; EINVAL otherwise.
func checkSeccompProgram(prog []BPFInsn) error {
	n := len(prog)
	if n == 0 || n > bpfMaxInsns {
		return unix.EINVAL
	}
	for pc, in := range prog {
		k := in.K
		switch in.Code {
		case bpfLD | bpfW | bpfABS:
			if k >= seccompDataSize || k&3 != 0 {
				return unix.EINVAL
			}
		case bpfLD | bpfW | bpfLEN, bpfLDX | bpfW | bpfLEN, bpfLD | bpfIMM, bpfLDX | bpfIMM,
			bpfMISC | bpfTAX, bpfMISC | bpfTXA, bpfRET | bpfK, bpfRET | bpfA, bpfALU | bpfNEG:
		case bpfALU | bpfDIV | bpfK:
			if k == 0 {
				return unix.EINVAL
			}
		case bpfALU | bpfLSH | bpfK, bpfALU | bpfRSH | bpfK:
			if k >= 32 {
				return unix.EINVAL
			}
		case bpfALU | bpfADD | bpfK, bpfALU | bpfADD | bpfX, bpfALU | bpfSUB | bpfK, bpfALU | bpfSUB | bpfX,
			bpfALU | bpfMUL | bpfK, bpfALU | bpfMUL | bpfX, bpfALU | bpfDIV | bpfX,
			bpfALU | bpfAND | bpfK, bpfALU | bpfAND | bpfX, bpfALU | bpfOR | bpfK, bpfALU | bpfOR | bpfX,
			bpfALU | bpfXOR | bpfK, bpfALU | bpfXOR | bpfX, bpfALU | bpfLSH | bpfX, bpfALU | bpfRSH | bpfX:
		case bpfLD | bpfMEM, bpfLDX | bpfMEM, bpfST, bpfSTX:
			if k >= bpfMemWords {
				return unix.EINVAL
			}
		case bpfJMP | bpfJA:
			if k >= uint32(n-pc-1) {
				return unix.EINVAL
			}
		case bpfJMP | bpfJEQ | bpfK, bpfJMP | bpfJEQ | bpfX, bpfJMP | bpfJGE | bpfK, bpfJMP | bpfJGE | bpfX,
			bpfJMP | bpfJGT | bpfK, bpfJMP | bpfJGT | bpfX, bpfJMP | bpfJSET | bpfK, bpfJMP | bpfJSET | bpfX:
			if pc+int(in.JT)+1 >= n || pc+int(in.JF)+1 >= n {
				return unix.EINVAL
			}
		default:
			return unix.EINVAL
		}
	}
	if last := prog[n-1].Code; last != bpfRET|bpfK && last != bpfRET|bpfA {
		return unix.EINVAL
	}
	return checkScratchMemory(prog)
}

// checkScratchMemory is Linux's check_load_and_stores: no path reads a
// scratch word before writing it.
func checkScratchMemory(prog []BPFInsn) error {
	valid := make([]uint16, len(prog)+1)
	for i := range valid {
		valid[i] = 0xffff
	}
	mem := uint16(0)
	for pc, in := range prog {
		mem &= valid[pc]
		switch in.Code {
		case bpfST, bpfSTX:
			mem |= 1 << in.K
		case bpfLD | bpfMEM, bpfLDX | bpfMEM:
			if mem&(1<<in.K) == 0 {
				return unix.EINVAL
			}
		case bpfJMP | bpfJA:
			valid[pc+1+int(in.K)] &= mem
			mem = 0xffff
		case bpfJMP | bpfJEQ | bpfK, bpfJMP | bpfJEQ | bpfX, bpfJMP | bpfJGE | bpfK, bpfJMP | bpfJGE | bpfX,
			bpfJMP | bpfJGT | bpfK, bpfJMP | bpfJGT | bpfX, bpfJMP | bpfJSET | bpfK, bpfJMP | bpfJSET | bpfX:
			valid[pc+1+int(in.JT)] &= mem
			valid[pc+1+int(in.JF)] &= mem
			mem = 0xffff
		}
	}
	return nil
}

// runBPF runs a checked program over data and returns its answer; a
// division by a zero register answers 0, as Linux's interpreter does.
func runBPF(prog []BPFInsn, data *[seccompDataSize]byte) uint32 {
	var a, x uint32
	var m [bpfMemWords]uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		src := in.K
		if class := in.Code & 0x07; (class == bpfALU || class == bpfJMP) && in.Code&bpfX != 0 {
			src = x
		}
		switch in.Code & 0x07 {
		case bpfLD:
			switch in.Code &^ 0x07 {
			case bpfW | bpfABS:
				a = binary.LittleEndian.Uint32(data[in.K:])
			case bpfW | bpfLEN:
				a = seccompDataSize
			case bpfIMM:
				a = in.K
			case bpfMEM:
				a = m[in.K]
			}
		case bpfLDX:
			switch in.Code &^ 0x07 {
			case bpfW | bpfLEN:
				x = seccompDataSize
			case bpfIMM:
				x = in.K
			case bpfMEM:
				x = m[in.K]
			}
		case bpfST:
			m[in.K] = a
		case bpfSTX:
			m[in.K] = x
		case bpfALU:
			switch in.Code & 0xf0 {
			case bpfADD:
				a += src
			case bpfSUB:
				a -= src
			case bpfMUL:
				a *= src
			case bpfDIV:
				if src == 0 {
					return 0
				}
				a /= src
			case bpfOR:
				a |= src
			case bpfAND:
				a &= src
			case bpfXOR:
				a ^= src
			case bpfLSH:
				a <<= src & 31
			case bpfRSH:
				a >>= src & 31
			case bpfNEG:
				a = -a
			}
		case bpfJMP:
			var taken bool
			switch in.Code & 0xf0 {
			case bpfJA:
				pc += int(in.K)
				continue
			case bpfJEQ:
				taken = a == src
			case bpfJGT:
				taken = a > src
			case bpfJGE:
				taken = a >= src
			case bpfJSET:
				taken = a&src != 0
			}
			if taken {
				pc += int(in.JT)
			} else {
				pc += int(in.JF)
			}
		case bpfRET:
			if in.Code&bpfA != 0 {
				return a
			}
			return in.K
		case bpfMISC:
			if in.Code&0xf8 == bpfTXA {
				a = x
			} else {
				x = a
			}
		}
	}
	return 0 // unreachable: a checked program ends with a return
}

// SeccompVerdict is what seccomp decided for a system call.
type SeccompVerdict int

// What the system call layer does with a call.
const (
	SeccompRun  SeccompVerdict = iota // run it
	SeccompFail                       // skip it: the call returns -errno
	SeccompSkip                       // skip it: a signal or a kill came instead, the registers untouched
)

// SeccompCheck decides a system call of t (number nr, arguments args,
// at pc, the address after its ecall) as Linux's __secure_computing:
// it returns the verdict and, for SeccompFail, the errno.
func (t *Task) SeccompCheck(nr uint64, args [6]uint64, pc uint64) (SeccompVerdict, unix.Errno) {
	switch t.seccomp.mode.Load() {
	case SeccompModeDisabled:
		return SeccompRun, 0
	case SeccompModeStrict:
		switch nr {
		case sysRead, sysWrite, sysExit, sysRtSigreturn:
			return SeccompRun, 0
		}
		t.seccompKill(unix.SIGKILL, false)
		return SeccompSkip, 0
	case seccompModeDead:
		return SeccompSkip, 0
	}
	var data [seccompDataSize]byte
	binary.LittleEndian.PutUint32(data[0:], uint32(nr))
	binary.LittleEndian.PutUint32(data[4:], AuditArchRISCV64)
	binary.LittleEndian.PutUint64(data[8:], pc)
	for i, v := range args {
		binary.LittleEndian.PutUint64(data[16+8*i:], v)
	}
	ret := uint32(SeccompRetAllow)
	for f := t.seccomp.filter.Load(); f != nil; f = f.prev {
		if r := runBPF(f.prog, &data); int32(r&seccompRetActionFull) < int32(ret&seccompRetActionFull) {
			ret = r
		}
	}
	value := ret & seccompRetData
	switch ret & seccompRetActionFull {
	case SeccompRetAllow, SeccompRetLog:
		return SeccompRun, 0
	case SeccompRetErrno:
		return SeccompFail, unix.Errno(min(value, maxErrno))
	case SeccompRetTrace, SeccompRetUserNotif: // no tracer, no listener
		return SeccompFail, unix.ENOSYS
	case SeccompRetTrap:
		t.seccompTrap(nr, pc, value)
		return SeccompSkip, 0
	case SeccompRetKillThread:
		t.seccompKill(unix.SIGSYS, true)
		return SeccompSkip, 0
	}
	t.seccompKill(unix.SIGSYS, false) // KILL_PROCESS, and any answer unknown
	return SeccompSkip, 0
}

// seccompTrap sends t SIGSYS for a trapped call, unblocked, with the
// call's number and place (force_sig_seccomp).
func (t *Task) seccompTrap(nr, pc uint64, errno uint32) {
	p := t.Proc
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	a := &p.sig.actions[unix.SIGSYS-1]
	if a.Handler == SigIgnore || t.sig.mask&Bit(unix.SIGSYS) != 0 {
		*a = SigAction{}
	}
	t.sig.mask &^= Bit(unix.SIGSYS)
	t.sig.pending |= Bit(unix.SIGSYS)
	t.sig.queue = append(t.sig.queue, SigInfo{Signo: unix.SIGSYS, Code: siSysSeccomp, Addr: pc,
		Syscall: int32(nr), Errno: int32(errno)})
}

// seccompKill ends t for a call seccomp refused: the process, dumping
// core for SIGSYS, or with thread set only t when others remain, as
// Linux's do_exit for a thread of several.
func (t *Task) seccompKill(sig unix.Signal, thread bool) {
	t.seccomp.mode.Store(seccompModeDead)
	p := t.Proc
	if thread && len(tasksOf(p)) > 1 {
		t.ExitThread(128 + int(sig))
		return
	}
	t.Exiting = true
	if sig == unix.SIGSYS {
		t.dumpCoreFor(sig)
	}
	p.exitBySignal(sig)
}
