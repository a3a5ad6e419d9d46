package linux

// PerfEventAttr is struct perf_event_attr of Linux 6.12
// (PERF_ATTR_SIZE_VER8, 136 bytes); older callers pass a prefix of it
// (PERF_ATTR_SIZE_VER0, 64 bytes, at least). Flags holds the bit fields
// from disabled to __reserved_1 (the PerfAttr* bits); AuxAction holds
// aux_start_paused, aux_pause and aux_resume in its low bits, the rest
// reserved.
type PerfEventAttr struct {
	Type             uint32
	Size             uint32
	Config           uint64
	Sample           uint64 // sample_period, or sample_freq with PerfAttrFreq
	SampleType       uint64
	ReadFormat       uint64
	Flags            uint64
	Wakeup           uint32 // wakeup_events or wakeup_watermark
	BpType           uint32
	Config1          uint64 // bp_addr, kprobe_func, uprobe_path
	Config2          uint64 // bp_len, kprobe_addr, probe_offset
	BranchSampleType uint64
	SampleRegsUser   uint64
	SampleStackUser  uint32
	Clockid          int32
	SampleRegsIntr   uint64
	AuxWatermark     uint32
	SampleMaxStack   uint16
	Reserved2        uint16
	AuxSampleSize    uint32
	AuxAction        uint32
	SigData          uint64
	Config3          uint64
}

// PerfEventAttr's sizes: the first published one, and Linux 6.12's.
const (
	PerfAttrSizeVer0 = 64
	PerfAttrSize     = 136
)

// The bits of PerfEventAttr.Flags.
const (
	PerfAttrDisabled      = 1 << 0
	PerfAttrInherit       = 1 << 1
	PerfAttrPinned        = 1 << 2
	PerfAttrExclusive     = 1 << 3
	PerfAttrExcludeUser   = 1 << 4
	PerfAttrExcludeKernel = 1 << 5
	PerfAttrFreq          = 1 << 10
	PerfAttrEnableOnExec  = 1 << 12
	PerfAttrUseClockid    = 1 << 25
	PerfAttrNamespaces    = 1 << 28
	PerfAttrAuxOutput     = 1 << 31
	PerfAttrInheritThread = 1 << 35
	PerfAttrRemoveOnExec  = 1 << 36
	PerfAttrSigtrap       = 1 << 37
	// PerfAttrReserved1 is __reserved_1, the bits above sigtrap.
	PerfAttrReserved1 = ^uint64(1<<38 - 1)
)

// The bits of PerfEventAttr.AuxAction: aux_start_paused, and
// aux_pause with aux_resume; the others are __reserved_3.
const (
	PerfAuxStartPaused = 1 << 0
	PerfAuxPauseResume = 1<<1 | 1<<2
)
