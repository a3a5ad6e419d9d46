package syscall

import (
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Syslog, sysSyslog)
}

// sysSyslog implements syslog(2): the kernel's log, read into the buffer
// by the read actions.
func sysSyslog(t *kernel.Task, a Args) (uint64, error) {
	var output func([]byte) error
	if buf := a[1]; buf != 0 {
		output = func(b []byte) error { return copyOut(t, buf, b) }
	}
	n, err := t.Syslog(int(int32(a[0])), int(int32(a[2])), output)
	return uint64(n), err
}
