package linux

// The bpf(2) system call's structures (linux/bpf.h of Linux 6.12).

// BPFAttrSize is sizeof(union bpf_attr): what bpf(2) reads at most, the
// rest of a longer argument having to be zero.
const BPFAttrSize = 152

// BPFMapCreateAttr is union bpf_attr as BPF_MAP_CREATE reads it; its
// last field is map_token_fd.
type BPFMapCreateAttr struct {
	MapType, KeySize, ValueSize, MaxEntries, MapFlags uint32
	InnerMapFd, NumaNode                              uint32
	MapName                                           [16]byte
	MapIfindex, BTFFd, BTFKeyTypeID, BTFValueTypeID   uint32
	BTFVmlinuxValueTypeID                             uint32
	MapExtra                                          uint64
	ValueTypeBTFObjFd, MapTokenFd                     int32
}

// BPFMapElemAttr is union bpf_attr as the element commands read it:
// BPF_MAP_LOOKUP_ELEM, UPDATE_ELEM and DELETE_ELEM, and GET_NEXT_KEY,
// whose next_key is Value.
type BPFMapElemAttr struct {
	MapFd uint32
	_     uint32
	Key   uint64
	Value uint64
	Flags uint64
}

// BPFProgLoadAttr is union bpf_attr as BPF_PROG_LOAD reads it; its last
// field is prog_token_fd.
type BPFProgLoadAttr struct {
	ProgType, InsnCnt               uint32
	Insns, License                  uint64
	LogLevel, LogSize               uint32
	LogBuf                          uint64
	KernVersion, ProgFlags          uint32
	ProgName                        [16]byte
	ProgIfindex, ExpectedAttachType uint32
	ProgBTFFd, FuncInfoRecSize      uint32
	FuncInfo                        uint64
	FuncInfoCnt, LineInfoRecSize    uint32
	LineInfo                        uint64
	LineInfoCnt, AttachBTFID        uint32
	AttachProgFd, CoreReloCnt       uint32
	FdArray, CoreRelos              uint64
	CoreReloRecSize, LogTrueSize    uint32
	ProgTokenFd                     int32
	_                               uint32
}

// BPFInsn is struct bpf_insn: the destination register in the low half
// of Regs, the source in the high half.
type BPFInsn struct {
	Code uint8
	Regs uint8
	Off  int16
	Imm  int32
}

// Dst is the instruction's destination register.
func (i BPFInsn) Dst() uint8 { return i.Regs & 0xf }

// Src is the instruction's source register.
func (i BPFInsn) Src() uint8 { return i.Regs >> 4 }

// SkBuff is struct __sk_buff, the context a socket filter reads.
type SkBuff struct {
	Len, PktType, Mark, QueueMapping, Protocol uint32
	VlanPresent, VlanTci, VlanProto, Priority  uint32
	IngressIfindex, Ifindex, TcIndex           uint32
	Cb                                         [5]uint32
	Hash, TcClassid, Data, DataEnd, NapiID     uint32
	Family, RemoteIP4, LocalIP4                uint32
	RemoteIP6, LocalIP6                        [4]uint32
	RemotePort, LocalPort, DataMeta            uint32
	FlowKeys                                   uint64
	Tstamp                                     uint64
	WireLen, GsoSegs                           uint32
	Sk                                         uint64
	GsoSize                                    uint32
	TstampType                                 uint8
	_                                          [3]uint8
	Hwtstamp                                   uint64
}

// The helpers a program calls (enum bpf_func_id).
const (
	BPFFuncMapLookupElem = 1
	BPFFuncMapUpdateElem = 2
	BPFFuncMapDeleteElem = 3
	BPFFuncGetPrandomU32 = 7
)
