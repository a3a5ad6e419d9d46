package kernel

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/kernel/keys"
)

// Keys are the kernel's keys and keyrings (package keys): add_key(2),
// request_key(2) and keyctl(2) act on them as the calling task.
func (k *Kernel) Keys() *keys.Set { return k.keys }

// KeyCred is the task as the keys see it: its ids, whether it has
// CAP_SYS_ADMIN, and the keyrings its credentials hold.
func (t *Task) KeyCred() *keys.Cred {
	p := t.Proc
	return &keys.Cred{
		UID: p.UID, GID: p.GID, FSUID: p.FSUID, FSGID: p.FSGID, Groups: p.Groups,
		SysAdmin: p.Caps.Effective&(1<<unix.CAP_SYS_ADMIN) != 0,
		Thread:   &t.keyrings, Process: p.keyrings,
	}
}

// randomSerial is a random number for a key's serial.
func (k *Kernel) randomSerial() uint32 {
	var b [4]byte
	k.Random(b[:])
	return binary.LittleEndian.Uint32(b[:])
}
