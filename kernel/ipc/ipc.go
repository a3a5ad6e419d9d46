// Package ipc owns System V IPC: message queues, semaphore sets and shared
// memory segments, with Linux's keys, identifiers, permissions and limits,
// in one namespace per kernel (Namespace). Operations never block: one
// that would wait returns ErrWouldBlock and a channel that is closed at the
// object's next change, and the system call layer waits on it (Task.Block)
// and tries again with the same Wait, so signals, deadlines and process
// exit are handled in one place, and a waiter whose object was removed
// meanwhile sees EIDRM. Every object's ids and state are guarded by the
// namespace's lock, which is never held while an address space's lock is
// taken (a segment's detach takes it from under one).
package ipc

import (
	"errors"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
)

// ErrWouldBlock says an operation must wait for the channel returned with
// it; it never reaches a user program.
var ErrWouldBlock = errors.New("ipc: would block")

// Caller is who makes a call: its process id and credentials.
type Caller struct {
	PID  int
	Cred *fs.Cred
}

// The flags of the get calls and the control commands shared by the three
// kinds, from linux/ipc.h.
const (
	keyPrivate = 0 // IPC_PRIVATE
	flagCreate = 0o1000
	flagExcl   = 0o2000
	flagNowait = 0o4000

	CmdRmid = 0
	CmdSet  = 1
	CmdStat = 2
	CmdInfo = 3

	// idSeqShift: an id is its sequence number times 32768 plus its index
	// (IPCMNI_SHIFT); ipcMni bounds the indexes.
	idSeqShift = 15
	ipcMni     = 1 << idSeqShift
	idSeqMax   = (1<<31 - 1) >> idSeqShift
	// minCycle: new indexes cycle through at least this many before
	// reusing one (ipc_min_cycle, RADIX_TREE_MAP_SIZE).
	minCycle = 64
)

// Perm is the ipc_perm part every object has: its key, owner, creator and
// mode, and where it sits in its table.
type Perm struct {
	Key                  int32
	UID, GID, CUID, CGID uint32
	Mode                 uint32 // permission bits, and SHM_DEST and SHM_LOCKED for segments
	Ctime                int64  // last change, in seconds since the epoch
	seq, idx             int
	removed              bool
	// changed is closed, and replaced, at every change a waiter may wait
	// for (a message, a semaphore value, removal).
	changed chan struct{}
}

func (p *Perm) id() int { return p.seq<<idSeqShift | p.idx }

// notify wakes every waiter on the object.
func (p *Perm) notify() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// linux returns the ipc64_perm of the object.
func (p *Perm) linux() linux.IpcPerm {
	return linux.IpcPerm{Key: p.Key, UID: p.UID, GID: p.GID, CUID: p.CUID, CGID: p.CGID, Mode: p.Mode, Seq: uint16(p.seq)}
}

// access checks the caller's rights to the object as Linux's ipcperms:
// flag holds the requested bits in any class's position (0o444 read,
// 0o222 write); root passes (CAP_IPC_OWNER).
func (p *Perm) access(c Caller, flag uint32) error {
	requested := (flag>>6 | flag>>3 | flag) & 0o7
	granted := p.Mode
	switch {
	case c.Cred.UID == p.CUID || c.Cred.UID == p.UID:
		granted >>= 6
	case c.Cred.InGroup(p.CGID) || c.Cred.InGroup(p.GID):
		granted >>= 3
	}
	if requested&^granted&0o7 != 0 && !c.Cred.Privileged() {
		return unix.EACCES
	}
	return nil
}

// owns reports whether the caller may change or remove the object: its
// owner, its creator or root (CAP_SYS_ADMIN).
func (p *Perm) owns(c Caller) bool {
	return c.Cred.Privileged() || c.Cred.UID == p.UID || c.Cred.UID == p.CUID
}

// set applies IPC_SET's owner and mode at now (seconds).
func (p *Perm) set(from linux.IpcPerm, now int64) {
	p.UID, p.GID = from.UID, from.GID
	p.Mode = p.Mode&^0o777 | from.Mode&0o777
	p.Ctime = now
}

// object is a queue, a semaphore set or a segment.
type object interface{ perm() *Perm }

