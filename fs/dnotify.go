package fs

import (
	"golang.org/x/sys/unix"
)

// dnotify (fcntl F_NOTIFY): a file open on a directory asks that its
// owner be signalled when the directory's entries, or the directory
// itself, change. Its marks sit in the tree's notify table beside
// inotify's watches and hear the same events, mapped to the DN_ bits as
// Linux's convert_arg maps them; a rename within one directory is
// DN_RENAME there, and one between directories is not.

// dnotify's bits (linux/fcntl.h).
const (
	DnAccess    = 0x1
	DnModify    = 0x2
	DnCreate    = 0x4
	DnDelete    = 0x8
	DnRename    = 0x10
	DnAttrib    = 0x20
	DnMultishot = 0x80000000
)

// renamedWithin is the event a rename within one directory reports to
// it, for dnotify's DN_RENAME: a bit no inotify event uses.
const renamedWithin = 1 << 20

type dnotifyMark struct {
	file *NodeFile
	mask uint32 // DN_*
	fire func()
}

// dnotifyBits are the DN_ events an fsnotify mask carries.
func dnotifyBits(mask uint32) uint32 {
	var dn uint32
	for _, m := range [...]struct{ in, dn uint32 }{
		{unix.IN_ACCESS, DnAccess}, {unix.IN_MODIFY, DnModify},
		{unix.IN_CREATE | unix.IN_MOVED_TO, DnCreate}, {unix.IN_DELETE | unix.IN_MOVED_FROM, DnDelete},
		{unix.IN_ATTRIB, DnAttrib}, {renamedWithin, DnRename},
	} {
		if mask&m.in != 0 {
			dn |= m.dn
		}
	}
	return dn
}

// SetDnotify gives f's directory f's dnotify mark (F_NOTIFY): the events
// in mask (added to those asked before) call fire, each time with
// DN_MULTISHOT, else once; a mask with no event removes the mark.
// ENOTDIR when f is not a directory's.
func (f *NodeFile) SetDnotify(mask uint32, fire func()) error {
	n := f.node
	if !n.IsDir() {
		return unix.ENOTDIR
	}
	nt := &f.tree.notify
	nt.mu.Lock()
	defer nt.mu.Unlock()
	if mask&^DnMultishot == 0 {
		nt.dropDnotifyLocked(n, f)
		return nil
	}
	if nt.dnotify == nil {
		nt.dnotify = map[*Node][]*dnotifyMark{}
	}
	for _, m := range nt.dnotify[n] {
		if m.file == f {
			m.mask |= mask
			m.fire = fire
			return nil
		}
	}
	nt.dnotify[n] = append(nt.dnotify[n], &dnotifyMark{file: f, mask: mask, fire: fire})
	nt.count.Add(1)
	return nil
}

// dropDnotifyLocked removes f's mark on n, if any (nt.mu held).
func (nt *notifyTable) dropDnotifyLocked(n *Node, f *NodeFile) {
	marks := nt.dnotify[n]
	for i, m := range marks {
		if m.file == f {
			nt.setDnotifyLocked(n, append(marks[:i:i], marks[i+1:]...))
			return
		}
	}
}

func (nt *notifyTable) setDnotifyLocked(n *Node, marks []*dnotifyMark) {
	nt.count.Add(int64(len(marks) - len(nt.dnotify[n])))
	if len(marks) == 0 {
		delete(nt.dnotify, n)
	} else {
		nt.dnotify[n] = marks
	}
}

// dropDnotify removes the mark of a file that closes.
func (f *NodeFile) dropDnotify() {
	if f.tree == nil || !f.node.IsDir() || f.tree.notify.count.Load() == 0 {
		return
	}
	nt := &f.tree.notify
	nt.mu.Lock()
	defer nt.mu.Unlock()
	nt.dropDnotifyLocked(f.node, f)
}

// deliverDnotify returns the signals n's marks send for an event, and
// drops the one-shot marks that sent one (nt.mu held).
func (nt *notifyTable) deliverDnotify(n *Node, mask uint32) []func() {
	dn := dnotifyBits(mask)
	marks := nt.dnotify[n]
	if dn == 0 || len(marks) == 0 {
		return nil
	}
	var fns []func()
	kept := marks[:0:0]
	for _, m := range marks {
		if m.mask&dn == 0 {
			kept = append(kept, m)
			continue
		}
		fns = append(fns, m.fire)
		if m.mask&DnMultishot != 0 {
			kept = append(kept, m)
		}
	}
	nt.setDnotifyLocked(n, kept)
	return fns
}
