package loader

import (
	"bytes"
	"fmt"
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
	ShebangMax    = 256
	ShebangNested = 4
)

// Interpreter and PIE placement in the 128 GiB of user space: a PIE at
// two thirds of it, as Linux's ELF_ET_DYN_BASE.
const (
	pieBias    = 0x15_5555_5000
	interpBias = 0x1e_0000_0000
)

// MayExec checks that cred may execute n: a file with execute permission
// (EACCES for a directory or anything else).
func MayExec(n *fs.Node, cred *fs.Cred) error {
	if !n.Mode.IsRegular() {
		return unix.EACCES
	}
	return fs.Access(n, cred, fs.MayExec)
}

// ExecError is why exec failed, as a Linux errno.
type ExecError struct {
	Errno unix.Errno
	Msg   string
}

func (e *ExecError) Error() string { return e.Msg }

func execErr(errno unix.Errno, format string, args ...any) error {
	return &ExecError{Errno: errno, Msg: fmt.Sprintf(format, args...)}
}

// Exec builds a new address space running the program at path (absolute,
// in tree): its ELF image, its interpreter when it names one, the stack
// with argv, envp and the auxiliary vector, and the vDSO with vdsoData's
// data page. It returns the address space
// and the registers to start with (pc, sp, satp).
func Exec(mem mm.Memory, vdsoData *VDSO, tree *fs.Tree, cred *fs.Cred, file string, argv, envp []string, stackLimit uint64, random [16]byte, regs *arch.Frame) (*mm.AddressSpace, error) {
	stack := stackMapping(stackLimit)
	if err := CheckArgSize(argv, envp); err != nil || argBytes(argv, envp) > int(stack/4) {
		return nil, execErr(unix.E2BIG, "%s: arguments past Linux's limits", file)
	}
	exeNode, exePath, err := tree.LookupPath(cred, file)
	if err != nil {
		return nil, execErr(err.(unix.Errno), "%s: %v", file, err)
	}
	if err := MayExec(exeNode, cred); err != nil {
		return nil, execErr(unix.EACCES, "%s: not executable", file)
	}
	as, err := mm.NewAddressSpace(mem)
	if err != nil {
		return nil, execErr(unix.ENOMEM, "%s: %v", file, err)
	}
	fail := func(err error) (*mm.AddressSpace, error) {
		as.Release()
		if _, ok := err.(*ExecError); ok {
			return nil, err
		}
		return nil, execErr(unix.ENOEXEC, "%s: %v", file, err)
	}
	exeData, err := exeNode.Contents()
	if err != nil {
		return fail(execErr(err.(unix.Errno), "%s: %v", file, err))
	}
	exe, err := LoadELF(as, exeData, pieBias, exeNode, exePath)
	if err != nil {
		return fail(err)
	}
	entry := exe.Entry
	var interp *Image
	if exe.Interp != "" {
		interpPath, err := cred.Join("/", exe.Interp)
		if err != nil {
			return fail(execErr(err.(unix.Errno), "%s: interpreter %s: %v", file, exe.Interp, err))
		}
		n, interpPath, err := tree.LookupPath(cred, interpPath)
		if err != nil {
			return fail(execErr(err.(unix.Errno), "%s: interpreter %s: %v", file, exe.Interp, err))
		}
		if MayExec(n, cred) != nil {
			return fail(execErr(unix.EACCES, "%s: interpreter %s: not executable", file, exe.Interp))
		}
		// Linux opens the interpreter as the program, by open_exec.
		if err := tree.LandlockCheck(cred, interpPath, fs.LandlockExecute|fs.LandlockReadFile); err != nil {
			return fail(execErr(unix.EACCES, "%s: interpreter %s: denied by Landlock", file, exe.Interp))
		}
		interpData, err := n.Contents()
		if err != nil {
			return fail(execErr(err.(unix.Errno), "%s: interpreter %s: %v", file, exe.Interp, err))
		}
		if interp, err = LoadELF(as, interpData, interpBias, n, interpPath); err != nil {
			return fail(fmt.Errorf("interpreter %s: %w", exe.Interp, err))
		}
		if interp.Interp != "" {
			return fail(execErr(unix.ELIBBAD, "%s: interpreter %s has an interpreter", file, exe.Interp))
		}
		entry = interp.Entry
	}
	sp, err := buildStack(as, argv, envp, exe, interp, file, stack, random)
	if err != nil {
		return fail(err)
	}
	if err := vdsoData.mapVDSO(mem, as); err != nil {
		return fail(err)
	}
	as.Layout.StartCode, as.Layout.EndCode, as.Layout.StartData, as.Layout.EndData = exe.StartCode, exe.EndCode, exe.StartData, exe.EndData
	as.BrkBase = (exe.End + mm.PageSize - 1) &^ (mm.PageSize - 1)
	as.Brk = as.BrkBase
	*regs = arch.Frame{PC: uint64(entry), Satp: as.Satp()}
	regs.X[arch.RegSP] = uint64(sp)
	return as, nil
}

// CheckArgSize checks the arguments against Linux's limits: E2BIG past them.
func CheckArgSize(argv, envp []string) error {
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

// Shebang parses a "#!interpreter [argument]" first line: the interpreter
// and the rest of the line as one argument, as Linux does.
func Shebang(data []byte) (string, []string, bool) {
	if !bytes.HasPrefix(data, []byte("#!")) {
		return "", nil, false
	}
	line := data[2:min(len(data), ShebangMax)]
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