// table is one kind's objects by index, and by key those not private.
type table struct {
	objects map[int]object
	keys    map[int32]object
	// max is the most objects (msgmni, the fourth of sem, shmmni), which
	// the sysctls change.
	max int
	// next is where the cyclic index search starts, lastIdx the index
	// given last, seq the sequence number of new ids (bumped when the
	// indexes wrap), as Linux's ipc_idr_alloc.
	next, lastIdx, seq int
	// nextID is the id the next object gets (/proc/sys/kernel/*_next_id),
	// or -1.
	nextID int
	// clock is the kernel's wall clock (settable): the objects' times.
	clock func() time.Time
}

func newTable(max int, clock func() time.Time) table {
	return table{objects: map[int]object{}, keys: map[int32]object{}, max: max, lastIdx: -1, nextID: -1, clock: clock}
}

// byID finds the object an id names: EINVAL when there is none, or the
// index holds another generation's.
func (t *table) byID(id int) (object, error) {
	if id < 0 {
		return nil, unix.EINVAL
	}
	o, ok := t.objects[id&(ipcMni-1)]
	if !ok || o.perm().seq != id>>idSeqShift {
		return nil, unix.EINVAL
	}
	return o, nil
}

// freeIndex returns the first free index in [from, to), or -1.
func (t *table) freeIndex(from, to int) int {
	for i := from; i < to; i++ {
		if _, used := t.objects[i]; !used {
			return i
		}
	}
	return -1
}

// add gives o an index and a sequence number as Linux's ipc_addid: ENOSPC
// when the table is full.
func (t *table) add(o object, key int32, mode uint32, c Caller) error {
	if len(t.objects) >= min(t.max, ipcMni) {
		return unix.ENOSPC
	}
	var idx, seq int
	if next := t.nextID; next >= 0 {
		t.nextID = -1
		seq = next >> idSeqShift
		if idx = t.freeIndex(next&(ipcMni-1), ipcMni); idx < 0 {
			return unix.ENOSPC
		}
	} else {
		limit := min(max(len(t.objects)*3/2, minCycle), ipcMni)
		if idx = t.freeIndex(t.next, limit); idx < 0 {
			idx = t.freeIndex(0, min(t.next, limit))
		}
		if idx < 0 {
			return unix.ENOSPC
		}
		if idx <= t.lastIdx {
			if t.seq++; t.seq >= idSeqMax {
				t.seq = 0
			}
		}
		t.lastIdx, t.next, seq = idx, idx+1, t.seq
	}
	p := o.perm()
	*p = Perm{Key: key, UID: c.Cred.UID, GID: c.Cred.GID, CUID: c.Cred.UID, CGID: c.Cred.GID,
		Mode: mode & 0o777, Ctime: t.clock().Unix(), seq: seq, idx: idx, changed: make(chan struct{})}
	t.objects[idx] = o
	if key != keyPrivate {
		t.keys[key] = o
	}
	return nil
}

// makePrivate takes o's key away (a segment removed while attached).
func (t *table) makePrivate(o object) {
	p := o.perm()
	if p.Key != keyPrivate && t.keys[p.Key] == o {
		delete(t.keys, p.Key)
	}
	p.Key = keyPrivate
}

// remove takes o out of the table and wakes its waiters, who see EIDRM.
func (t *table) remove(o object) {
	p := o.perm()
	p.removed = true
	delete(t.objects, p.idx)
	if t.keys[p.Key] == o {
		delete(t.keys, p.Key)
	}
	p.notify()
}

// highest is the highest index in use, or 0 (the *_INFO commands' result).
func (t *table) highest() int {
	h := 0
	for i := range t.objects {
		h = max(h, i)
	}
	return h
}

// get is msgget, semget and shmget's common part, as Linux's ipcget:
// IPC_PRIVATE or a key not found with IPC_CREAT makes an object (create),
// a key found is checked against IPC_EXCL, the kind's own rules (check)
// and then the requested mode. An object made but not added to a full
// table is discarded.
func (t *table) get(key int32, flags int, c Caller, create func() (object, error), check func(object) error, discard func(object)) (int, error) {
	if key != keyPrivate {
		if o := t.keys[key]; o != nil {
			if flags&flagCreate != 0 && flags&flagExcl != 0 {
				return 0, unix.EEXIST
			}
			if err := check(o); err != nil {
				return 0, err
			}
			if err := o.perm().access(c, uint32(flags)&0o777); err != nil {
				return 0, err
			}
			return o.perm().id(), nil
		}
		if flags&flagCreate == 0 {
			return 0, unix.ENOENT
		}
	}
	o, err := create()
	if err != nil {
		return 0, err
	}
	if err := t.add(o, key, uint32(flags), c); err != nil {
		discard(o)
		return 0, err
	}
	return o.perm().id(), nil
}

