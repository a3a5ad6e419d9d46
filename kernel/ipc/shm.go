package ipc

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/mm"
)

// Linux's shared memory limits (linux/shm.h) and the flags of shmget,
// shmat and the segment's mode.
const (
	shmMaxDefault = 1<<64 - 1 - 1<<24 // SHMMAX
	shmAllDefault = 1<<64 - 1 - 1<<24 // SHMALL, in pages
	shmMni        = 4096              // SHMMNI
	shmMin        = 1                 // SHMMIN

	ShmHugetlb = 0o4000  // SHM_HUGETLB
	ShmRdonly  = 0o10000 // SHM_RDONLY
	ShmRnd     = 0o20000 // SHM_RND
	ShmRemap   = 0o40000 // SHM_REMAP
	ShmExec    = 0o100000
	shmDest    = 0o1000 // SHM_DEST: removed, gone at the last detach
	shmLocked  = 0o2000 // SHM_LOCKED

	ShmLock    = 11
	ShmUnlock  = 12
	ShmStat    = 13
	ShmInfo    = 14
	ShmStatAny = 15
)

// Segment is a shared memory segment: its memory, held by the segment
// while it is in the table and by every mapping of it (whose count is
// shm_nattch, as Linux counts a segment's VMAs).
type Segment struct {
	Perm
	mem          *mm.SharedMemory
	size         uint64
	atime, dtime int64
	cpid, lpid   int
	attaching    int // shmat calls between their check and their mapping
	pages        uint64
}

func (s *Segment) perm() *Perm { return &s.Perm }

// nattch is the segment's attach count: its mappings, and the shmat calls
// about to map it.
func (s *Segment) nattch() int { return s.mem.References() - 1 + s.attaching }

// ShmGet implements shmget(2). SHM_HUGETLB is EINVAL: huge pages are
// mmap(MAP_HUGETLB) memory and MFD_HUGETLB memfds, not segments (no
// CONFIG_HUGETLBFS, as /proc/config.gz says).
func (ns *Namespace) ShmGet(key int32, size uint64, flags int, c Caller) (int, error) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	return ns.shm.get(key, flags, c, func() (object, error) {
		if size < shmMin || size > ns.shmMax {
			return nil, unix.EINVAL
		}
		pages := (size + mm.PageSize - 1) / mm.PageSize
		if pages == 0 || ns.shmPages+pages < ns.shmPages || ns.shmPages+pages > ns.shmAll {
			return nil, unix.ENOSPC
		}
		if flags&ShmHugetlb != 0 {
			return nil, unix.EINVAL
		}
		seg := &Segment{size: size, pages: pages, cpid: c.PID}
		seg.mem = mm.NewSegmentMemory(ns.mem, func() { ns.detached(seg) })
		ns.shmPages += pages
		return seg, nil
	}, func(o object) error {
		if size > o.(*Segment).size {
			return unix.EINVAL
		}
		return nil
	}, func(o object) { ns.destroySegment(o.(*Segment)) })
}

// destroySegment frees a segment no longer in the table or never added.
func (ns *Namespace) destroySegment(s *Segment) {
	ns.shmPages -= s.pages
	s.mem.Release()
}

// detached is called when a mapping of s is gone (shmdt, munmap, exec,
// exit): a segment removed while attached goes with its last mapping.
func (ns *Namespace) detached(s *Segment) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if s.removed {
		return
	}
	s.dtime = ns.seconds()
	ns.reapLocked(s)
}

// reapLocked removes s when IPC_RMID marked it and nothing maps it.
func (ns *Namespace) reapLocked(s *Segment) {
	if s.Mode&shmDest != 0 && s.nattch() == 0 {
		ns.shm.remove(s)
		ns.destroySegment(s)
	}
}

// Attachment is a segment about to be mapped by shmat.
type Attachment struct {
	seg  *Segment
	Mem  *mm.SharedMemory
	Size uintptr // the segment's size, which the mapping rounds up to pages
}

// ShmAttach is shmat(2)'s check of the segment and the caller's access
// (read, or read and write without SHM_RDONLY; execute with SHM_EXEC):
// the segment counts the attachment until ShmAttached. The caller maps
// Mem without holding the namespace's lock.
func (ns *Namespace) ShmAttach(id, flags int, c Caller) (*Attachment, error) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	o, err := ns.shm.byID(id)
	if err != nil {
		return nil, err
	}
	s := o.(*Segment)
	want := uint32(0o444)
	if flags&ShmRdonly == 0 {
		want |= 0o222
	}
	if flags&ShmExec != 0 {
		want |= 0o111
	}
	if err := s.access(c, want); err != nil {
		return nil, err
	}
	s.attaching++
	return &Attachment{seg: s, Mem: s.mem, Size: uintptr(s.size)}, nil
}

