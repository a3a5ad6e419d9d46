package fs

import (
	"iter"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// MountNS is a mount namespace: the mounts its processes see, as Linux's
// mnt_namespace. A walk for a Cred uses its Mounts, the kernel's (a nil
// Cred) the tree's initial namespace. Every mount is private: nothing
// propagates between namespaces (MS_SHARED and the like change nothing).
// The tree's lock guards it.
type MountNS struct {
	tree   *Tree
	root   *Mount   // the tree's root, Linux's rootfs
	mounts []*Mount // in the order they were made
	// covering holds the mounts on each node they cover, bottom first; a
	// node reached at several paths (through bind mounts) may hold a
	// stack at each.
	covering map[*Node][]*Mount
	// procTargets are the procfs mount points, replaced on change (a
	// reader keeps a snapshot without the lock).
	procTargets []string
}

// newMountNS makes an empty namespace whose root mount has the id rootID
// and counts it among t's. t.mu is held.
func (t *Tree) newMountNS(rootID int) *MountNS {
	ns := &MountNS{tree: t, covering: map[*Node][]*Mount{},
		root: &Mount{ID: rootID, ParentID: rootID, Source: "rootfs", Target: "/", Type: "rootfs", Root: t.Root, RootPath: "/", Dev: devInitramfs}}
	t.mountNSs[ns] = struct{}{}
	return ns
}

// nsOf is the mount namespace c walks in.
func (t *Tree) nsOf(c *Cred) *MountNS {
	if c != nil && c.Mounts != nil {
		return c.Mounts
	}
	return t.initMounts
}

// orInitial is ns, or the initial namespace for nil.
func (t *Tree) orInitial(ns *MountNS) *MountNS {
	if ns == nil {
		return t.initMounts
	}
	return ns
}

// allMounts are the mounts of every namespace of t. t.mu is held.
func (t *Tree) allMounts() iter.Seq[*Mount] {
	return func(yield func(*Mount) bool) {
		for ns := range t.mountNSs {
			for _, m := range ns.mounts {
				if !yield(m) {
					return
				}
			}
		}
	}
}

// crossMounts is what a walk in ns finds at the path p, where the tree
// has the node n (which some namespace has mounted on): the root of the
// top mount ns has there, else n itself.
func (ns *MountNS) crossMounts(n *Node, p string) *Node {
	if m := ns.topAt(n, p); m != nil {
		return m.Root
	}
	return n
}

// topAt is the last mount ns made at p over the node covered, or nil.
func (ns *MountNS) topAt(covered *Node, p string) *Mount {
	stack := ns.covering[covered]
	for i := len(stack) - 1; i >= 0; i-- {
		if stack[i].Target == p {
			return stack[i]
		}
	}
	return nil
}

// add puts m on top of the mounts at its target, over covered.
func (ns *MountNS) add(m *Mount, covered *Node) {
	m.covered = covered
	covered.mountedOn++
	ns.mounts = append(ns.mounts, m)
	ns.covering[covered] = append(ns.covering[covered], m)
	if m.Type == "proc" {
		ns.indexProc()
	}
}

// remove takes mount j out of ns and returns it.
func (ns *MountNS) remove(j int) *Mount {
	m := ns.mounts[j]
	ns.mounts = slices.Delete(ns.mounts, j, j+1)
	stack := ns.covering[m.covered]
	stack = slices.Delete(stack, slices.Index(stack, m), slices.Index(stack, m)+1)
	if len(stack) == 0 {
		delete(ns.covering, m.covered)
	} else {
		ns.covering[m.covered] = stack
	}
	m.covered.mountedOn--
	if m.Type == "proc" {
		ns.indexProc()
	}
	return m
}

// indexProc rebuilds the list of procfs mount points.
func (ns *MountNS) indexProc() {
	var targets []string
	for _, m := range ns.mounts {
		if m.Type == "proc" {
			targets = append(targets, m.Target)
		}
	}
	ns.procTargets = targets
}

// mountAt is the last mount ns made at canon whose root n is, or nil.
func (ns *MountNS) mountAt(n *Node, canon string) *Mount {
	for i := len(ns.mounts) - 1; i >= 0; i-- {
		if m := ns.mounts[i]; m.Target == canon && m.Root == n {
			return m
		}
	}
	return nil
}

// mountOf is the mount that holds the path p (the root mount at worst):
// the last one made at the longest target that p is at or under.
func (ns *MountNS) mountOf(p string) *Mount {
	best := ns.root
	for _, m := range ns.mounts {
		if within(p, m.Target) && len(m.Target) >= len(best.Target) {
			best = m
		}
	}
	return best
}

// within reports whether the path p is dir or under it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// busyAt reports whether the node n, at the path p, is a mount point of
// ns or the root of one of its mounts (a bind mount's source), which
// rmdir and rename leave alone (EBUSY).
func (ns *MountNS) busyAt(n *Node, p string) bool {
	if n.mountedOn != 0 && ns.topAt(n, p) != nil {
		return true
	}
	for _, m := range ns.mounts {
		if m.Root == n {
			return true
		}
	}
	return false
}

// hasMountUnder reports whether a mount's target lies below p.
func (ns *MountNS) hasMountUnder(p string) bool {
	for _, m := range ns.mounts {
		if strings.HasPrefix(m.Target, p+"/") {
			return true
		}
	}
	return false
}

// detachMountsOn drops the mounts that any namespace has on n, whose
// name another namespace removed or moved, with the mounts inside them,
// as Linux's detach_mounts. t.mu is held.
func (t *Tree) detachMountsOn(n *Node) {
	for ns := range t.mountNSs {
		for len(ns.covering[n]) > 0 {
			m := ns.covering[n][0]
			for j := len(ns.mounts) - 1; j >= 0; j-- {
				if sub := ns.mounts[j]; sub == m || strings.HasPrefix(sub.Target, m.Target+"/") {
					t.detach(ns, j)
				}
			}
		}
	}
}

// CopyMounts makes a new mount namespace with a copy of each mount of
// from (nil: the initial namespace), each with a new id, as
// unshare(CLONE_NEWNS) and clone(CLONE_NEWNS) do.
func (t *Tree) CopyMounts(from *MountNS) *MountNS {
	t.mu.Lock()
	defer t.mu.Unlock()
	from = t.orInitial(from)
	t.nextMount++
	ns := t.newMountNS(t.nextMount + 1)
	ids := map[int]int{from.root.ID: ns.root.ID}
	for _, m := range from.mounts {
		t.nextMount++
		ids[m.ID] = t.nextMount + 1
	}
	for _, m := range from.mounts {
		c := *m
		c.ID, c.ParentID = ids[m.ID], ids[m.ParentID]
		ns.add(&c, m.covered)
	}
	return ns
}

// ReleaseMounts detaches every mount of ns, whose last process has gone:
// a file system no other namespace shows goes with it.
func (t *Tree) ReleaseMounts(ns *MountNS) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for j := len(ns.mounts) - 1; j >= 0; j-- {
		t.detach(ns, j)
	}
	delete(t.mountNSs, ns)
}

