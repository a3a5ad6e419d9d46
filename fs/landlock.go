package fs

import (
	"io/fs"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

// Landlock (Linux's security/landlock): a process restricts itself with
// rulesets it builds; once restricted it keeps a domain, a stack of the
// rulesets' frozen copies (layers), which its children inherit and execve
// keeps. Every layer must grant an access that it handles.

// LandlockABI is the ABI version of Linux 6.12 (scoping is version 6).
const LandlockABI = 6

// Landlock's file-system access rights (LANDLOCK_ACCESS_FS_*).
const (
	LandlockExecute = 1 << iota
	LandlockWriteFile
	LandlockReadFile
	LandlockReadDir
	LandlockRemoveDir
	LandlockRemoveFile
	LandlockMakeChar
	LandlockMakeDir
	LandlockMakeReg
	LandlockMakeSock
	LandlockMakeFifo
	LandlockMakeBlock
	LandlockMakeSym
	LandlockRefer
	LandlockTruncate
	LandlockIoctlDev

	// LandlockFSAll are the rights ABI 6 knows.
	LandlockFSAll = 1<<16 - 1
	// LandlockFileRights are those a rule on a file (not a directory) may
	// grant.
	LandlockFileRights = LandlockExecute | LandlockWriteFile | LandlockReadFile | LandlockTruncate | LandlockIoctlDev
)

// Landlock's network rights (LANDLOCK_ACCESS_NET_*) and scopes
// (LANDLOCK_SCOPE_*).
const (
	LandlockBindTCP    = 1
	LandlockConnectTCP = 2
	LandlockNetAll     = 3

	LandlockScopeAbstractUnix = 1
	LandlockScopeSignal       = 2
	LandlockScopeAll          = 3
)

// LandlockMaxLayers is how many rulesets a domain stacks (E2BIG beyond).
const LandlockMaxLayers = 16

// landlockRuleCost is what one rule is charged: its map entry and key.
const landlockRuleCost = 64

// landlockRulesetCost is what a ruleset or layer is charged besides its rules.
const landlockRulesetCost = 256

// LandlockRuleset is a ruleset being built (landlock_create_ruleset,
// landlock_add_rule), open as an anonymous inode. Its rules hold the
// nodes they name, as Linux's landlock_object holds the inode. It has no
// position (lseek: ESPIPE).
type LandlockRuleset struct {
	HandledFS, HandledNet, Scoped uint64

	ino     uint64
	mu      sync.Mutex
	fs      map[*Node]uint64
	net     map[uint16]uint64
	charged int // guarded by mu; given back by Close
}

// NewLandlockRuleset makes a ruleset handling those rights and scopes:
// ENOMSG when it would handle nothing, ENOMEM past mm.Charged.
func NewLandlockRuleset(handledFS, handledNet, scoped uint64) (*LandlockRuleset, error) {
	if handledFS == 0 && handledNet == 0 && scoped == 0 {
		return nil, unix.ENOMSG
	}
	if mm.Charged.Charge(landlockRulesetCost) != nil {
		return nil, unix.ENOMEM
	}
	return &LandlockRuleset{HandledFS: handledFS, HandledNet: handledNet, Scoped: scoped,
		ino: nextIno.Add(1), fs: map[*Node]uint64{}, net: map[uint16]uint64{}, charged: landlockRulesetCost}, nil
}

// AddPathRule grants access beneath n (or to n, a file): EINVAL for a
// directory's right on a file. The caller has checked that access is
// some of the handled rights, before it looked at the descriptor of n,
// as Linux does.
func (r *LandlockRuleset) AddPathRule(n *Node, access uint64) error {
	if !n.IsDir() && access&^LandlockFileRights != 0 {
		return unix.EINVAL
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.chargeRule(r.fs[n] == 0); err != nil {
		return err
	}
	r.fs[n] |= access
	return nil
}

// AddPortRule grants access on a TCP port, as AddPathRule does a path.
func (r *LandlockRuleset) AddPortRule(port, access uint64) error {
	if access == 0 {
		return unix.ENOMSG
	}
	if access&^r.HandledNet != 0 || port > 0xffff {
		return unix.EINVAL
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.chargeRule(r.net[uint16(port)] == 0); err != nil {
		return err
	}
	r.net[uint16(port)] |= access
	return nil
}

// chargeRule charges a new rule (a right added to an existing one costs
// nothing) under r.mu.
func (r *LandlockRuleset) chargeRule(isNew bool) error {
	if !isNew {
		return nil
	}
	if mm.Charged.Charge(landlockRuleCost) != nil {
		return unix.ENOMEM
	}
	r.charged += landlockRuleCost
	return nil
}

// ReadTo refuses: a ruleset is neither read nor written (EINVAL).
func (r *LandlockRuleset) ReadTo(UserIO) (int64, error) { return 0, unix.EINVAL }

// WriteFrom refuses, as ReadTo.
func (r *LandlockRuleset) WriteFrom(UserIO) (int64, error) { return 0, unix.EINVAL }

// Stat is an anonymous inode's.
func (r *LandlockRuleset) Stat() Stat { return AnonStat(r.ino) }

// Path is what /proc/PID/fd shows, as Linux names the anonymous inode.
func (r *LandlockRuleset) Path() string { return "anon_inode:[landlock-ruleset]" }

// Close gives back the ruleset's charge; the layers made from it keep
// their own.
func (r *LandlockRuleset) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	mm.Charged.Uncharge(r.charged)
	r.charged = 0
	return nil
}

// LandlockDomain is one layer of a process's restrictions and, through
// parent, the layers below it. Its pointer is the layer's identity, as
// Linux's landlock_hierarchy: scoping compares them.
type LandlockDomain struct {
	parent                        *LandlockDomain
	layers                        int // this one and those below
	handledFS, handledNet, scoped uint64
	fs                            map[*Node]uint64
	net                           map[uint16]uint64
}

// Restrict stacks a copy of r on d (nil: unrestricted): E2BIG past
// LandlockMaxLayers, ENOMEM past mm.Charged. The layer's charge is given
// back when no process holds it any more.
func (r *LandlockRuleset) Restrict(d *LandlockDomain) (*LandlockDomain, error) {
	layers := 1
	if d != nil {
		layers = d.layers + 1
	}
	if layers > LandlockMaxLayers {
		return nil, unix.E2BIG
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cost := landlockRulesetCost + landlockRuleCost*(len(r.fs)+len(r.net))
	if mm.Charged.Charge(cost) != nil {
		return nil, unix.ENOMEM
	}
	nd := &LandlockDomain{parent: d, layers: layers, handledFS: r.HandledFS, handledNet: r.HandledNet, scoped: r.Scoped,
		fs: make(map[*Node]uint64, len(r.fs)), net: make(map[uint16]uint64, len(r.net))}
	for n, a := range r.fs {
		nd.fs[n] = a
	}
	for p, a := range r.net {
		nd.net[p] = a
	}
	runtime.AddCleanup(nd, mm.Charged.Uncharge, cost)
	return nd, nil
}

// fsGranted is what d's own layer grants on the nodes of a path (a node
// and its ancestors): REFER stays denied in every layer until granted.
func (d *LandlockDomain) fsGranted(nodes []*Node) uint64 {
	var got uint64
	for _, n := range nodes {
		got |= d.fs[n]
	}
	return got
}

// allows reports whether every layer of d grants what it handles of
// access on the path whose nodes are given (a node and its ancestors).
func (d *LandlockDomain) allows(nodes []*Node, access uint64) bool {
	for l := d; l != nil; l = l.parent {
		if need := access & (l.handledFS | LandlockRefer); need != 0 && need&^l.fsGranted(nodes) != 0 {
			return false
		}
	}
	return true
}

// AllowsPort reports whether every layer of d that handles access grants
// it on the TCP port (a nil d allows all).
func (d *LandlockDomain) AllowsPort(port uint16, access uint64) bool {
	for l := d; l != nil; l = l.parent {
		if l.handledNet&access != 0 && l.net[port]&access == 0 {
			return false
		}
	}
	return true
}

// Scopes reports whether d, restricted by scope, is kept from reaching a
// process or socket of domain other: whenever one of d's layers with
// the scope is not also one of other's, as Linux's domain_is_scoped.
func (d *LandlockDomain) Scopes(other *LandlockDomain, scope uint64) bool {
	for l := d; l != nil; l = l.parent {
		if l.scoped&scope == 0 {
			continue
		}
		o := other
		for o != nil && o.layers > l.layers {
			o = o.parent
		}
		if o != l {
			return true
		}
	}
	return false
}

// Layers is how many rulesets d stacks (0 for nil).
func (d *LandlockDomain) Layers() int {
	if d == nil {
		return 0
	}
	return d.layers
}

// landlockMake is the right that creating a node of n's kind needs.
func landlockMake(m fs.FileMode) uint64 {
	switch {
	case m.IsDir():
		return LandlockMakeDir
	case m&fs.ModeSymlink != 0:
		return LandlockMakeSym
	case m&fs.ModeSocket != 0:
		return LandlockMakeSock
	case m&fs.ModeNamedPipe != 0:
		return LandlockMakeFifo
	case m&fs.ModeCharDevice != 0:
		return LandlockMakeChar
	case m&fs.ModeDevice != 0:
		return LandlockMakeBlock
	}
	return LandlockMakeReg
}

// landlockRemove is the right that removing n needs.
func landlockRemove(n *Node) uint64 {
	if n.IsDir() {
		return LandlockRemoveDir
	}
	return LandlockRemoveFile
}

// landlocked is c's domain, nil for the kernel or an unrestricted caller:
// what keeps walks without a domain free of the checks below.
func (c *Cred) landlocked() *LandlockDomain {
	if c == nil {
		return nil
	}
	return c.Landlock
}

// pathNodes are the nodes from the root down to the physical path p in
// c's mount namespace (t.mu held), which Landlock's rules on any of them
// apply to.
func (t *Tree) pathNodes(c *Cred, p string) []*Node {
	ns := t.nsOf(c)
	nodes := []*Node{t.Root}
	cur := t.Root
	walked := ""
	for name := range strings.SplitSeq(CleanPath(p), "/") {
		if name == "" || !cur.IsDir() {
			continue
		}
		next, ok := cur.children()[name]
		if !ok {
			break
		}
		walked += "/" + name
		if next.mountedOn != 0 {
			next = ns.crossMounts(next, walked)
		}
		nodes = append(nodes, next)
		cur = next
	}
	return nodes
}

// landlockCheck is EACCES unless c's domain grants access on the
// physical path p (t.mu held).
func (t *Tree) landlockCheck(c *Cred, p string, access uint64) error {
	d := c.landlocked()
	if d == nil || access == 0 || d.allows(t.pathNodes(c, p), access) {
		return nil
	}
	return unix.EACCES
}

// LandlockCheck is landlockCheck for the system call layer (truncate(2),
// execve), with p resolved as c's walks resolve it.
func (t *Tree) LandlockCheck(c *Cred, p string, access uint64) error {
	if c.landlocked() == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.landlockCheck(c, t.physical(c, p), access)
}

// LandlockDenied are the rights of access that c's domain does not grant
// on p (none without a domain), for the rights a description keeps.
func (t *Tree) LandlockDenied(c *Cred, p string, access uint64) uint64 {
	d := c.landlocked()
	if d == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	nodes := t.pathNodes(c, t.physical(c, p))
	var denied uint64
	for bit := uint64(1); bit <= access; bit <<= 1 {
		if access&bit != 0 && !d.allows(nodes, bit) {
			denied |= bit
		}
	}
	return denied
}

// landlockOpen is the right opening n with want (MayRead, MayWrite) and
// trunc needs.
func landlockOpen(n *Node, want int, trunc bool) uint64 {
	var access uint64
	if want&MayRead != 0 {
		access |= LandlockReadFile
		if n.IsDir() {
			access = LandlockReadDir
		}
	}
	if want&MayWrite != 0 {
		access |= LandlockWriteFile
	}
	if trunc && n.Mode.IsRegular() {
		access |= LandlockTruncate
	}
	return access
}

// landlockRefer checks that c may move or link n (whose parent directory
// is the physical path from) into the directory to, where other is the
// entry it replaces or, for an exchange, moves back into from; removing
// says the old names go (rename). Within one directory only the make and
// remove rights count. Otherwise every layer must grant REFER on both
// sides and leave what moves with no right it did not have (EXDEV), after
// EACCES for a missing make or remove right, as Linux's
// current_check_refer_path (t.mu held).
func (t *Tree) landlockRefer(c *Cred, n *Node, from, to string, other *Node, exchange, removing bool) error {
	d := c.landlocked()
	var need1, need2 uint64 // on from, on to
	need2 = landlockMake(n.Mode)
	if exchange {
		need1 = landlockMake(other.Mode)
	}
	if removing {
		need1 |= landlockRemove(n)
		if other != nil {
			need2 |= landlockRemove(other)
		}
	}
	if from == to {
		return t.landlockCheck(c, to, need1|need2)
	}
	fromNodes, toNodes := t.pathNodes(c, from), t.pathNodes(c, to)
	if !d.allows(fromNodes, need1) || !d.allows(toNodes, need2) {
		return unix.EACCES
	}
	for l := d; l != nil; l = l.parent {
		src, dst := l.fsGranted(fromNodes), l.fsGranted(toNodes)
		if src&dst&LandlockRefer == 0 {
			return unix.EXDEV
		}
		handled := l.handledFS &^ LandlockRefer
		if own := l.fs[n]; handled&(dst|own)&^(src|own) != 0 {
			return unix.EXDEV
		}
		if exchange {
			if own := l.fs[other]; handled&(src|own)&^(dst|own) != 0 {
				return unix.EXDEV
			}
		}
	}
	return nil
}

// physical is p with every link resolved in c's mount namespace (p
// itself when it does not resolve), the path Landlock's rules are looked
// up along (t.mu held).
func (t *Tree) physical(c *Cred, p string) string {
	if _, phys, err := t.walkNS(t.nsOf(c), nil, p, true, 0); err == nil {
		return phys
	}
	return p
}
