package kernel

import (
	iofs "io/fs"
	"path"

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
		if !path.IsAbs(file) {
			file = path.Join(p.Cwd, file)
		}
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
	as, err := loader.Exec(p.k.userMemory, p.k.vdso, p.Root, p.Cred(), file, argv, envp, p.Limit(unix.RLIMIT_STACK).Cur, random, regs)
	if err != nil {
		return err
	}
	p.setIDsOnExec(exe)
	if _, c, err := p.Root.LookupPath(nil, file); err == nil {
		file = c
	}
	p.ReplaceAddressSpace(as)
	p.mu.Lock()
	p.Exe = file
	p.Cmdline = argv
	p.mu.Unlock()
	if p.filesRefs.Load() > 1 { // shared with CLONE_FILES: exec gets its own table
		shared, sharedRefs := p.Files, p.filesRefs
		p.Files, p.filesRefs = shared.Fork(), newRefs()
		if sharedRefs.Add(-1) == 0 {
			shared.CloseAll()
		}
	}
	p.Files.CloseOnExec()
	t.ResetSignalsForExec()
	t.Regs.SetContext(regs)
	return nil
}

// setIDsOnExec applies a set-user-ID or set-group-ID program's owner or
// group to the effective ids, and saves the effective ids, as execve does.
func (p *Process) setIDsOnExec(exe *fs.Node) {
	if exe.Mode&iofs.ModeSetuid != 0 {
		p.EUID = exe.UID
	}
	if exe.Mode&iofs.ModeSetgid != 0 && exe.Mode&0o010 != 0 {
		p.EGID = exe.GID
	}
	p.SUID, p.SGID = p.EUID, p.EGID
}
