package syscall

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/kernel/loader"
	"github.com/jiege-go/jiege/mm"
)

func init() {
	register(sysno.Execve, sysExecve)
	register(sysno.Execveat, sysExecveat)
}

// sysExecve implements execve(2).
func sysExecve(t *kernel.Task, a Args) (uint64, error) {
	return sysExecveat(t, Args{cwdFD, a[0], a[1], a[2], 0})
}

// sysExecveat implements execveat(2) for paths (AT_EMPTY_PATH on a
// descriptor is not supported: ENOENT, as for an unlinked file).
func sysExecveat(t *kernel.Task, a Args) (uint64, error) {
	if a[4]&^(unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return 0, unix.EINVAL
	}
	name, err := copyInString(t, a[1])
	if err != nil {
		return 0, err
	}
	p, err := resolve(t, int32(a[0]), name)
	if err != nil {
		return 0, err
	}
	budget := loader.ArgMax
	argv, err := stringArray(t, a[2], &budget)
	if err != nil {
		return 0, err
	}
	envp, err := stringArray(t, a[3], &budget)
	if err != nil {
		return 0, err
	}
	if len(argv) == 0 {
		// An empty argv gets "" as argv[0], as Linux 5.18 on, so that no
		// program takes envp[0] for its first argument (execve06).
		argv = []string{""}
	}
	return 0, t.Execve(p, name, argv, envp)
}

// stringArray reads a NULL-terminated array of string pointers (argv,
// envp), charging each string and pointer to budget: E2BIG past it or for
// a string longer than MAX_ARG_STRLEN, so a caller cannot make the kernel
// read more than Linux would.
func stringArray(t *kernel.Task, addr uint64, budget *int) ([]string, error) {
	var out []string
	if addr == 0 {
		return nil, nil
	}
	for i := uint64(0); ; i++ {
		var sp uint64
		if err := copyInStruct(t, addr+8*i, &sp); err != nil {
			return nil, err
		}
		if sp == 0 {
			return out, nil
		}
		s, err := copyInArgString(t, sp)
		if err != nil {
			if errors.Is(err, mm.ErrInvalid) {
				return nil, unix.E2BIG
			}
			return nil, unix.EFAULT
		}
		if *budget -= len(s) + 1 + 8; *budget < 0 {
			return nil, unix.E2BIG
		}
		out = append(out, s)
	}
}

// copyInArgString reads one argument or environment string of execve.
func copyInArgString(t *kernel.Task, addr uint64) (string, error) {
	t.Proc.Lock()
	defer t.Proc.Unlock()
	return t.Proc.AS.CopyInString(uintptr(addr), loader.ArgStringMax)
}
