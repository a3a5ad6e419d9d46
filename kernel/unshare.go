package kernel

import "golang.org/x/sys/unix"

// The namespaces clone(2) and unshare(2) name.
const namespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWNET |
	unix.CLONE_NEWPID | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME | unix.CLONE_NEWUSER

// Unshare implements unshare(2) as Linux's ksys_unshare on a kernel
// built with mount, UTS, IPC, time and PID namespaces only (namespace.go;
// a new PID namespace is for the caller's children): the descriptor table,
// and the cwd and umask (CLONE_FS, which a new mount namespace implies),
// are copied when another process shares them, and there are
// no System V semaphores (CLONE_SYSVSEM); the thread group,
// signal handlers and memory (CLONE_THREAD, SIGHAND, VM) can only be
// unshared when nothing shares them; a namespace is EPERM without
// privilege (a user namespace needs none), and EINVAL for the kinds with
// one instance.
func (t *Task) Unshare(flags uint64) error {
	if flags&unix.CLONE_NEWUSER != 0 {
		flags |= unix.CLONE_THREAD | unix.CLONE_FS
	}
	if flags&unix.CLONE_VM != 0 {
		flags |= unix.CLONE_SIGHAND
	}
	if flags&unix.CLONE_SIGHAND != 0 {
		flags |= unix.CLONE_THREAD
	}
	if flags&unix.CLONE_NEWNS != 0 {
		flags |= unix.CLONE_FS
	}
	if flags&^(unix.CLONE_THREAD|unix.CLONE_FS|unix.CLONE_SIGHAND|unix.CLONE_VM|unix.CLONE_FILES|
		unix.CLONE_SYSVSEM|namespaceFlags) != 0 {
		return unix.EINVAL
	}
	p := t.Proc
	if flags&(unix.CLONE_THREAD|unix.CLONE_SIGHAND|unix.CLONE_VM) != 0 && len(tasksOf(p)) > 1 {
		return unix.EINVAL
	}
	if flags&unix.CLONE_VM != 0 {
		vm := p.vm.Load()
		vm.mu.Lock()
		users := vm.users
		vm.mu.Unlock()
		if users > 1 {
			return unix.EINVAL
		}
	}
	switch {
	case flags&unix.CLONE_NEWUSER != 0:
		return unix.EINVAL
	case flags&namespaceFlags != 0 && p.Caps.Effective&(1<<unix.CAP_SYS_ADMIN) == 0:
		return unix.EPERM
	case flags&namespaceFlags&^newNamespaceFlags != 0:
		return unix.EINVAL
	}
	if flags&unix.CLONE_FILES != 0 {
		if err := p.UnshareFiles(); err != nil {
			return err
		}
	}
	if flags&unix.CLONE_FS != 0 {
		p.unshareFS()
	}
	if flags&newNamespaceFlags != 0 {
		return p.unshareNamespaces(flags)
	}
	return nil
}
