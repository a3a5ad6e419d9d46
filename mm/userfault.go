package mm

import "errors"

// UffdContext is the userfaultfd a range is registered with (the kernel's
// file). The address space only compares it and hands it back in a
// Userfault; SigBus says its faults raise SIGBUS instead of waiting
// (UFFD_FEATURE_SIGBUS).
type UffdContext interface{ SigBus() bool }

// UffdMissing is the one registration mode served: a fault on an absent
// page of the range is the handler's (UFFDIO_REGISTER_MODE_MISSING).
const UffdMissing = 1

// Userfault is the error Fault returns for an absent page of a range
// registered for missing faults: the faulting thread waits for the
// context's handler to resolve it, then faults again.
type Userfault struct {
	Ctx   UffdContext
	Addr  uintptr // where in the page
	Write bool
}

func (*Userfault) Error() string { return "page fault for userfaultfd" }

// ErrPoisoned is an access to a page that UFFDIO_POISON marked: SIGBUS for
// a fault, EFAULT for a system call.
var ErrPoisoned = errors.New("poisoned page")

// userfault is what a fault at addr on the absent page va of v, a VMA
// holding a registration or poisoned pages, gives instead of a frame; nil
// when the page is to be backed as usual.
func (as *AddressSpace) userfault(v *VMA, va, addr uintptr, access Access) error {
	if _, ok := as.poisoned[va]; ok {
		return ErrPoisoned
	}
	if v.Uffd == nil || v.UffdMode&UffdMissing == 0 {
		return nil
	}
	if v.Uffd.SigBus() {
		return ErrBus
	}
	return &Userfault{Ctx: v.Uffd, Addr: addr, Write: access == Write}
}

// UffdAbsent reports whether va is still an absent page of a range
// registered with ctx for missing faults: a thread about to wait for it
// looks again after queueing, so that it misses no wake.
func (as *AddressSpace) UffdAbsent(ctx UffdContext, va uintptr) bool {
	va = pageDown(va)
	v := as.vmas.find(va)
	_, poisoned := as.poisoned[va]
	return v != nil && v.Uffd == ctx && v.UffdMode&UffdMissing != 0 && !poisoned && as.pte(va) == nil
}

// uffdRange checks a range as userfaultfd's ioctls do (Linux's
// validate_range): page-aligned, not empty, within user memory.
func uffdRange(addr, length uintptr) (start, end uintptr, err error) {
	if addr%PageSize != 0 || length%PageSize != 0 || length == 0 || addr < UserMin ||
		addr >= MaxUserVA || length > MaxUserVA-addr {
		return 0, 0, ErrInvalid
	}
	return addr, addr + length, nil
}

// uffdCapable reports whether v can be registered: private anonymous
// memory is the only kind served.
func uffdCapable(v *VMA) bool { return v.Shared == nil && v.Cache == nil }

// UffdRegister registers [addr, addr+length) with ctx for mode, as
// UFFDIO_REGISTER: ErrInvalid when no VMA meets the range or for memory
// that cannot be registered, ErrBusy for a range another
// context holds; holes are skipped.
func (as *AddressSpace) UffdRegister(ctx UffdContext, addr, length uintptr, mode uint8) error {
	start, end, err := uffdRange(addr, length)
	if err != nil {
		return err
	}
	found := false
	var refused error
	as.eachIn(start, end, func(v *VMA) {
		found = true
		switch {
		case refused != nil:
		case !uffdCapable(v):
			refused = ErrInvalid
		case v.NoWrite:
			refused = ErrAccess
		case v.Uffd != nil && v.Uffd != ctx:
			refused = ErrBusy
		}
	})
	switch {
	case !found:
		return ErrInvalid
	case refused != nil:
		return refused
	}
	as.setFlags(start, end, func(v *VMA) { v.Uffd, v.UffdMode = ctx, mode })
	return nil
}

// UffdUnregister ends ctx's registration of [addr, addr+length), as
// UFFDIO_UNREGISTER, with the errors of UffdRegister.
func (as *AddressSpace) UffdUnregister(ctx UffdContext, addr, length uintptr) error {
	start, end, err := uffdRange(addr, length)
	if err != nil {
		return err
	}
	found := false
	var refused error
	as.eachIn(start, end, func(v *VMA) {
		found = true
		if !uffdCapable(v) {
			refused = ErrInvalid
		}
	})
	switch {
	case !found:
		return ErrInvalid
	case refused != nil:
		return refused
	}
	as.uffdClear(ctx, start, end)
	return nil
}

