package linux

// Sigaction is struct sigaction on riscv64: handler, flags, mask (no
// restorer).
type Sigaction struct {
	Handler uint64
	Flags   uint64
	Mask    uint64
}

// SizeofSigset is the size of the kernel's sigset_t, the only size
// rt_sigprocmask and its kind accept.
const SizeofSigset = 8

// StackT is stack_t (sigaltstack).
type StackT struct {
	SP    uint64
	Flags int32
	_     int32
	Size  uint64
}

// Siginfo is siginfo_t, 128 bytes: signo, errno, code, then the union.
// The union member a signal uses overlays Pid, UID and Value: kill and
// sigqueue fill all three (Value is sigval), SIGCHLD puts the status in
// Value's low word (SetStatus), and a fault its address over Pid and UID
// (SetAddr).
type Siginfo struct {
	Signo int32
	Errno int32
	Code  int32
	_     int32
	Pid   int32
	UID   uint32
	Value uint64
	_     [96]byte
}

// SetAddr stores si_addr, the faulting address.
func (s *Siginfo) SetAddr(addr uint64) {
	s.Pid, s.UID = int32(uint32(addr)), uint32(addr>>32)
}

// SetPoll stores an I/O signal's si_band and si_fd (SIGPOLL's layout).
func (s *Siginfo) SetPoll(band int64, fd int32) {
	s.Pid, s.UID = int32(uint32(band)), uint32(uint64(band)>>32)
	s.Value = uint64(uint32(fd))
}

// SetSys stores a seccomp SIGSYS's si_call_addr, si_syscall and si_arch.
func (s *Siginfo) SetSys(callAddr uint64, syscall int32, arch uint32) {
	s.SetAddr(callAddr)
	s.Value = uint64(uint32(syscall)) | uint64(arch)<<32
}

// SetStatus stores SIGCHLD's si_status.
func (s *Siginfo) SetStatus(status int32) { s.Value = uint64(uint32(status)) }

// Sigcontext is struct sigcontext on riscv64: user_regs_struct (the pc,
// then x1-x31) and the FP state, the d extension's registers in the
// q-sized union (__riscv_fp_state).
type Sigcontext struct {
	Regs [32]uint64
	F    [32]uint64
	FCSR uint32
	_    [67]uint32 // the rest of the q extension's 528 bytes
}

// Ucontext is struct ucontext on riscv64: uc_sigmask is padded to 1024
// bits, and uc_mcontext is 16-byte aligned.
type Ucontext struct {
	Flags    uint64
	Link     uint64
	Stack    StackT
	Sigmask  uint64
	_        [15]uint64 // the rest of the 1024-bit sigset
	_        uint64     // uc_mcontext's alignment
	Mcontext Sigcontext
}

// RtSigframe is struct rt_sigframe (arch/riscv/kernel/signal.c): what a
// signal handler finds on its stack, a1 pointing at Info and a2 at UC.
type RtSigframe struct {
	Info Siginfo
	UC   Ucontext
}

// Sigevent is struct sigevent (64 bytes): how a timer or a message queue
// notifies. TID is SIGEV_THREAD_ID's thread (the union's first word).
type Sigevent struct {
	Value  uint64
	Signo  int32
	Notify int32
	TID    int32
	_      [44]byte
}

// sigev_notify values.
const (
	SigevSignal   = 0
	SigevNone     = 1
	SigevThread   = 2
	SigevThreadID = 4
)
