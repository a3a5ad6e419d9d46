package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Acct, sysAcct)
}

// sysAcct implements acct(2): with CAP_SYS_PACCT, the named file, which
// must be a regular file the caller may write (EACCES for any other), is
// opened for appending and gets a record of each process that ends;
// NULL turns accounting off.
func sysAcct(t *kernel.Task, a Args) (uint64, error) {
	if t.Proc.Caps.Effective&(1<<unix.CAP_SYS_PACCT) == 0 {
		return 0, unix.EPERM
	}
	if a[0] == 0 {
		t.SetAccounting(nil)
		return 0, nil
	}
	name, err := copyInString(t, a[0])
	if err != nil {
		return 0, err
	}
	p, err := resolve(t, unix.AT_FDCWD, name)
	if err != nil {
		return 0, err
	}
	c := t.Proc.Cred()
	if namesDirectory(name) {
		if _, err := lookupNamed(t, c, p, true, true); err != nil {
			return 0, err
		}
	}
	n, _, err := t.Proc.Root.Open(c, p, fs.OpenFlags{Follow: true, Append: true, Want: fs.MayWrite})
	if err != nil {
		return 0, err
	}
	if !n.Mode.IsRegular() || n.Generate != nil {
		return 0, unix.EACCES
	}
	if err := fs.ReadOnlyFS(n); err != nil {
		return 0, err
	}
	d := fs.NewDescription(t.Proc.Root.OpenNode(n, p), unix.O_WRONLY|unix.O_APPEND)
	d.IncRef() // the accounting's, dropped when another file or none is set
	t.SetAccounting(d)
	return 0, nil
}
