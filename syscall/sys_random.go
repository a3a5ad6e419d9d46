package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/kernel"
)

// random(4)'s ioctls on /dev/random and /dev/urandom (linux/random.h).
const (
	rndGetEntCnt   = 0x80045200 // _IOR('R', 0x00, int)
	rndAddToEntCnt = 0x40045201 // _IOW('R', 0x01, int)
	rndAddEntropy  = 0x40085203 // _IOW('R', 0x03, int[2])
	rndZapEntCnt   = 0x5204     // _IO('R', 0x04)
	rndClearPool   = 0x5206     // _IO('R', 0x06)
	rndReseedCRNG  = 0x5207     // _IO('R', 0x07)
)

// entropyBits is the input pool's entropy as Linux (5.18 on) reports it
// once its generator is seeded: always the pool's full 256 bits. This
// kernel's generator is seeded before the first process runs.
const entropyBits = 256

// randomIoctl serves random(4)'s ioctls. Entropy a privileged caller
// adds is accepted and counts for nothing: the count is full already.
func randomIoctl(t *kernel.Task, req, arg uint64) (uint64, error) {
	if req == rndGetEntCnt {
		return 0, copyOutStruct(t, arg, int32(entropyBits))
	}
	switch req {
	case rndAddToEntCnt, rndAddEntropy, rndZapEntCnt, rndClearPool, rndReseedCRNG:
	default:
		return 0, unix.EINVAL
	}
	if t.Proc.Caps.Effective&(1<<unix.CAP_SYS_ADMIN) == 0 {
		return 0, unix.EPERM
	}
	if req == rndAddToEntCnt || req == rndAddEntropy {
		var count int32
		if err := copyInStruct(t, arg, &count); err != nil {
			return 0, err
		}
		if count < 0 {
			return 0, unix.EINVAL
		}
	}
	return 0, nil
}
