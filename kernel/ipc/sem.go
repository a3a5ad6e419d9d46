package ipc

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/mm"
)

// Linux's semaphore limits (linux/sem.h) and semop's flag.
const (
	semMni = 32000           // SEMMNI: the most sets
	semMsl = 32000           // SEMMSL: the most semaphores in a set
	semMns = semMni * semMsl // SEMMNS: the most semaphores in all
	semOpm = 500             // SEMOPM: the most operations in one semop
	semVmx = 32767           // SEMVMX: the largest value
	semAem = semVmx          // SEMAEM: the largest undo adjustment
	semUsz = 20              // SEMUSZ
	// semCost is what a semaphore costs the kernel (Linux's struct sem),
	// charged for a set's life.
	semCost = 64

	SemUndo = 0x1000 // SEM_UNDO
)

// The semctl commands besides the common ones (linux/sem.h).
const (
	SemGetPid  = 11
	SemGetVal  = 12
	SemGetAll  = 13
	SemGetNcnt = 14
	SemGetZcnt = 15
	SemSetVal  = 16
	SemSetAll  = 17
	SemStat    = 18
	SemInfo    = 19
	SemStatAny = 20
)

// semaphore is one semaphore of a set: its value and the pid of the
// last process that changed it.
type semaphore struct {
	val, pid int
}

// SemSet is a semaphore set.
type SemSet struct {
	Perm
	sems  []semaphore
	otime int64
	// waiters are the semop calls waiting on the set, each with the
	// operation it waits on (GETNCNT, GETZCNT count them).
	waiters map[*semWaiter]struct{}
}

func (s *SemSet) perm() *Perm { return &s.Perm }

// semWaiter is a waiting semop: the semaphore and operation it waits on.
type semWaiter struct {
	num int
	op  int
}

// SemGet implements semget(2).
func (ns *Namespace) SemGet(key int32, nsems, flags int, c Caller) (int, error) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if nsems < 0 || nsems > ns.semMsl {
		return 0, unix.EINVAL
	}
	return ns.sem.get(key, flags, c, func() (object, error) {
		if nsems == 0 {
			return nil, unix.EINVAL
		}
		if ns.semsInUse+nsems > ns.semMns {
			return nil, unix.ENOSPC
		}
		if mm.Charged.Charge(nsems*semCost) != nil {
			return nil, unix.ENOMEM
		}
		ns.semsInUse += nsems
		return &SemSet{sems: make([]semaphore, nsems), waiters: map[*semWaiter]struct{}{}}, nil
	}, func(o object) error {
		if nsems > len(o.(*SemSet).sems) {
			return unix.EINVAL
		}
		return nil
	}, ns.dropSet)
}

// dropSet gives back what a set held.
func (ns *Namespace) dropSet(o object) {
	n := len(o.(*SemSet).sems)
	ns.semsInUse -= n
	mm.Charged.Uncharge(n * semCost)
}

// semSet finds the set an id names (the one of an earlier try, w).
func (ns *Namespace) semSet(id int, w *Wait) (*SemSet, error) {
	o, err := ns.sem.lookup(id, w)
	if err != nil {
		return nil, err
	}
	return o.(*SemSet), nil
}

// SemOp implements semop(2) and semtimedop(2) once the operations are
// read (at most semopm, checked by the caller with SemOpMax): they are
// done all at once, or with one that must wait EAGAIN (its IPC_NOWAIT)
// or ErrWouldBlock and the channel to wait on, w recording what it waits
// for until the next try or SemDone. EFBIG for a semaphore past the set,
// ERANGE for a value or an undo adjustment out of range, EIDRM when the
// set of an earlier try went.
func (ns *Namespace) SemOp(id int, ops []linux.Sembuf, c Caller, w *Wait) (<-chan struct{}, error) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	ns.semDoneLocked(w)
	if id < 0 || len(ops) == 0 {
		return nil, unix.EINVAL
	}
	s, err := ns.semSet(id, w)
	if err != nil {
		return nil, err
	}
	alter, undo, top := false, false, 0
	for _, op := range ops {
		top = max(top, int(op.Num))
		alter = alter || op.Op != 0
		undo = undo || op.Flg&SemUndo != 0
	}
	if top >= len(s.sems) {
		return nil, unix.EFBIG
	}
	flag := uint32(0o444)
	if alter {
		flag = 0o222
	}
	if err := s.access(c, flag); err != nil {
		return nil, err
	}
	var adj []int
	if undo {
		adj = ns.undoOf(c.PID, s)
	}
	vals := make([]int, len(s.sems))
	for i, sem := range s.sems {
		vals[i] = sem.val
	}
	newAdj := append([]int(nil), adj...)
	for _, op := range ops {
		cur := vals[op.Num]
		next := cur + int(op.Op)
		if op.Op == 0 && cur != 0 || next < 0 {
			if op.Flg&flagNowait != 0 {
				return nil, unix.EAGAIN
			}
			w.sem = &semWaiter{num: int(op.Num), op: int(op.Op)}
			s.waiters[w.sem] = struct{}{}
			return s.changed, ErrWouldBlock
		}
		if next > semVmx {
			return nil, unix.ERANGE
		}
		if op.Flg&SemUndo != 0 {
			a := newAdj[op.Num] - int(op.Op)
			if a < -semAem-1 || a > semAem {
				return nil, unix.ERANGE
			}
			newAdj[op.Num] = a
		}
		vals[op.Num] = next
	}
	for i := range s.sems {
		s.sems[i].val = vals[i]
	}
	for _, op := range ops {
		s.sems[op.Num].pid = c.PID
	}
	copy(adj, newAdj)
	s.otime = ns.seconds()
	if alter {
		s.notify()
	}
	return nil, nil
}

