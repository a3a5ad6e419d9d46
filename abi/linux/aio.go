package linux

// Native asynchronous I/O (linux/aio_abi.h), which x/sys/unix does not
// declare.

// IOCB is struct iocb as riscv64 (little-endian) lays it out.
type IOCB struct {
	Data      uint64
	Key       uint32
	RWFlags   uint32
	Opcode    uint16
	ReqPrio   int16
	FD        uint32
	Buf       uint64
	NBytes    uint64
	Offset    int64
	Reserved2 uint64
	Flags     uint32
	ResFD     uint32
}

// IOEvent is struct io_event.
type IOEvent struct {
	Data, Obj uint64
	Res, Res2 int64
}

// AIORing is struct aio_ring's header, at the start of a context's ring
// mapping (the context's id is its address).
type AIORing struct {
	ID, Nr, Head, Tail                           uint32
	Magic, CompatFeatures, IncompatFeatures, Len uint32
}

// IOCB opcodes, flags and the key io_submit writes into each iocb.
const (
	IOCBCmdPread   = 0
	IOCBCmdPwrite  = 1
	IOCBCmdFsync   = 2
	IOCBCmdFdsync  = 3
	IOCBCmdPoll    = 5
	IOCBCmdNoop    = 6
	IOCBCmdPreadv  = 7
	IOCBCmdPwritev = 8

	IOCBFlagResFD  = 1 << 0
	IOCBFlagIOPrio = 1 << 1

	KIOCBKey = 0
)
