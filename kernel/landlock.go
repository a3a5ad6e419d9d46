package kernel

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
)

// Landlock domains are the process's, as its other credentials are here
// (Linux keeps them per thread). fork copies the pointer and execve keeps
// it: a domain never changes, it is only replaced by one stacked on it.

// LandlockMayRestrict is restrict_self's first check, as Linux's:
// no_new_privs or CAP_SYS_ADMIN (EPERM).
func (t *Task) LandlockMayRestrict() error {
	if !t.Settings.NoNewPrivs.Load() && t.Proc.Caps.Effective&(1<<unix.CAP_SYS_ADMIN) == 0 {
		return unix.EPERM
	}
	return nil
}

// LandlockRestrict stacks ruleset on the process's domain.
func (t *Task) LandlockRestrict(ruleset *fs.LandlockRuleset) error {
	p := t.Proc
	for {
		old := p.landlock.Load()
		d, err := ruleset.Restrict(old)
		if err != nil {
			return err
		}
		if p.landlock.CompareAndSwap(old, d) {
			return nil
		}
	}
}

// Landlock is the process's domain (nil: unrestricted).
func (p *Process) Landlock() *fs.LandlockDomain { return p.landlock.Load() }
