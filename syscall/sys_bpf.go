package syscall

import (
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/kernel/bpf"
	"github.com/jiege-go/jiege/mm"
)

func init() {
	register(sysno.Bpf, sysBPF)
}

// bpfAttrEnd is where each command's attributes end in union bpf_attr;
// the bytes after must be zero (EINVAL), as Linux's CHECK_ATTR.
var bpfAttrEnd = map[int]uintptr{
	unix.BPF_MAP_CREATE:       unsafe.Sizeof(linux.BPFMapCreateAttr{}),
	unix.BPF_MAP_LOOKUP_ELEM:  unsafe.Sizeof(linux.BPFMapElemAttr{}),
	unix.BPF_MAP_UPDATE_ELEM:  unsafe.Sizeof(linux.BPFMapElemAttr{}),
	unix.BPF_MAP_DELETE_ELEM:  unsafe.Offsetof(linux.BPFMapElemAttr{}.Value),
	unix.BPF_MAP_GET_NEXT_KEY: unsafe.Offsetof(linux.BPFMapElemAttr{}.Flags),
	unix.BPF_PROG_LOAD:        unsafe.Offsetof(linux.BPFProgLoadAttr{}.ProgTokenFd) + 4,
}

// sysBPF implements bpf(2) for array and hash maps and socket filters:
// the attributes are read as Linux's __sys_bpf reads them (E2BIG past a
// page or for a non-zero tail past union bpf_attr, EFAULT), and an
// unknown command, or one not offered, is EINVAL.
func sysBPF(t *kernel.Task, a Args) (uint64, error) {
	cmd, addr, size := int(int32(a[0])), a[1], uint64(uint32(a[2]))
	if size > mm.PageSize {
		return 0, unix.E2BIG
	}
	if size > linux.BPFAttrSize {
		tail := make([]byte, size-linux.BPFAttrSize)
		if err := copyIn(t, addr+linux.BPFAttrSize, tail); err != nil {
			return 0, err
		}
		if slices.ContainsFunc(tail, func(b byte) bool { return b != 0 }) {
			return 0, unix.E2BIG
		}
	}
	var attr [linux.BPFAttrSize]byte
	if err := copyIn(t, addr, attr[:min(size, linux.BPFAttrSize)]); err != nil {
		return 0, err
	}
	end, ok := bpfAttrEnd[cmd]
	if !ok {
		return 0, unix.EINVAL
	}
	if slices.ContainsFunc(attr[end:], func(b byte) bool { return b != 0 }) {
		return 0, unix.EINVAL
	}
	switch cmd {
	case unix.BPF_MAP_CREATE:
		var ma linux.BPFMapCreateAttr
		linux.Decode(attr[:], &ma)
		return bpfMapCreate(t, &ma)
	case unix.BPF_PROG_LOAD:
		var pa linux.BPFProgLoadAttr
		linux.Decode(attr[:], &pa)
		return bpfProgLoad(t, &pa, addr, size)
	}
	var ea linux.BPFMapElemAttr
	linux.Decode(attr[:], &ea)
	return 0, bpfMapElem(t, cmd, &ea)
}

// bpfMapCreate is BPF_MAP_CREATE: the new map's descriptor, open
// close-on-exec, read-only or write-only for BPF_F_RDONLY or
// BPF_F_WRONLY. The attributes are checked before the caller's
// privilege (EPERM without CAP_BPF while unprivileged BPF is disabled),
// as Linux's map_create; BTF, inner maps, offload and tokens are not
// offered (EINVAL).
func bpfMapCreate(t *kernel.Task, ma *linux.BPFMapCreateAttr) (uint64, error) {
	spec := bpf.MapSpec{Type: ma.MapType, KeySize: ma.KeySize, ValueSize: ma.ValueSize, MaxEntries: ma.MaxEntries,
		Flags: ma.MapFlags, NumaNode: ma.NumaNode}
	if ma.InnerMapFd != 0 || ma.MapIfindex != 0 || ma.BTFFd != 0 || ma.BTFKeyTypeID != 0 || ma.BTFValueTypeID != 0 ||
		ma.BTFVmlinuxValueTypeID != 0 || ma.MapExtra != 0 || ma.ValueTypeBTFObjFd != 0 || ma.MapTokenFd != 0 {
		return 0, unix.EINVAL
	}
	err := spec.Check()
	offered := spec.Type == unix.BPF_MAP_TYPE_ARRAY || spec.Type == unix.BPF_MAP_TYPE_HASH
	if !offered && spec.Type > 0 && spec.Type <= bpfLinuxMapTypes && !t.BPFAllowed() {
		return 0, unix.EPERM // a type Linux has would pass its checks and meet the same refusal
	}
	if err != nil {
		return 0, err
	}
	if !t.BPFAllowed() {
		return 0, unix.EPERM
	}
	m, err := bpf.NewMap(spec)
	if err != nil {
		return 0, err
	}
	if !bpfObjName(ma.MapName) {
		m.DecRef()
		return 0, unix.EINVAL
	}
	flags := uint32(unix.O_RDWR)
	switch {
	case ma.MapFlags&unix.BPF_F_RDONLY != 0:
		flags = unix.O_RDONLY
	case ma.MapFlags&unix.BPF_F_WRONLY != 0:
		flags = unix.O_WRONLY
	}
	fd, err := t.Proc.Files.Open(m, flags, true)
	return uint64(fd), err
}

