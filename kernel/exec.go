package kernel

import (
	iofs "io/fs"

	"golang.org/x/sys/unix"

	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel/loader"
)

// Execve replaces the task's program with the one at file (absolute; name
// is how the caller wrote it), as execve(2) does: a #! script runs its
// interpreter with the script's name as an argument; descriptors marked
// close-on-exec are closed. When loading fails the old program goes on and
// the error is returned.
func (t *Task) Execve(file, name string, argv, envp []string) error {
	p := t.Proc
	if err := p.checkNprocAtExec(); err != nil {
		return err
	}
	if err := loader.CheckArgSize(argv, envp); err != nil {
		return err
	}
	for depth := 0; ; depth++ {
		n, err := p.Root.Lookup(p.Cred(), file, true)
		if err != nil {
			return err
		}
		if err := loader.MayExec(n, p.Cred()); err != nil {
			return err
		}
		// Linux's open_exec opens for reading and executing.
		if err := p.Root.LandlockCheck(p.Cred(), file, fs.LandlockExecute|fs.LandlockReadFile); err != nil {
			return err
		}
		var head [loader.ShebangMax]byte
		k, err := n.ReadAt(head[:], 0)
		if err != nil {
			return err
		}
		interp, arg, ok := loader.Shebang(head[:k])
		if !ok {
			break
		}
		if depth == loader.ShebangNested {
			return unix.ELOOP
		}
		script := append([]string{interp}, arg...)
		argv = append(append(script, name), argv[min(1, len(argv)):]...)
		name, file = interp, interp
		file, _ = p.Resolve().Join(p.Cwd(), file) // fails only for RESOLVE_BENEATH
	}
	if err := loader.CheckArgSize(argv, envp); err != nil {
		return err
	}
	var random [16]byte
	p.k.Random(random[:])
	regs := new(arch.Frame)
	exe, err := p.Root.Lookup(p.Cred(), file, true)
	if err != nil {
		return err
	}
	as, err := loader.Exec(p.k.userMemory, t.execTimeNamespace(), p.Root, p.Cred(), file, argv, envp, p.Limit(unix.RLIMIT_STACK).Cur, random, regs)
	if err != nil {
		return err
	}
	if err := t.endOtherThreads(); err != nil {
		as.Release()
		return err
	}
	p.setIDsOnExec(exe, t.Settings.NoNewPrivs.Load())
	t.Settings.Name.Store(nil)
	p.Settings.NotDumpable.Store(false)
	p.Settings.SecureBits.And(^uint32(SecBitKeepCaps))
	if _, c, err := p.Root.LookupPath(p.Cred(), file); err == nil {
		file = c
	}
	p.ReplaceAddressSpace(as)
	p.enterTimeForChildren()
	p.mu.Lock()
	p.Exe = file
	p.Cmdline = argv
	p.mu.Unlock()
	if err := p.UnshareFiles(); err != nil {
		// Past the point of no return, as Linux's begin_new_exec.
		t.Exiting = true
		p.exitBySignal(unix.SIGSEGV)
		return err
	}
	p.Files.CloseOnExec()
	p.deleteTimers(false) // POSIX timers end at exec, ITIMER_REAL stays
	p.k.keys.Exec(&t.keyrings, p.keyrings)
	p.k.perf.Exec(&t.perf)
	t.ResetSignalsForExec()
	t.Regs.SetContext(regs)
	p.trapAfterExec()
	return nil
}

// UnshareFiles gives p a descriptor table of its own, a copy, when it
// shares one with another process (CLONE_FILES): for execve, unshare's
// CLONE_FILES and close_range's CLOSE_RANGE_UNSHARE. EMFILE when the
// copy would pass nr_open (FDTable.ForkWithin).
func (p *Process) UnshareFiles() error {
	if p.filesRefs.Load() <= 1 {
		return nil
	}
	shared, sharedRefs := p.Files, p.filesRefs
	files, err := shared.ForkWithin(p.k.NrOpen())
	if err != nil {
		return err
	}
	p.Files, p.filesRefs = files, newRefs()
	if sharedRefs.Add(-1) == 0 {
		shared.CloseAll()
	}
	return nil
}

// setIDsOnExec applies a set-user-ID or set-group-ID program's owner or
// group to the effective ids (unless no_new_privs), and saves the
// effective ids, as execve does.
func (p *Process) setIDsOnExec(exe *fs.Node, noNewPrivs bool) {
	if exe.Mode&iofs.ModeSetuid != 0 && !noNewPrivs {
		p.EUID = exe.UID
	}
	if exe.Mode&iofs.ModeSetgid != 0 && exe.Mode&0o010 != 0 && !noNewPrivs {
		p.EGID = exe.GID
	}
	p.SUID, p.SGID = p.EUID, p.EGID
	p.FSUID, p.FSGID = p.EUID, p.EGID
	p.capsOnExec()
}

// endOtherThreads ends every thread of the process but t, as Linux's
// de_thread does for execve, and waits until they have left (their
// robust futexes and CLONE_CHILD_CLEARTID words are released in the old
// address space). A thread running user code comes back at its next
// interrupt; one blocked in a system call is woken with EINTR. The
// survivor takes the process's id as its thread id, as on Linux. When
// another thread's execve or the process's exit wins, t leaves too.
func (t *Task) endOtherThreads() error {
	p := t.Proc
	left, err := t.claimExec()
	if err != nil || left == nil {
		return err
	}
	t.wakeOtherThreads()
	select {
	case <-left:
	case <-p.exited:
		t.Exiting = true
		return unix.EINTR
	}
	p.execSurvivor.Store(nil)
	if t.TID != p.PID {
		p.k.renameTask(t)
	}
	return nil
}

// claimExec makes t the thread whose execve survives and returns the
// channel closed when the others have left; nil when t is alone.
func (t *Task) claimExec() (<-chan struct{}, error) {
	p := t.Proc
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.threads == 1 {
		return nil, nil
	}
	if !p.execSurvivor.CompareAndSwap(nil, t) {
		t.Exiting = true // another thread's execve ends this one
		return nil, unix.EINTR
	}
	left := make(chan struct{})
	p.othersLeft = left
	return left, nil
}

// wakeOtherThreads wakes the other threads of t's process from Block.
func (t *Task) wakeOtherThreads() {
	t.Proc.k.sigMu.Lock()
	defer t.Proc.k.sigMu.Unlock()
	for _, o := range tasksOf(t.Proc) {
		if o != t {
			o.wakeUp()
		}
	}
}

// endedByExec reports whether another thread's execve is ending t.
func (t *Task) endedByExec() bool {
	s := t.Proc.execSurvivor.Load()
	return s != nil && s != t
}