// PivotRoot implements pivot_root(2) in c's namespace, the caller being
// privileged (EPERM is the caller's to check first): it moves the mount
// of c's root directory to putOld and puts the mount at newRoot in its
// place, in Linux's order of checks: ENOTDIR (or the lookup's error) for
// either path, EBUSY when newRoot or putOld is on the root's mount,
// EINVAL when the root is no mount's root or is the namespace's own (the
// initramfs, as Linux refuses rootfs), when newRoot is no mount point,
// when putOld is not at or under newRoot or newRoot not under the root.
// It returns how a path of the namespace changes, which the caller
// applies to its processes' roots and working directories: the root
// itself names the new root (Linux's chroot_fs_refs), a path inside the
// new root loses its place under the root, one elsewhere under the old
// root moves under putOld.
func (t *Tree) PivotRoot(c *Cred, newRoot, putOld string) (rebase func(string) string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, newCanon, err := t.walk(c, newRoot, true, 0)
	if err == nil && !n.IsDir() {
		err = ErrNotDir
	}
	if err != nil {
		return nil, err
	}
	o, oldCanon, err := t.walk(c, putOld, true, 0)
	if err == nil && !o.IsDir() {
		err = ErrNotDir
	}
	if err != nil {
		return nil, err
	}
	ns := t.nsOf(c)
	rootCanon := "/"
	if r := c.resolve(); r != nil {
		rootCanon = r.root()
	}
	rootM, newM, oldM := ns.mountOf(rootCanon), ns.mountOf(newCanon), ns.mountOf(oldCanon)
	switch {
	case newM == rootM || oldM == rootM:
		return nil, unix.EBUSY
	case rootM == ns.root, rootM.Target != rootCanon, newM.Target != newCanon,
		!within(oldCanon, newCanon), !within(newCanon, rootCanon):
		return nil, unix.EINVAL
	}
	underRoot := rootM.covered // where the new root goes
	underOld := underRoot      // and the old one: on top of it for putOld = newRoot
	if oldCanon != newCanon {
		if underOld, err = t.mountPoint(ns, oldCanon); err != nil {
			return nil, err
		}
	}
	rel := oldCanon[len(newCanon):] // putOld inside the new root
	rebase = func(p string) string {
		switch {
		case within(p, newCanon):
			return rootCanon + p[len(newCanon):]
		case p == rootCanon:
			return rootCanon
		case within(p, rootCanon):
			return rootCanon + rel + p[len(rootCanon):]
		}
		return p
	}
	ns.remove(slices.Index(ns.mounts, newM))
	ns.remove(slices.Index(ns.mounts, rootM))
	for _, m := range ns.mounts {
		if m.Target == newCanon { // under the new root's mount: in the old root's tree
			m.Target = rootCanon + rel + newCanon[len(rootCanon):]
		} else {
			m.Target = rebase(m.Target)
		}
	}
	newM.Target, newM.ParentID = rootCanon, rootM.ParentID
	rootM.Target, rootM.ParentID = rootCanon+rel, oldM.ID
	ns.add(newM, underRoot)
	ns.add(rootM, underOld)
	ns.indexProc()
	return rebase, nil
}
