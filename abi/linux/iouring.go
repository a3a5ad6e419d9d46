package linux

// io_uring (linux/io_uring.h), which x/sys/unix does not declare.

// IOUringSQE is struct io_uring_sqe: one submission queue entry. OpFlags
// is the union of rw_flags, fsync_flags, msg_flags and the others; BufIndex
// names a registered buffer (READ_FIXED, WRITE_FIXED).
type IOUringSQE struct {
	Opcode      uint8
	Flags       uint8
	IOPrio      uint16
	FD          int32
	Off         uint64
	Addr        uint64
	Len         uint32
	OpFlags     uint32
	UserData    uint64
	BufIndex    uint16
	Personality uint16
	SpliceFDIn  int32
	Addr3       uint64
	_           uint64
}

// IOUringCQE is struct io_uring_cqe: one completion.
type IOUringCQE struct {
	UserData uint64
	Res      int32
	Flags    uint32
}

// IOSQRingOffsets is struct io_sqring_offsets: where the submission
// ring's fields lie in the mapping at IORING_OFF_SQ_RING.
type IOSQRingOffsets struct {
	Head, Tail, RingMask, RingEntries, Flags, Dropped, Array, Resv1 uint32
	UserAddr                                                        uint64
}

// IOCQRingOffsets is struct io_cqring_offsets: where the completion
// ring's fields lie in the mapping at IORING_OFF_CQ_RING.
type IOCQRingOffsets struct {
	Head, Tail, RingMask, RingEntries, Overflow, CQEs, Flags, Resv1 uint32
	UserAddr                                                        uint64
}

// IOUringParams is struct io_uring_params, io_uring_setup's argument
// and answer.
type IOUringParams struct {
	SQEntries    uint32
	CQEntries    uint32
	Flags        uint32
	SQThreadCPU  uint32
	SQThreadIdle uint32
	Features     uint32
	WQFD         uint32
	Resv         [3]uint32
	SQOff        IOSQRingOffsets
	CQOff        IOCQRingOffsets
}

// IOUringGeteventsArg is struct io_uring_getevents_arg, io_uring_enter's
// argument with IORING_ENTER_EXT_ARG.
type IOUringGeteventsArg struct {
	Sigmask     uint64
	SigmaskSize uint32
	MinWaitUsec uint32
	TS          uint64
}

// IOUringProbe is struct io_uring_probe's header; Ops entries of
// IOUringProbeOp follow it.
type IOUringProbe struct {
	LastOp uint8
	OpsLen uint8
	Resv   uint16
	Resv2  [3]uint32
}

// IOUringProbeOp is struct io_uring_probe_op.
type IOUringProbeOp struct {
	Op    uint8
	Resv  uint8
	Flags uint16
	Resv2 uint32
}

// IORingProbeOpSupported marks an opcode the kernel performs.
const IORingProbeOpSupported = 1 << 0

// Where io_uring_setup's file maps each part (mmap's offset).
const (
	IORingOffSQRing = 0
	IORingOffCQRing = 0x8000000
	IORingOffSQEs   = 0x10000000
)

// io_uring_setup's flags.
const (
	IORingSetupIOPoll           = 1 << 0
	IORingSetupSQPoll           = 1 << 1
	IORingSetupSQAff            = 1 << 2
	IORingSetupCQSize           = 1 << 3
	IORingSetupClamp            = 1 << 4
	IORingSetupAttachWQ         = 1 << 5
	IORingSetupRDisabled        = 1 << 6
	IORingSetupSubmitAll        = 1 << 7
	IORingSetupCoopTaskrun      = 1 << 8
	IORingSetupTaskrunFlag      = 1 << 9
	IORingSetupSQE128           = 1 << 10
	IORingSetupCQE32            = 1 << 11
	IORingSetupSingleIssuer     = 1 << 12
	IORingSetupDeferTaskrun     = 1 << 13
	IORingSetupNoMmap           = 1 << 14
	IORingSetupRegisteredFDOnly = 1 << 15
	IORingSetupNoSQArray        = 1 << 16
)

// io_uring_params.features.
const (
	IORingFeatSingleMmap     = 1 << 0
	IORingFeatNoDrop         = 1 << 1
	IORingFeatSubmitStable   = 1 << 2
	IORingFeatRWCurPos       = 1 << 3
	IORingFeatCurPersonality = 1 << 4
	IORingFeatExtArg         = 1 << 8
	IORingFeatCQESkip        = 1 << 11
)

// io_uring_enter's flags.
const (
	IORingEnterGetevents      = 1 << 0
	IORingEnterSQWakeup       = 1 << 1
	IORingEnterSQWait         = 1 << 2
	IORingEnterExtArg         = 1 << 3
	IORingEnterRegisteredRing = 1 << 4
)

// The submission ring's flags word and the completion ring's overflow.
const (
	IORingSQNeedWakeup = 1 << 0
	IORingSQCQOverflow = 1 << 1
)

// io_uring_sqe.flags.
const (
	IOSQEFixedFile      = 1 << 0
	IOSQEIODrain        = 1 << 1
	IOSQEIOLink         = 1 << 2
	IOSQEIOHardlink     = 1 << 3
	IOSQEAsync          = 1 << 4
	IOSQEBufferSelect   = 1 << 5
	IOSQECQESkipSuccess = 1 << 6
)

// io_uring opcodes.
const (
	IORingOpNop           = 0
	IORingOpReadv         = 1
	IORingOpWritev        = 2
	IORingOpFsync         = 3
	IORingOpReadFixed     = 4
	IORingOpWriteFixed    = 5
	IORingOpSyncFileRange = 8
	IORingOpSendmsg       = 9
	IORingOpRecvmsg       = 10
	IORingOpClose         = 19
	IORingOpRead          = 22
	IORingOpWrite         = 23
	IORingOpSend          = 26
	IORingOpRecv          = 27
	IORingOpLast          = 58 // Linux 6.12's IORING_OP_LAST
)

// IORING_FSYNC_DATASYNC, fsync's one flag.
const IORingFsyncDatasync = 1 << 0

// io_uring_register's opcodes.
const (
	IORingRegisterBuffers           = 0
	IORingUnregisterBuffers         = 1
	IORingRegisterFiles             = 2
	IORingUnregisterFiles           = 3
	IORingRegisterEventFD           = 4
	IORingUnregisterEventFD         = 5
	IORingRegisterFilesUpdate       = 6
	IORingRegisterEventFDAsync      = 7
	IORingRegisterProbe             = 8
	IORingRegisterUseRegisteredRing = 1 << 31
)