// SemDone ends a semop's wait record (after its last try).
func (ns *Namespace) SemDone(w *Wait) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	ns.semDoneLocked(w)
}

func (ns *Namespace) semDoneLocked(w *Wait) {
	if w.sem != nil {
		delete(w.obj.(*SemSet).waiters, w.sem)
		w.sem = nil
	}
}

// SemOpMax is semopm, the most operations one semop may ask for.
func (ns *Namespace) SemOpMax() int {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	return ns.semOpm
}

// undoOf returns a process's adjustments for a set, made on first use.
func (ns *Namespace) undoOf(pid int, s *SemSet) []int {
	sets := ns.undo[pid]
	if sets == nil {
		sets = map[*SemSet][]int{}
		ns.undo[pid] = sets
	}
	adj := sets[s]
	if adj == nil {
		adj = make([]int, len(s.sems))
		sets[s] = adj
	}
	return adj
}

// HasUndo reports whether process pid has a list of SEM_UNDO
// adjustments, which Linux makes at its first SEM_UNDO operation (kcmp's
// KCMP_SYSVSEM compares it).
func (ns *Namespace) HasUndo(pid int) bool {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	return ns.undo[pid] != nil
}

// clearUndo forgets every process's adjustment of semaphore num of s (all
// of them for num < 0): SETVAL and SETALL.
func (ns *Namespace) clearUndo(s *SemSet, num int) {
	for _, sets := range ns.undo {
		if adj := sets[s]; adj != nil {
			if num < 0 {
				clear(adj)
			} else {
				adj[num] = 0
			}
		}
	}
}

// ExitProcess applies a process's SEM_UNDO adjustments as it exits, as
// Linux's exit_sem: each value moved by its adjustment and kept within
// 0 and SEMVMX.
func (ns *Namespace) ExitProcess(pid int) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	sets := ns.undo[pid]
	delete(ns.undo, pid)
	for s, adj := range sets {
		if s.removed {
			continue
		}
		changed := false
		for i, a := range adj {
			if a == 0 {
				continue
			}
			s.sems[i].val = min(max(s.sems[i].val+a, 0), semVmx)
			s.sems[i].pid = pid
			changed = true
		}
		if changed {
			s.notify()
		}
	}
}

// SemCtl implements semctl's commands on one set that answer a number:
// GETVAL, GETPID, GETNCNT, GETZCNT and SETVAL (val is SETVAL's value).
func (ns *Namespace) SemCtl(id, num, cmd, val int, c Caller) (int, error) {
	if cmd == SemSetVal && (val < 0 || val > semVmx) {
		return 0, unix.ERANGE
	}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	s, err := ns.semSet(id, nil)
	if err != nil {
		return 0, err
	}
	if cmd == SemSetVal {
		if num < 0 || num >= len(s.sems) {
			return 0, unix.EINVAL
		}
		if err := s.access(c, 0o222); err != nil {
			return 0, err
		}
		s.sems[num] = semaphore{val: val, pid: c.PID}
		ns.clearUndo(s, num)
		s.Ctime = ns.seconds()
		s.notify()
		return 0, nil
	}
	if err := s.access(c, 0o444); err != nil {
		return 0, err
	}
	if num < 0 || num >= len(s.sems) {
		return 0, unix.EINVAL
	}
	switch cmd {
	case SemGetVal:
		return s.sems[num].val, nil
	case SemGetPid:
		return s.sems[num].pid, nil
	}
	n := 0
	for w := range s.waiters {
		if w.num == num && (w.op == 0) == (cmd == SemGetZcnt) {
			n++
		}
	}
	return n, nil
}