// bpfLinuxMapTypes is the last map type of Linux 6.12
// (BPF_MAP_TYPE_ARENA); of them only arrays and hash maps are offered.
const bpfLinuxMapTypes = 33

// bpfObjName checks a map's or program's name as Linux's
// bpf_obj_name_cpy: letters, digits, '_' and '.', NUL-terminated.
func bpfObjName(name [unix.BPF_OBJ_NAME_LEN]byte) bool {
	for _, c := range name {
		switch {
		case c == 0:
			return true
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '.':
		default:
			return false
		}
	}
	return false
}

// bpfMapOf returns the map open on fd and its description, with the
// reference the caller drops: EBADF for no descriptor, EINVAL for
// another file.
func bpfMapOf(t *kernel.Task, fd uint32) (*bpf.Map, *fs.Description, error) {
	return fileOf[*bpf.Map](t, uint64(fd), unix.EINVAL)
}

// bpfMapElem runs the element commands on the map ea names. Reading
// asks a descriptor open for reading, changing one open for writing
// (EPERM), as Linux's map_get_sys_perms; BPF_F_LOCK asks for a spin
// lock no map of ours has (EINVAL).
func bpfMapElem(t *kernel.Task, cmd int, ea *linux.BPFMapElemAttr) error {
	if cmd == unix.BPF_MAP_LOOKUP_ELEM && ea.Flags&^unix.BPF_F_LOCK != 0 {
		return unix.EINVAL
	}
	m, d, err := bpfMapOf(t, ea.MapFd)
	if err != nil {
		return err
	}
	defer d.DecRef()
	mode := d.Flags() & unix.O_ACCMODE
	reads := cmd == unix.BPF_MAP_LOOKUP_ELEM || cmd == unix.BPF_MAP_GET_NEXT_KEY
	if (reads && mode == unix.O_WRONLY) || (!reads && mode == unix.O_RDONLY) {
		return unix.EPERM
	}
	if (cmd == unix.BPF_MAP_LOOKUP_ELEM || cmd == unix.BPF_MAP_UPDATE_ELEM) && ea.Flags&unix.BPF_F_LOCK != 0 {
		return unix.EINVAL
	}
	var key []byte
	if cmd != unix.BPF_MAP_GET_NEXT_KEY || ea.Key != 0 {
		key = make([]byte, m.KeySize)
		if err := copyIn(t, ea.Key, key); err != nil {
			return err
		}
	}
	switch cmd {
	case unix.BPF_MAP_LOOKUP_ELEM:
		value := make([]byte, m.ValueSize)
		if err := m.Lookup(key, value); err != nil {
			return err
		}
		return copyOut(t, ea.Value, value)
	case unix.BPF_MAP_UPDATE_ELEM:
		value := make([]byte, m.ValueSize)
		if err := copyIn(t, ea.Value, value); err != nil {
			return err
		}
		return m.Update(key, value, ea.Flags)
	case unix.BPF_MAP_DELETE_ELEM:
		return m.Delete(key)
	}
	next, err := m.NextKey(key)
	if err != nil {
		return err
	}
	return copyOut(t, ea.Value, next)
}

// Program flags Linux 6.12 knows; of them only the alignment ones mean
// something here.
const bpfProgFlags = unix.BPF_F_STRICT_ALIGNMENT | unix.BPF_F_ANY_ALIGNMENT | unix.BPF_F_TEST_RND_HI32 |
	unix.BPF_F_TEST_STATE_FREQ | unix.BPF_F_SLEEPABLE | unix.BPF_F_XDP_HAS_FRAGS | unix.BPF_F_XDP_DEV_BOUND_ONLY |
	unix.BPF_F_TEST_REG_INVARIANTS

// bpfLogMask is BPF_LOG_MASK: the log levels and BPF_LOG_FIXED.
const (
	bpfLogMask  = 0xf
	bpfLogFixed = 8
)

