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

// capCheckpointRestore is CAP_CHECKPOINT_RESTORE.
const capCheckpointRestore = 40

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

// addTask enters a new task, and the process a new main thread makes,
// in the tables, and counts its id in its PID namespaces.
func (k *Kernel) addTask(t *Task) {
	k.tablesMu.Lock()
	defer k.tablesMu.Unlock()
	k.tasks[t.TID] = t
	var p *Process
	if t.TID == t.Proc.PID {
		p = t.Proc
		k.processes[p.PID] = p
	}
	k.registerID(t.ids, p)
}

// removeTask takes a task that left out of the table; its id goes with
// it unless it is its process's, which stays until the process is
// reaped.
func (k *Kernel) removeTask(t *Task) {
	k.tablesMu.Lock()
	delete(k.tasks, t.TID)
	var waiting *Process
	if _, ok := k.processes[t.TID]; !ok {
		waiting = k.releaseID(t.ids)
	}
	k.tablesMu.Unlock()
	if waiting != nil {
		waiting.reportIfDead()
	}
}

// removeProcess takes a reaped process out of the table, and its id.
func (k *Kernel) removeProcess(p *Process) {
	k.tablesMu.Lock()
	delete(k.processes, p.PID)
	var waiting *Process
	if _, ok := k.tasks[p.PID]; !ok {
		waiting = k.releaseID(p.ids)
	}
	k.tablesMu.Unlock()
	if waiting != nil {
		waiting.reportIfDead()
	}
}

// renameTask moves the thread whose execve ended the others to its
// process's id, as Linux's exchange_tids: its own id goes.
func (k *Kernel) renameTask(t *Task) {
	k.removeTask(t)
	k.tablesMu.Lock()
	defer k.tablesMu.Unlock()
	t.TID, t.ids = t.Proc.PID, t.Proc.ids
	k.tasks[t.TID] = t
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