// UffdRelease ends every registration of ctx: its file was closed.
func (as *AddressSpace) UffdRelease(ctx UffdContext) {
	as.uffdClear(ctx, UserMin, MaxUserVA)
}

func (as *AddressSpace) uffdClear(ctx UffdContext, start, end uintptr) {
	var owned []VMA
	as.eachIn(start, end, func(v *VMA) {
		if v.Uffd == ctx {
			owned = append(owned, *v)
		}
	})
	for _, v := range owned {
		as.setFlags(max(v.Start, start), min(v.End, end), func(v *VMA) {
			if v.Uffd == ctx {
				v.Uffd, v.UffdMode = nil, 0
			}
		})
	}
}

// UffdFill is how UffdResolve fills an absent page.
type UffdFill int

const (
	UffdCopy   UffdFill = iota // with the bytes given (UFFDIO_COPY)
	UffdZero                   // with zeros (UFFDIO_ZEROPAGE)
	UffdPoison                 // with a mark that faults SIGBUS (UFFDIO_POISON)
)

// UffdResolve fills the absent page va of a VMA registered with ctx, as
// UFFDIO_COPY, ZEROPAGE and POISON do for each page (Linux's
// mfill_atomic): ErrNotRegistered (ENOENT) when the page is not in such a
// VMA, ErrExists when the page is there. data is the page's bytes for
// UffdCopy.
func (as *AddressSpace) UffdResolve(ctx UffdContext, va uintptr, fill UffdFill, data *[PageSize]byte) error {
	v := as.vmas.find(va)
	if v == nil || v.Uffd != ctx {
		return ErrNotRegistered
	}
	if _, ok := as.poisoned[va]; ok || as.pte(va) != nil {
		return ErrExists
	}
	if fill == UffdPoison {
		if as.poisoned == nil {
			as.poisoned = map[uintptr]struct{}{}
		}
		as.poisoned[va] = struct{}{}
		return nil
	}
	pa := as.mem.AllocFrame()
	if pa == 0 {
		return ErrNoMemory
	}
	frame := (*[PageSize]byte)(Ptr(pa))
	if fill == UffdCopy {
		*frame = *data
	} else {
		clear(frame[:])
	}
	if v.Perm&PTEExec != 0 {
		as.mem.SyncICache(as.root)
	}
	if !as.mapPage(va, pa, as.leafBits(v, pa, false)) {
		as.mem.FreeFrame(pa)
		return ErrNoMemory
	}
	return nil
}

// ErrNotRegistered: the page is not in a range of the context (ENOENT).
var ErrNotRegistered = errors.New("not in a registered range")

// UffdMove moves the page at src to the absent page dst of a VMA
// registered with ctx (UFFDIO_MOVE): both private anonymous memory, the
// source's frame this address space's alone (ErrBusy when fork shares
// it). ErrNotRegistered for a destination not registered with ctx, or a
// source that is absent (unless holes are allowed: then nothing moves)
// or not private anonymous; ErrExists when dst is there.
func (as *AddressSpace) UffdMove(ctx UffdContext, dst, src uintptr, allowHoles bool) error {
	dv, sv := as.vmas.find(dst), as.vmas.find(src)
	if dv == nil || dv.Uffd != ctx || sv == nil || !uffdCapable(sv) {
		return ErrNotRegistered
	}
	if _, ok := as.poisoned[dst]; ok || as.pte(dst) != nil {
		return ErrExists
	}
	e := as.pte(src)
	switch {
	case e == nil && allowHoles:
		return nil
	case e == nil:
		return ErrNotRegistered
	case as.refs.shared(pteAddr(*e)):
		return ErrBusy
	}
	pa := pteAddr(*e)
	if !as.mapPage(dst, pa, as.leafBits(dv, pa, false)) {
		return ErrNoMemory
	}
	*e = 0
	as.mem.FlushPage(as.root, src)
	return nil
}
