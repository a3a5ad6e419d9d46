package syscall

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/fs/procfs"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/mm"
)

// PROCMAP_QUERY (linux/fs.h, Linux 6.11): the ioctl of /proc/PID/maps
// that finds one mapping by address, and its flags.
const (
	procmapQuery = 0xc0686611 // _IOWR('f', 17, struct procmap_query)

	procmapReadable       = 0x01
	procmapWritable       = 0x02
	procmapExecutable     = 0x04
	procmapShared         = 0x08
	procmapCoveringOrNext = 0x10
	procmapFileBacked     = 0x20
	procmapValidFlags     = 0x3f

	// procmapQuerySize is sizeof(struct procmap_query); procmapMinSize
	// ends with query_addr, the least a caller may pass.
	procmapQuerySize = 104
	procmapMinSize   = 24
)

// procmapQueryOf returns the process whose /proc/PID/maps d has open.
func procmapQueryOf(d *fs.Description) (procfs.MapsOf, bool) {
	n := d.Node()
	if n == nil {
		return procfs.MapsOf{}, false
	}
	m, ok := n.Bound.(procfs.MapsOf)
	return m, ok
}

// procmapIoctl answers PROCMAP_QUERY as Linux's do_procmap_query: the
// mapping covering query_addr (or, with COVERING_OR_NEXT_VMA, the first
// after it) that has the flags asked for, with its range, flags, file
// offset, device and inode, and its name copied to vma_name_addr (ENOENT:
// none; ENAMETOOLONG: the name does not fit). No build id is read from
// files: build_id_size comes back 0.
func procmapIoctl(t *kernel.Task, m procfs.MapsOf, cmd, arg uint64) (uint64, error) {
	if cmd != procmapQuery {
		return 0, unix.ENOTTY
	}
	var size [8]byte
	if err := copyIn(t, arg, size[:]); err != nil {
		return 0, err
	}
	usize := binary.LittleEndian.Uint64(size[:])
	switch {
	case usize < procmapMinSize:
		return 0, unix.EINVAL
	case usize > mm.PageSize: // a larger struct than any Linux knows
		return 0, unix.E2BIG
	}
	q := make([]byte, max(usize, procmapQuerySize))
	if err := copyIn(t, arg, q[:usize]); err != nil {
		return 0, err
	}
	if usize > procmapQuerySize {
		for _, b := range q[procmapQuerySize:] {
			if b != 0 {
				return 0, unix.E2BIG
			}
		}
	}
	le := binary.LittleEndian
	flags, addr := le.Uint64(q[8:]), le.Uint64(q[16:])
	nameSize, nameAddr := le.Uint32(q[80:]), le.Uint64(q[88:])
	buildIDSize, buildIDAddr := le.Uint32(q[84:]), le.Uint64(q[96:])
	if flags&^procmapValidFlags != 0 || (nameSize != 0) != (nameAddr != 0) || (buildIDSize != 0) != (buildIDAddr != 0) {
		return 0, unix.EINVAL
	}
	v, ok := procmapFind(m.Mappings(), addr, flags)
	if !ok {
		return 0, unix.ENOENT
	}
	vflags := uint64(0)
	for _, f := range []struct {
		has  bool
		flag uint64
	}{{v.Perm&mm.PTERead != 0, procmapReadable}, {v.Perm&mm.PTEWrite != 0, procmapWritable},
		{v.Perm&mm.PTEExec != 0, procmapExecutable}, {v.IsShared(), procmapShared}} {
		if f.has {
			vflags |= f.flag
		}
	}
	le.PutUint64(q[24:], uint64(v.Start))
	le.PutUint64(q[32:], uint64(v.End))
	le.PutUint64(q[40:], vflags)
	le.PutUint64(q[48:], mm.PageSize)
	var off, ino uint64
	var major, minor uint32
	if v.File != nil {
		off, ino = uint64(v.Offset), v.Ino
		major, minor = uint32(v.Dev>>8&0xfff), uint32(v.Dev&0xff|v.Dev>>12&^0xff)
	}
	le.PutUint64(q[56:], off)
	le.PutUint64(q[64:], ino)
	le.PutUint32(q[72:], major)
	le.PutUint32(q[76:], minor)
	le.PutUint32(q[84:], 0) // build_id_size
	var name []byte
	if nameSize != 0 {
		if v.Name != "" {
			name = append([]byte(v.Name), 0)
			if len(name) > int(min(nameSize, unix.PathMax)) {
				return 0, unix.ENAMETOOLONG
			}
		}
		le.PutUint32(q[80:], uint32(len(name)))
	}
	if len(name) > 0 {
		if err := copyOut(t, nameAddr, name); err != nil {
			return 0, err
		}
	}
	return 0, copyOut(t, arg, q[:min(usize, procmapQuerySize)])
}

// procmapFind is query_matching_vma: the mapping covering addr, or with
// COVERING_OR_NEXT_VMA the first from addr on, that has every flag asked
// for.
func procmapFind(ms []procfs.Mapping, addr, flags uint64) (procfs.Mapping, bool) {
	for _, v := range ms {
		if uint64(v.End) <= addr {
			continue
		}
		covers := uint64(v.Start) <= addr
		if !covers && flags&procmapCoveringOrNext == 0 {
			return procfs.Mapping{}, false
		}
		if flags&procmapFileBacked != 0 && v.File == nil ||
			flags&procmapReadable != 0 && v.Perm&mm.PTERead == 0 ||
			flags&procmapWritable != 0 && v.Perm&mm.PTEWrite == 0 ||
			flags&procmapExecutable != 0 && v.Perm&mm.PTEExec == 0 ||
			flags&procmapShared != 0 && !v.IsShared() {
			if flags&procmapCoveringOrNext == 0 {
				return procfs.Mapping{}, false
			}
			continue
		}
		return v, true
	}
	return procfs.Mapping{}, false
}
