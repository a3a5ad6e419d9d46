package linux

// SchedAttr is struct sched_attr (SCHED_ATTR_SIZE_VER1, 56 bytes; VER0,
// without the utilization clamps, is 48).
type SchedAttr struct {
	Size     uint32
	Policy   uint32
	Flags    uint64
	Nice     int32
	Priority uint32
	Runtime  uint64
	Deadline uint64
	Period   uint64
	UtilMin  uint32
	UtilMax  uint32
}

// SchedAttrSizeVer0 is the first published size of struct sched_attr.
const SchedAttrSizeVer0 = 48

// CapUserHeader is struct __user_cap_header_struct.
type CapUserHeader struct {
	Version uint32
	Pid     int32
}

// CapUserData is struct __user_cap_data_struct; versions 2 and 3 pass
// two of them (capabilities 0-31, 32-63).
type CapUserData struct{ Effective, Permitted, Inheritable uint32 }