// bpfProgLoad is BPF_PROG_LOAD of a socket filter, checked in Linux's
// order (flags, privilege, instruction count, the program's memory,
// license, type, name, log attributes) and then verified: the new
// program's descriptor, close-on-exec. The verifier's log goes to
// log_buf as Linux's rotating log (BPF_LOG_FIXED: the start kept), with
// ENOSPC when a loaded program's log did not fit; log_true_size says
// how long it was.
func bpfProgLoad(t *kernel.Task, pa *linux.BPFProgLoadAttr, addr, size uint64) (uint64, error) {
	if pa.ProgFlags&^bpfProgFlags != 0 {
		return 0, unix.EINVAL
	}
	capable := t.BPFCapable()
	switch {
	case pa.ProgFlags&unix.BPF_F_ANY_ALIGNMENT != 0 && !capable:
		return 0, unix.EPERM // riscv64 has no efficient unaligned access
	case !t.BPFAllowed():
		return 0, unix.EPERM
	case pa.InsnCnt == 0 || pa.InsnCnt > unix.BPF_MAXINSNS:
		return 0, unix.E2BIG
	case pa.ProgType != unix.BPF_PROG_TYPE_SOCKET_FILTER && pa.ProgType != unix.BPF_PROG_TYPE_CGROUP_SKB && !capable:
		return 0, unix.EPERM
	}
	insns := make([]linux.BPFInsn, pa.InsnCnt)
	if err := copyIn(t, pa.Insns, linux.SliceAsBytes(insns)); err != nil {
		return 0, err
	}
	if err := copyInLicense(t, pa.License); err != nil {
		return 0, err
	}
	if pa.ProgType != bpf.ProgTypeSocketFilter || !bpfObjName(pa.ProgName) {
		return 0, unix.EINVAL
	}
	if pa.ProgIfindex != 0 || pa.ProgBTFFd != 0 || pa.FuncInfo != 0 || pa.FuncInfoCnt != 0 || pa.LineInfo != 0 ||
		pa.LineInfoCnt != 0 || pa.AttachBTFID != 0 || pa.AttachProgFd != 0 || pa.CoreReloCnt != 0 ||
		pa.FdArray != 0 || pa.CoreRelos != 0 {
		return 0, unix.EINVAL // BTF, offload, relocations: not offered
	}
	if (pa.LogBuf != 0) != (pa.LogSize != 0) || (pa.LogBuf != 0 && pa.LogLevel == 0) ||
		pa.LogLevel&^bpfLogMask != 0 || pa.LogSize > ^uint32(0)>>2 {
		return 0, unix.EINVAL
	}
	spec := bpf.ProgSpec{Insns: insns, AnyAlignment: pa.ProgFlags&unix.BPF_F_ANY_ALIGNMENT != 0,
		UninitStack: t.PerfmonCapable()}
	p, log, err := bpf.Load(spec,
		func(fd int32) (*bpf.Map, error) {
			m, d, err := bpfMapOf(t, uint32(fd))
			if err != nil {
				return nil, err
			}
			defer d.DecRef()
			m.IncRef()
			return m, nil
		})
	if logErr := writeVerifierLog(t, pa, log, addr, size); logErr != nil || err != nil {
		if p != nil {
			p.DecRef()
		}
		if err != nil {
			return 0, err
		}
		return 0, logErr
	}
	fd, err := t.Proc.Files.Open(p, unix.O_RDWR, true)
	return uint64(fd), err
}

// copyInLicense reads the license string (up to 127 bytes, as Linux's
// strncpy_from_user); no license is GPL-only here, so it is only read.
func copyInLicense(t *kernel.Task, addr uint64) error {
	t.Proc.Lock()
	defer t.Proc.Unlock()
	if _, err := t.Proc.AS.CopyInString(uintptr(addr), 128); err != nil && err != mm.ErrInvalid {
		return unix.EFAULT
	}
	return nil
}

// writeVerifierLog copies the log to log_buf, NUL-terminated, and its
// full size to log_true_size when the caller's attributes reach it:
// ENOSPC when it was cut, EFAULT when it cannot be written.
func writeVerifierLog(t *kernel.Task, pa *linux.BPFProgLoadAttr, log string, addr, size uint64) error {
	if pa.LogLevel == 0 {
		log = ""
	}
	trueSize := uint32(0)
	if log != "" {
		trueSize = uint32(len(log)) + 1
	}
	var err error
	if pa.LogBuf != 0 && log != "" {
		kept := log
		if trueSize > pa.LogSize {
			err = unix.ENOSPC
			if pa.LogLevel&bpfLogFixed != 0 {
				kept = log[:pa.LogSize-1]
			} else {
				kept = log[len(log)-int(pa.LogSize-1):]
			}
		}
		if e := copyOut(t, pa.LogBuf, append([]byte(kept), 0)); e != nil {
			return e
		}
	}
	if at := uint64(unsafe.Offsetof(pa.LogTrueSize)); size >= at+4 {
		if e := copyOutStruct(t, addr+at, trueSize); e != nil {
			return e
		}
	}
	return err
}
