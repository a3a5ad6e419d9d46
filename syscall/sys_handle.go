package syscall

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.NameToHandleAt, sysNameToHandleAt)
	register(sysno.OpenByHandleAt, sysOpenByHandleAt)
}

// File handles, as tmpfs makes them (shmem_encode_fh): type 1 and three
// 32-bit words, the generation (0 here) and the inode number's two
// halves. A struct file_handle is handle_bytes, handle_type, then the
// handle's bytes.
const (
	fileHandleHeader = 8
	fileHandleBytes  = 12
	fileHandleType   = 1
	fileHandleMax    = 128 // MAX_HANDLE_SZ
	fileIDInvalid    = 255 // FILEID_INVALID: the type of a handle too small

	atHandleFID          = 0x200 // AT_HANDLE_FID: a handle only to compare
	atHandleMntIDUnique  = 0x001 // AT_HANDLE_MNT_ID_UNIQUE
	nameToHandleAtFlags  = unix.AT_SYMLINK_FOLLOW | unix.AT_EMPTY_PATH | atHandleFID | atHandleMntIDUnique
	capDacReadSearchMask = 1 << unix.CAP_DAC_READ_SEARCH
)

// sysNameToHandleAt implements name_to_handle_at(2) with Linux's order of
// checks: the flags, the path, the file system (EOPNOTSUPP for /proc and
// /sys), the struct's size (EINVAL past MAX_HANDLE_SZ, EOVERFLOW with the
// size needed when it is too small), then the mount id and the handle
// written back.
func sysNameToHandleAt(t *kernel.Task, a Args) (uint64, error) {
	flags := a[4]
	if flags&^nameToHandleAtFlags != 0 {
		return 0, unix.EINVAL
	}
	name, err := copyInString(t, a[1])
	if err != nil {
		return 0, err
	}
	var n *fs.Node
	var p string
	if name == "" && flags&unix.AT_EMPTY_PATH != 0 && int32(a[0]) == unix.AT_FDCWD {
		name = "."
	}
	if name == "" && flags&unix.AT_EMPTY_PATH != 0 {
		d, err := t.Proc.Files.Get(int(int32(a[0])))
		if err != nil {
			return 0, err
		}
		defer d.DecRef()
		if n = d.Node(); n == nil {
			return 0, unix.EOPNOTSUPP
		}
		if nf, ok := d.NodeFile(); ok {
			p = nf.Path()
		}
	} else {
		if p, err = resolve(t, int32(a[0]), name); err != nil {
			return 0, err
		}
		if n, err = lookupNamed(t, t.Proc.Cred(), p, flags&unix.AT_SYMLINK_FOLLOW != 0, namesDirectory(name)); err != nil {
			return 0, err
		}
	}
	if !n.Exportable() {
		return 0, unix.EOPNOTSUPP
	}
	var head [fileHandleHeader]byte
	if err := copyIn(t, a[2], head[:]); err != nil {
		return 0, err
	}
	size := binary.LittleEndian.Uint32(head[:])
	if size > fileHandleMax {
		return 0, unix.EINVAL
	}
	var result error
	out := make([]byte, fileHandleHeader, fileHandleHeader+fileHandleBytes)
	binary.LittleEndian.PutUint32(out, fileHandleBytes)
	if size < fileHandleBytes {
		binary.LittleEndian.PutUint32(out[4:], fileIDInvalid)
		result = unix.EOVERFLOW
	} else {
		binary.LittleEndian.PutUint32(out[4:], fileHandleType)
		out = binary.LittleEndian.AppendUint32(out, 0) // the generation
		out = binary.LittleEndian.AppendUint32(out, uint32(n.Ino))
		out = binary.LittleEndian.AppendUint32(out, uint32(n.Ino>>32))
	}
	if err := copyOutStruct(t, a[3], int32(t.Proc.Root.MountOf(t.Proc.MountNS(), n, p).ID)); err != nil {
		return 0, err
	}
	if err := copyOut(t, a[2], out); err != nil {
		return 0, err
	}
	return 0, result
}

// sysOpenByHandleAt implements open_by_handle_at(2): the file system of
// mount_fd (EBADF) is searched for the handle's inode (ESTALE when it has
// none), with Linux's checks in its order: CAP_DAC_READ_SEARCH (EPERM),
// the struct (EFAULT; EINVAL for a size of 0 or past MAX_HANDLE_SZ or a
// type that is not one), then the open itself, which does not follow a
// symlink (ELOOP).
func sysOpenByHandleAt(t *kernel.Task, a Args) (uint64, error) {
	var anchor *fs.Node
	anchorPath := t.Proc.Cwd()
	if fd := int32(a[0]); fd == unix.AT_FDCWD {
		var err error
		if anchor, err = t.Proc.Root.Lookup(t.Proc.Cred(), anchorPath, true); err != nil {
			return 0, err
		}
	} else {
		d, err := t.Proc.Files.Get(int(fd))
		if err != nil {
			return 0, err
		}
		defer d.DecRef()
		anchor, anchorPath = d.Node(), ""
		if nf, ok := d.NodeFile(); ok {
			anchorPath = nf.Path()
		}
	}
	if t.Proc.Caps.Effective&capDacReadSearchMask == 0 {
		return 0, unix.EPERM
	}
	var head [fileHandleHeader]byte
	if err := copyIn(t, a[1], head[:]); err != nil {
		return 0, err
	}
	size, typ := binary.LittleEndian.Uint32(head[:]), int32(binary.LittleEndian.Uint32(head[4:]))
	if size == 0 || size > fileHandleMax || typ < 0 {
		return 0, unix.EINVAL
	}
	handle := make([]byte, size)
	if err := copyIn(t, a[1]+fileHandleHeader, handle); err != nil {
		return 0, err
	}
	if anchor == nil || !anchor.Exportable() || typ != fileHandleType || size != fileHandleBytes {
		return 0, unix.ESTALE
	}
	ino := uint64(binary.LittleEndian.Uint32(handle[4:])) | uint64(binary.LittleEndian.Uint32(handle[8:]))<<32
	p, ok := t.Proc.Root.FindIno(t.Proc.Root.MountOf(t.Proc.MountNS(), anchor, anchorPath), ino)
	if !ok {
		return 0, unix.ESTALE
	}
	flags := a[2]
	if flags&unix.O_PATH == 0 {
		flags |= unix.O_NOFOLLOW // the handle names the link itself
	}
	return openPath(t, p, p, flags&^unix.O_CREAT, 0, t.Proc.Cred())
}
