package kernel

import (
	"bytes"
	iofs "io/fs"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
)

// Linux's limits on a new program's arguments: a quarter of the stack for
// all strings and their pointers, 32 pages for one string (MAX_ARG_STRLEN);
// a #! line is read from the first 256 bytes and nests at most 4 deep.
const (
	ArgMax        = StackSize / 4
	ArgStringMax  = 32 * mm.PageSize
	shebangMax    = 256
	shebangNested = 4
)

// UserMemory is where user address spaces get their frames; set at boot
// (and by host tests).
var UserMemory mm.Memory

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
	if err := argSize(argv, envp); err != nil {
		return err
	}
	for depth := 0; ; depth++ {
		n, err := p.Root.Lookup(p.Cred(), file, true)
		if err != nil {
			return err
		}
		if err := mayExec(n, p.Cred()); err != nil {
			return err
		}
		var head [shebangMax]byte
		k, err := n.ReadAt(head[:], 0)
		if err != nil {
			return err
		}
		interp, arg, ok := shebang(head[:k])
		if !ok {
			break
		}
		if depth == shebangNested {
			return unix.ELOOP
		}
		script := append([]string{interp}, arg...)
		argv = append(append(script, name), argv[min(1, len(argv)):]...)
		name, file = interp, interp
		if !path.IsAbs(file) {
			file = path.Join(p.Cwd, file)
		}
	}
	if err := argSize(argv, envp); err != nil {
		return err
	}
	var random [16]byte
	Random(random[:])
	regs := new(arch.Frame)
	exe, err := p.Root.Lookup(p.Cred(), file, true)
	if err != nil {
		return err
	}
	as, err := Exec(UserMemory, p.Root, p.Cred(), file, argv, envp, p.Limit(unix.RLIMIT_STACK).Cur, random, regs)
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

// argSize checks the arguments against Linux's limits: E2BIG past them.
func argSize(argv, envp []string) error {
	for _, list := range [][]string{argv, envp} {
		for _, s := range list {
			if len(s)+1 > ArgStringMax {
				return unix.E2BIG
			}
		}
	}
	if argBytes(argv, envp) > ArgMax {
		return unix.E2BIG
	}
	return nil
}

// argBytes is the stack space the arguments take: strings and pointers.
func argBytes(argv, envp []string) int {
	size := 0
	for _, list := range [][]string{argv, envp} {
		for _, s := range list {
			size += len(s) + 1 + 8
		}
	}
	return size
}

// shebang parses a "#!interpreter [argument]" first line: the interpreter
// and the rest of the line as one argument, as Linux does.
func shebang(data []byte) (string, []string, bool) {
	if !bytes.HasPrefix(data, []byte("#!")) {
		return "", nil, false
	}
	line := data[2:min(len(data), shebangMax)]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	fields := strings.Trim(string(line), " \t")
	if fields == "" {
		return "", nil, false
	}
	interp, rest := fields, ""
	if i := strings.IndexAny(fields, " \t"); i >= 0 {
		interp, rest = fields[:i], strings.Trim(fields[i:], " \t")
	}
	if rest != "" {
		return interp, []string{rest}, true
	}
	return interp, nil, true
}
