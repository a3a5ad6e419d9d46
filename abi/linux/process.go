package linux

// Rusage is struct rusage; the counters the kernel does not keep are
// blank and read as zero.
type Rusage struct {
	Utime, Stime Timeval
	Maxrss       int64
	_            [3]int64 // ixrss, idrss, isrss
	Minflt       int64
	_            [9]int64 // majflt ... nivcsw
}

// Rlimit is struct rlimit64.
type Rlimit struct{ Cur, Max uint64 }

// Sysinfo is struct sysinfo (64-bit: no padding at the end).
type Sysinfo struct {
	Uptime    int64
	Loads     [3]uint64
	TotalRAM  uint64
	FreeRAM   uint64
	SharedRAM uint64
	BufferRAM uint64
	TotalSwap uint64
	FreeSwap  uint64
	Procs     uint16
	_         [6]byte
	TotalHigh uint64
	FreeHigh  uint64
	MemUnit   uint32
	_         uint32
}

// CloneArgs is struct clone_args, CLONE_ARGS_SIZE_VER2: a caller may pass
// a shorter, older version, the missing fields zero.
type CloneArgs struct {
	Flags      uint64
	Pidfd      uint64
	ChildTID   uint64
	ParentTID  uint64
	ExitSignal uint64
	Stack      uint64
	StackSize  uint64
	TLS        uint64
	SetTID     uint64
	SetTIDSize uint64
	Cgroup     uint64
}

// RobustListHead is struct robust_list_head.
type RobustListHead struct {
	List          uint64 // the first entry; the head's own address ends the list
	FutexOffset   int64  // from an entry to its lock word
	ListOpPending uint64 // the entry being taken or released
}