// ShmReattach is ShmAttach for a segment's memory that a mapping maps
// again (remap_file_pages): EINVAL once the segment is gone, as Linux's
// shm_mmap finds its id no more.
func (ns *Namespace) ShmReattach(mem *mm.SharedMemory) (*Attachment, error) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	for _, o := range ns.shm.objects {
		if s := o.(*Segment); s.mem == mem {
			s.attaching++
			return &Attachment{seg: s, Mem: s.mem, Size: uintptr(s.size)}, nil
		}
	}
	return nil, unix.EINVAL
}

// ShmAttached ends a shmat: mapped says whether the mapping was made.
func (ns *Namespace) ShmAttached(a *Attachment, mapped bool, c Caller) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	s := a.seg
	s.attaching--
	if mapped {
		s.atime, s.lpid = ns.seconds(), c.PID
	}
	ns.reapLocked(s)
}

// IsSegment reports whether mem is a segment's memory, and its size:
// shmdt detaches only mappings that start a segment.
func (ns *Namespace) IsSegment(mem *mm.SharedMemory) (uintptr, bool) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	for _, o := range ns.shm.objects {
		if s := o.(*Segment); s.mem == mem {
			return uintptr(s.size), true
		}
	}
	return 0, false
}

// ShmDetached records shmdt's caller as the segment's last user.
func (ns *Namespace) ShmDetached(mem *mm.SharedMemory, c Caller) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	for _, o := range ns.shm.objects {
		if s := o.(*Segment); s.mem == mem {
			s.lpid = c.PID
		}
	}
}

// ShmStat implements shmctl's IPC_STAT (by id; returns 0) and SHM_STAT
// and SHM_STAT_ANY (by index; return the id).
func (ns *Namespace) ShmStat(idOrIndex int, byIndex, any bool, c Caller) (linux.ShmidDs, int, error) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	var s *Segment
	ret := 0
	if byIndex {
		o, id, err := ns.shm.statByIndex(idOrIndex, c, any)
		if err != nil {
			return linux.ShmidDs{}, 0, err
		}
		s, ret = o.(*Segment), id
	} else {
		o, err := ns.shm.byID(idOrIndex)
		if err != nil {
			return linux.ShmidDs{}, 0, err
		}
		s = o.(*Segment)
		if err := s.access(c, 0o444); err != nil {
			return linux.ShmidDs{}, 0, err
		}
	}
	return linux.ShmidDs{Perm: s.Perm.linux(), Segsz: s.size, Atime: s.atime, Dtime: s.dtime, Ctime: s.Ctime,
		Cpid: int32(s.cpid), Lpid: int32(s.lpid), Nattch: uint64(s.nattch())}, ret, nil
}

// segment finds the segment an id names for a command only its owner (or
// root) may give.
func (ns *Namespace) ownedSegment(id int, c Caller) (*Segment, error) {
	o, err := ns.shm.byID(id)
	if err != nil {
		return nil, err
	}
	if !o.perm().owns(c) {
		return nil, unix.EPERM
	}
	return o.(*Segment), nil
}

// ShmSet implements shmctl's IPC_SET: the owner and mode.
func (ns *Namespace) ShmSet(id int, ds linux.ShmidDs, c Caller) error {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	s, err := ns.ownedSegment(id, c)
	if err != nil {
		return err
	}
	s.set(ds.Perm, ns.seconds())
	return nil
}

// ShmRemove implements shmctl's IPC_RMID: a segment still attached loses
// its key and goes at its last detach.
func (ns *Namespace) ShmRemove(id int, c Caller) error {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	s, err := ns.ownedSegment(id, c)
	if err != nil {
		return err
	}
	s.Mode |= shmDest
	ns.shm.makePrivate(s)
	ns.reapLocked(s)
	return nil
}

// ShmLock implements SHM_LOCK and SHM_UNLOCK: the segment's SHM_LOCKED
// mode bit (its pages are never swapped out here anyway). A user other
// than root locks only with an RLIMIT_MEMLOCK above zero.
func (ns *Namespace) ShmLock(id int, lock bool, memlock uint64, c Caller) error {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	s, err := ns.ownedSegment(id, c)
	if err != nil {
		return err
	}
	if lock && memlock == 0 && !c.Cred.Privileged() {
		return unix.EPERM
	}
	if lock {
		s.Mode |= shmLocked
	} else {
		s.Mode &^= shmLocked
	}
	return nil
}

// ShmInfo implements shmctl's IPC_INFO: the limits and the highest index
// in use.
func (ns *Namespace) ShmInfo() (linux.ShmInfo64, int) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	return linux.ShmInfo64{Max: ns.shmMax, Min: shmMin, Mni: uint64(ns.shm.max), Seg: shmMni, All: ns.shmAll},
		ns.shm.highest()
}

// ShmUsage implements shmctl's SHM_INFO: the segments, their pages and
// resident pages, and the highest index in use.
func (ns *Namespace) ShmUsage() (linux.ShmInfo, int) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	info := linux.ShmInfo{UsedIDs: int32(len(ns.shm.objects)), Tot: ns.shmPages}
	for _, o := range ns.shm.objects {
		info.RSS += uint64(o.(*Segment).mem.Resident())
	}
	return info, ns.shm.highest()
}
