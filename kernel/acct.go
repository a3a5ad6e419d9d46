package kernel

import (
	"encoding/binary"
	"math"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
)

// BSD process accounting (acct(2), CONFIG_BSD_PROCESS_ACCT_V3): while a
// file is set, each process that ends appends a struct acct_v3 record
// to it before its parent can see it end, as Linux's kernel/acct.c.

// acctRecordSize is sizeof(struct acct_v3).
const acctRecordSize = 64

// acct_v3's ac_flag bits and version.
const (
	acctFork    = 0x01 // forked but never exec'd
	acctCore    = 0x08 // dumped core
	acctSignal  = 0x10 // killed by a signal
	acctVersion = 3    // little-endian: ACCT_BYTEORDER is 0
	acctHZ      = 100  // AHZ, the records' ticks per second
)

type accounting struct {
	mu   sync.Mutex
	file *fs.Description // nil: accounting is off
}

// SetAccounting makes d, a regular file open for writing, the accounting
// file, taking the caller's reference to it; nil turns accounting off.
// The file set before gets a last record, of the calling process as it
// is, as Linux's acct_pin_kill writes one, and its reference is dropped.
func (t *Task) SetAccounting(d *fs.Description) {
	k := t.Proc.k
	k.acct.mu.Lock()
	defer k.acct.mu.Unlock()
	old := k.acct.file
	k.acct.file = d
	if old != nil {
		appendRecord(old, t.Proc)
		old.DecRef()
	}
}

// account appends p's record to the accounting file, if one is set; p
// has exited and dropped its memory.
func (k *Kernel) account(p *Process) {
	k.acct.mu.Lock()
	defer k.acct.mu.Unlock()
	if d := k.acct.file; d != nil {
		appendRecord(d, p)
	}
}

// appendRecord writes p's record at the end of the accounting file d,
// which only the holders of acct.mu write.
func appendRecord(d *fs.Description, p *Process) {
	if nf, ok := d.NodeFile(); ok {
		rec := p.acctRecord()
		nf.WriteAt(rec[:], nf.Stat().Size)
	}
}

// acctRecord is p's struct acct_v3: once it ended, or as it is while it
// runs (no exit code).
func (p *Process) acctRecord() (b [acctRecordSize]byte) {
	k := p.k
	flags, termSig, core, parent := p.acctState()
	exit := uint32(p.status&0xff) << 8
	if termSig != 0 {
		flags |= acctSignal
		exit = uint32(termSig)
		if core {
			flags |= acctCore
			exit |= 0x80
		}
	}
	ppid := uint32(0)
	if parent != nil {
		ppid = uint32(parent.PID)
	}
	elapsed := k.Uptime() - p.start
	u := p.Usage()
	le := binary.LittleEndian
	b[0], b[1] = flags, acctVersion
	le.PutUint32(b[4:], exit)
	le.PutUint32(b[8:], p.UID)
	le.PutUint32(b[12:], p.GID)
	le.PutUint32(b[16:], uint32(p.PID))
	le.PutUint32(b[20:], ppid)
	le.PutUint32(b[24:], uint32(k.Now().Add(-elapsed).Unix()))
	le.PutUint32(b[28:], math.Float32bits(float32(acctTicks(elapsed))))
	le.PutUint16(b[32:], compT(acctTicks(u.User)))
	le.PutUint16(b[34:], compT(acctTicks(u.System)))
	le.PutUint16(b[44:], compT(u.MinorFaults))
	comm := p.mainThread.Comm()
	copy(b[48:63], comm)
	return b
}

// acctState reads what the record takes of p's signal state, under
// sigMu: AFORK, the signal that ended it, whether it dumped core, its
// parent.
func (p *Process) acctState() (flags byte, termSig unix.Signal, core bool, parent *Process) {
	p.k.sigMu.Lock()
	defer p.k.sigMu.unlockUnchanged()
	if !p.sig.execed {
		flags |= acctFork
	}
	return flags, p.sig.termSig, p.sig.coreDumped, p.parent
}

// acctTicks is d in AHZ ticks.
func acctTicks(d time.Duration) uint64 { return uint64(d / (time.Second / acctHZ)) }

// compT encodes v as a comp_t: a 13-bit mantissa and a base-8 exponent
// in 3 bits, rounded as Linux's encode_comp_t; too large saturates.
func compT(v uint64) uint16 {
	const mantissa, maxFract = 13, 1<<13 - 1
	exp, round := 0, false
	for v > maxFract {
		round = v&(1<<2) != 0
		v >>= 3
		exp++
	}
	if round {
		if v++; v > maxFract {
			v >>= 3
			exp++
		}
	}
	if exp > 7 {
		return 0xffff
	}
	return uint16(exp<<mantissa) + uint16(v)
}
