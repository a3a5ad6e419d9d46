package kernel

import (
	"sort"

	"golang.org/x/sys/unix"
)

// PIDMax is Linux's pid_max on a machine of up to 32 harts: ids run up to
// PIDMax-1, then wrap to pidWrapStart (RESERVED_PIDS), skipping those in
// use, as Linux's alloc_pid does.
const (
	PIDMax       = 32768
	pidWrapStart = 300
)

// allocPID returns the next free id after the last one given out, for a
// task or a process; EAGAIN when every id is in use.
func (k *Kernel) allocPID() (int, error) {
	k.pidMu.Lock()
	defer k.pidMu.Unlock()
	next := k.lastPID.Load()
	for range PIDMax {
		next++
		if next >= PIDMax {
			next = pidWrapStart
			k.pidsWrapped = true
		}
		// Before the first wrap no id above the last is in use.
		if !k.pidsWrapped || !k.pidInUse(int(next)) {
			k.lastPID.Store(next)
			return int(next), nil
		}
	}
	return 0, unix.EAGAIN
}

// capCheckpointRestore is CAP_CHECKPOINT_RESTORE.
const capCheckpointRestore = 40

// claimPID gives out id itself, as clone3's set_tid asks for p: EINVAL
// outside 1 to PIDMax-1, EPERM without CAP_SYS_ADMIN or
// CAP_CHECKPOINT_RESTORE, EEXIST when id is in use (Linux's alloc_pid).
// Ids above the last one given out may be in use then, so each one given
// out from now on is checked.
func (k *Kernel) claimPID(id int, p *Process) (int, error) {
	switch {
	case id < 1 || id >= PIDMax:
		return 0, unix.EINVAL
	case p.Caps.Effective&(1<<unix.CAP_SYS_ADMIN|1<<capCheckpointRestore) == 0:
		return 0, unix.EPERM
	}
	k.pidMu.Lock()
	defer k.pidMu.Unlock()
	if k.pidInUse(id) {
		return 0, unix.EEXIST
	}
	if int64(id) > k.lastPID.Load() {
		k.pidsWrapped = true
	}
	return id, nil
}

// SetLastPID sets the last id given out, which the next one follows
// (/proc/sys/kernel/ns_last_pid, which root writes to choose the next
// pid): from 0 to PIDMax-1, EINVAL otherwise. Ids above it may be in use
// then, so each one given out from now on is checked.
func (k *Kernel) SetLastPID(id int) error {
	if id < 0 || id >= PIDMax {
		return unix.EINVAL
	}
	k.pidMu.Lock()
	defer k.pidMu.Unlock()
	if int64(id) < k.lastPID.Load() {
		k.pidsWrapped = true
	}
	k.lastPID.Store(int64(id))
	return nil
}

// pidInUse reports whether id names a task, a process not yet reaped, or
// a process group or session, which keep their ids while they have
// members.
func (k *Kernel) pidInUse(id int) bool {
	k.tablesMu.RLock()
	_, task := k.tasks[id]
	_, proc := k.processes[id]
	k.tablesMu.RUnlock()
	if task || proc {
		return true
	}
	ps := k.Processes() // not under sigMu: signal senders take tablesMu under it
	k.sigMu.Lock()
	defer k.sigMu.unlockUnchanged()
	for _, p := range ps {
		if p.sig.pgid == id || p.sig.sid == id {
			return true
		}
	}
	return false
}

func (k *Kernel) addTask(t *Task) {
	k.tablesMu.Lock()
	k.tasks[t.TID] = t
	if _, ok := k.processes[t.Proc.PID]; !ok {
		k.processes[t.Proc.PID] = t.Proc
	}
	k.tablesMu.Unlock()
}

func (k *Kernel) removeTask(t *Task) {
	k.tablesMu.Lock()
	delete(k.tasks, t.TID)
	k.tablesMu.Unlock()
}

func (k *Kernel) removeProcess(p *Process) {
	k.tablesMu.Lock()
	delete(k.processes, p.PID)
	k.tablesMu.Unlock()
}

// TaskByID returns the running task with a thread id, or nil.
func (k *Kernel) TaskByID(tid int) *Task {
	k.tablesMu.RLock()
	defer k.tablesMu.RUnlock()
	return k.tasks[tid]
}

// ProcessByID returns the process with a pid (exited but not yet reaped
// included), or nil.
func (k *Kernel) ProcessByID(pid int) *Process {
	k.tablesMu.RLock()
	defer k.tablesMu.RUnlock()
	return k.processes[pid]
}

// Processes returns every process, by pid.
func (k *Kernel) Processes() []*Process {
	k.tablesMu.RLock()
	ps := make([]*Process, 0, len(k.processes))
	for _, p := range k.processes {
		ps = append(ps, p)
	}
	k.tablesMu.RUnlock()
	sort.Slice(ps, func(i, j int) bool { return ps[i].PID < ps[j].PID })
	return ps
}

// TaskOrZombie returns the task with a thread id, or the main thread of
// a process with that id that exited and is not reaped yet; nil when
// there is neither.
func (k *Kernel) TaskOrZombie(tid int) *Task {
	if t := k.TaskByID(tid); t != nil {
		return t
	}
	if p := k.ProcessByID(tid); p != nil {
		return p.mainThread
	}
	return nil
}

// Tasks returns every running task.
func (k *Kernel) Tasks() []*Task {
	k.tablesMu.RLock()
	defer k.tablesMu.RUnlock()
	ts := make([]*Task, 0, len(k.tasks))
	for _, t := range k.tasks {
		ts = append(ts, t)
	}
	return ts
}
