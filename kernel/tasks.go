package kernel

import "sort"

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
