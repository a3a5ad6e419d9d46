// Package ipc owns System V IPC: message queues, semaphore sets and shared
// memory segments, with Linux's keys, identifiers, permissions and limits,
// in one namespace per kernel (Namespace). Operations never block: one
// that would wait returns ErrWouldBlock and a channel that is closed at the
// object's next change, and the system call layer waits on it (Task.Block)
// and tries again, so signals, deadlines and process exit are handled in
// one place. Each object's ids and state are guarded by the namespace's
// lock.
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

	cmdRmid = 0
	cmdSet  = 1
	cmdStat = 2
	cmdInfo = 3

	// idSeqShift: an id is its sequence number times 32768 plus its index
	// (IPCMNI_SHIFT).
	idSeqShift = 15
	idSeqMax   = (1<<31 - 1) >> idSeqShift
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
// flag holds the requested bits in the owner's position (0o400 read,
// 0o200 write); root passes (CAP_IPC_OWNER).
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

// set applies IPC_SET's owner and mode.
func (p *Perm) set(from linux.IpcPerm) {
	p.UID, p.GID = from.UID, from.GID
	p.Mode = p.Mode&^0o777 | from.Mode&0o777
	p.Ctime = time.Now().Unix()
}

// object is a queue, a semaphore set or a segment.
type object interface{ perm() *Perm }

// table is one kind's objects by index.
type table struct {
	objects map[int]object
	max     int // the most objects (MSGMNI, SEMMNI, SHMMNI)
	next    int // where the next index search starts (cyclic, as Linux)
	seq     int
}

func newTable(max int) table { return table{objects: map[int]object{}, max: max} }

// byKey finds the object with a key.
func (t *table) byKey(key int32) object {
	for _, o := range t.objects {
		if p := o.perm(); p.Key == key && !p.removed {
			return o
		}
	}
	return nil
}

// byID finds the object an id names: EINVAL when there is none, or the
// index holds another generation's.
func (t *table) byID(id int) (object, error) {
	if id < 0 {
		return nil, unix.EINVAL
	}
	o, ok := t.objects[id&(1<<idSeqShift-1)]
	if !ok || o.perm().seq != id>>idSeqShift {
		return nil, unix.EINVAL
	}
	return o, nil
}

// add gives o an index and a sequence number: ENOSPC when the table is full.
func (t *table) add(o object, key int32, mode uint32, c Caller) error {
	if len(t.objects) >= t.max {
		return unix.ENOSPC
	}
	idx := t.next
	for {
		if _, used := t.objects[idx]; !used {
			break
		}
		idx = (idx + 1) % t.max
	}
	t.next = (idx + 1) % t.max
	p := o.perm()
	*p = Perm{Key: key, UID: c.Cred.UID, GID: c.Cred.GID, CUID: c.Cred.UID, CGID: c.Cred.GID,
		Mode: mode & 0o777, Ctime: time.Now().Unix(), seq: t.seq, idx: idx, changed: make(chan struct{})}
	t.seq = (t.seq + 1) % (idSeqMax + 1)
	t.objects[idx] = o
	return nil
}

// remove takes o out of the table and wakes its waiters, who see EIDRM.
func (t *table) remove(o object) {
	p := o.perm()
	p.removed = true
	delete(t.objects, p.idx)
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

// get is msgget, semget and shmget's common part: IPC_PRIVATE or a key
// not found with IPC_CREAT makes an object (create), a key found is
// checked against IPC_EXCL, the requested mode and the kind's own rules
// (check).
func (t *table) get(key int32, flags int, c Caller, create func() (object, error), check func(object) error) (int, error) {
	if key != keyPrivate {
		if o := t.byKey(key); o != nil {
			if flags&flagCreate != 0 && flags&flagExcl != 0 {
				return 0, unix.EEXIST
			}
			if err := o.perm().access(c, uint32(flags)&0o777); err != nil {
				return 0, err
			}
			if err := check(o); err != nil {
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
		return 0, err
	}
	return o.perm().id(), nil
}

// stat finds the object of a *_STAT or *_STAT_ANY command, which name an
// index: it returns the object and its id.
func (t *table) statByIndex(idx int, c Caller, any bool) (object, int, error) {
	o, ok := t.objects[idx]
	if !ok {
		return nil, 0, unix.EINVAL
	}
	if !any {
		if err := o.perm().access(c, 0o400); err != nil {
			return nil, 0, err
		}
	}
	return o, o.perm().id(), nil
}

// Namespace holds a kernel's System V IPC objects.
type Namespace struct {
	mu  sync.Mutex
	msg table
	sem table
	shm table
	// undo holds each process's SEM_UNDO adjustments, per set and
	// semaphore, applied when the process exits.
	undo map[int]map[*SemSet]map[int]int
	// shmPages counts the pages of every segment (SHMALL), mem makes them.
	shmPages uint64
	mem      mm.Memory
}

// NewNamespace returns an empty namespace whose segments take frames from mem.
func NewNamespace(mem mm.Memory) *Namespace {
	return &Namespace{msg: newTable(msgMni), sem: newTable(semMni), shm: newTable(shmMni),
		undo: map[int]map[*SemSet]map[int]int{}, mem: mem}
}
