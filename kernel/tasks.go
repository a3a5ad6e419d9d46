package kernel

import (
	"sort"
	"sync"
)

// The kernel's tables of processes (until reaped) and running tasks, by id:
// kill, tgkill, wait and /proc find them here.
var (
	tablesMu  sync.RWMutex
	processes = map[int]*Process{}
	tasks     = map[int]*Task{}
)

func addTask(t *Task) {
	tablesMu.Lock()
	tasks[t.TID] = t
	if _, ok := processes[t.Proc.PID]; !ok {
		processes[t.Proc.PID] = t.Proc
	}
	tablesMu.Unlock()
}

func removeTask(t *Task) {
	tablesMu.Lock()
	delete(tasks, t.TID)
	tablesMu.Unlock()
}

func removeProcess(p *Process) {
	tablesMu.Lock()
	delete(processes, p.PID)
	tablesMu.Unlock()
}

// TaskByID returns the running task with a thread id, or nil.
func TaskByID(tid int) *Task {
	tablesMu.RLock()
	defer tablesMu.RUnlock()
	return tasks[tid]
}

// ProcessByID returns the process with a pid (exited but not yet reaped
// included), or nil.
func ProcessByID(pid int) *Process {
	tablesMu.RLock()
	defer tablesMu.RUnlock()
	return processes[pid]
}

// Processes returns every process, by pid.
func Processes() []*Process {
	tablesMu.RLock()
	ps := make([]*Process, 0, len(processes))
	for _, p := range processes {
		ps = append(ps, p)
	}
	tablesMu.RUnlock()
	sort.Slice(ps, func(i, j int) bool { return ps[i].PID < ps[j].PID })
	return ps
}