// SemGetAll implements semctl's GETALL: every value of the set.
func (ns *Namespace) SemGetAll(id int, c Caller) ([]uint16, error) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	s, err := ns.semSet(id, nil)
	if err != nil {
		return nil, err
	}
	if err := s.access(c, 0o444); err != nil {
		return nil, err
	}
	vals := make([]uint16, len(s.sems))
	for i, sem := range s.sems {
		vals[i] = uint16(sem.val)
	}
	return vals, nil
}

// SemCount returns how many semaphores a set has: SETALL reads that many
// values, after the access check GETALL and SETALL make.
func (ns *Namespace) SemCount(id int, c Caller, write bool) (int, error) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	s, err := ns.semSet(id, nil)
	if err != nil {
		return 0, err
	}
	flag := uint32(0o444)
	if write {
		flag = 0o222
	}
	if err := s.access(c, flag); err != nil {
		return 0, err
	}
	return len(s.sems), nil
}

// SemSetAll implements semctl's SETALL once the values are read: ERANGE
// for one past SEMVMX, EIDRM when the set went meanwhile.
func (ns *Namespace) SemSetAll(id int, vals []uint16, c Caller) error {
	for _, v := range vals {
		if v > semVmx {
			return unix.ERANGE
		}
	}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	s, err := ns.semSet(id, nil)
	if err != nil {
		return err
	}
	if err := s.access(c, 0o222); err != nil {
		return err
	}
	if len(vals) != len(s.sems) {
		return unix.EIDRM
	}
	for i, v := range vals {
		s.sems[i] = semaphore{val: int(v), pid: c.PID}
	}
	ns.clearUndo(s, -1)
	s.Ctime = ns.seconds()
	s.notify()
	return nil
}

// SemStat implements semctl's IPC_STAT (by id; returns 0) and SEM_STAT
// and SEM_STAT_ANY (by index; return the id).
func (ns *Namespace) SemStat(idOrIndex int, byIndex, any bool, c Caller) (linux.SemidDs, int, error) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	var s *SemSet
	ret := 0
	if byIndex {
		o, id, err := ns.sem.statByIndex(idOrIndex, c, any)
		if err != nil {
			return linux.SemidDs{}, 0, err
		}
		s, ret = o.(*SemSet), id
	} else {
		var err error
		if s, err = ns.semSet(idOrIndex, nil); err != nil {
			return linux.SemidDs{}, 0, err
		}
		if err := s.access(c, 0o444); err != nil {
			return linux.SemidDs{}, 0, err
		}
	}
	return linux.SemidDs{Perm: s.Perm.linux(), Otime: s.otime, Ctime: s.Ctime, Nsems: uint64(len(s.sems))}, ret, nil
}

// SemSet implements semctl's IPC_SET: the owner and mode.
func (ns *Namespace) SemSet(id int, ds linux.SemidDs, c Caller) error {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	s, err := ns.semSet(id, nil)
	if err != nil {
		return err
	}
	if !s.owns(c) {
		return unix.EPERM
	}
	s.set(ds.Perm, ns.seconds())
	return nil
}

// SemRemove implements semctl's IPC_RMID: waiters fail with EIDRM.
func (ns *Namespace) SemRemove(id int, c Caller) error {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	s, err := ns.semSet(id, nil)
	if err != nil {
		return err
	}
	if !s.owns(c) {
		return unix.EPERM
	}
	for _, sets := range ns.undo {
		delete(sets, s)
	}
	ns.dropSet(s)
	ns.sem.remove(s)
	return nil
}

// SemInfo implements semctl's IPC_INFO (the limits) and SEM_INFO (with
// the sets and semaphores in use); both return the highest index in use.
func (ns *Namespace) SemInfo(usage bool) (linux.Seminfo, int) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	info := linux.Seminfo{Map: semMns, Mni: int32(ns.sem.max), Mns: int32(ns.semMns), Mnu: semMns, Msl: int32(ns.semMsl),
		Opm: int32(ns.semOpm), Ume: semOpm, Usz: semUsz, Vmx: semVmx, Aem: semAem}
	if usage {
		info.Usz, info.Aem = int32(len(ns.sem.objects)), int32(ns.semsInUse)
	}
	return info, ns.sem.highest()
}