// statByIndex finds the object of a *_STAT or *_STAT_ANY command, which
// name an index: it returns the object and its id.
func (t *table) statByIndex(idx int, c Caller, any bool) (object, int, error) {
	o, ok := t.objects[idx]
	if !ok || idx < 0 {
		return nil, 0, unix.EINVAL
	}
	if !any {
		if err := o.perm().access(c, 0o444); err != nil {
			return nil, 0, err
		}
	}
	return o, o.perm().id(), nil
}

// Wait carries a blocking call's object from one try to the next: a call
// made again after a wait finds it removed (EIDRM) rather than its id
// unknown.
type Wait struct {
	obj object
	// sem: the set's waiter record while the call waits (sem.go).
	sem *semWaiter
}

// lookup finds the object an id names for a call that may block, the one
// of its earlier try if there was one.
func (t *table) lookup(id int, w *Wait) (object, error) {
	if w != nil && w.obj != nil {
		if w.obj.perm().removed {
			return nil, unix.EIDRM
		}
		return w.obj, nil
	}
	o, err := t.byID(id)
	if err == nil && w != nil {
		w.obj = o
	}
	return o, err
}

// Namespace holds a kernel's System V IPC objects and limits.
type Namespace struct {
	mu  sync.Mutex
	msg table
	sem table
	shm table
	// undo holds each process's SEM_UNDO adjustments, per set, applied
	// when the process exits.
	undo map[int]map[*SemSet][]int
	// shmPages counts the pages of every segment (against shmAll), mem
	// makes their frames.
	shmPages uint64
	mem      mm.Memory
	// clock is the kernel's wall clock, which clock_settime moves: the
	// send, receive, operation, attach and change times.
	clock func() time.Time
	// The limits /proc/sys/kernel shows and root changes.
	shmMax, shmAll            uint64
	semMsl, semMns, semOpm    int
	msgMax, msgMnb            int
	semsInUse, msgs, msgBytes int
	// mq holds the POSIX message queues (mqueue.go).
	mq mqLimits
}

// Destroy removes every object of a namespace the last process left, as
// Linux's free_ipc_ns: queues and sets go (their waiters see EIDRM), a
// segment goes with its last mapping, and POSIX queues lose their names
// (each goes with its last descriptor).
func (ns *Namespace) Destroy() {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	for _, o := range ns.msg.objects {
		q := o.(*Queue)
		for len(q.msgs) > 0 {
			ns.dequeue(q, len(q.msgs)-1)
		}
		ns.msg.remove(o)
	}
	for _, o := range ns.sem.objects {
		for _, sets := range ns.undo {
			delete(sets, o.(*SemSet))
		}
		ns.dropSet(o)
		ns.sem.remove(o)
	}
	for _, o := range ns.shm.objects {
		s := o.(*Segment)
		s.Mode |= shmDest
		ns.shm.makePrivate(s)
		ns.reapLocked(s)
	}
	for name, q := range ns.mq.byName {
		delete(ns.mq.byName, name)
		q.linked = false
		q.destroyIfUnused()
	}
}

// seconds is the wall clock's time in seconds, as the objects keep it.
func (ns *Namespace) seconds() int64 { return ns.clock().Unix() }

// NewNamespace returns an empty namespace with Linux's default limits,
// whose segments take frames from mem.
func NewNamespace(mem mm.Memory, clock func() time.Time) *Namespace {
	return &Namespace{msg: newTable(msgMni, clock), sem: newTable(semMni, clock), shm: newTable(shmMni, clock), clock: clock,
		undo: map[int]map[*SemSet][]int{}, mem: mem,
		shmMax: shmMaxDefault, shmAll: shmAllDefault,
		semMsl: semMsl, semMns: semMns, semOpm: semOpm, msgMax: msgMax, msgMnb: msgMnb, mq: newMQLimits()}
}
