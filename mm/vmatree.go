package mm

// vmaTree holds an address space's VMAs ordered by start address in a
// treap: a binary search tree by Start whose random priorities keep it
// balanced in expectation, so lookups, inserts and the split and join that
// cut a range out cost O(log n), and removing k VMAs costs O(k log n).
type vmaTree struct {
	root  *vmaNode
	count int
	seed  uint64
	// recent remembers the VMAs of the pages find was last asked about,
	// tried before the tree: a program's system calls copy to and from
	// the same few pages (its stack, its buffers) again and again, as
	// Linux's per-thread vmacache found. A page's set is its number
	// modulo recentSets, and each set holds two VMAs, the latest found
	// first, so that two busy pages of one set (nginx's stack and heap
	// were) do not push each other out. A node cut out of the tree leaves
	// them all (cut); one changed in place stays true, find reading its
	// bounds anew.
	recent [recentSets][2]*vmaNode
}

// recentSets is how many sets of pages find remembers the VMAs of.
const recentSets = 8

type vmaNode struct {
	VMA
	prio        uint64
	left, right *vmaNode
}

func (t *vmaTree) priority() uint64 {
	// xorshift64: any well-mixed sequence keeps the treap balanced.
	if t.seed == 0 {
		t.seed = 0x9e3779b97f4a7c15
	}
	t.seed ^= t.seed << 13
	t.seed ^= t.seed >> 7
	t.seed ^= t.seed << 17
	return t.seed
}

// split cuts n into the nodes with Start < key and those with Start >= key.
func split(n *vmaNode, key uintptr) (lo, hi *vmaNode) {
	if n == nil {
		return nil, nil
	}
	if n.Start < key {
		n.right, hi = split(n.right, key)
		return n, hi
	}
	lo, n.left = split(n.left, key)
	return lo, n
}

// join joins two treaps whose keys are all smaller in lo than in hi.
func join(lo, hi *vmaNode) *vmaNode {
	switch {
	case lo == nil:
		return hi
	case hi == nil:
		return lo
	case lo.prio > hi.prio:
		lo.right = join(lo.right, hi)
		return lo
	default:
		hi.left = join(lo, hi.left)
		return hi
	}
}

// insert adds v, which overlaps no VMA in the tree.
func (t *vmaTree) insert(v VMA) {
	lo, hi := split(t.root, v.Start)
	t.root = join(join(lo, &vmaNode{VMA: v, prio: t.priority()}), hi)
	t.count++
}

// cut removes the VMAs whose Start lies in [start, end) and returns them
// in address order.
func (t *vmaTree) cut(start, end uintptr) []VMA {
	lo, rest := split(t.root, start)
	mid, hi := split(rest, end)
	t.root = join(lo, hi)
	t.recent = [recentSets][2]*vmaNode{}
	var out []VMA
	walk(mid, func(v *VMA) bool { out = append(out, *v); return true })
	t.count -= len(out)
	return out
}

// floor returns the VMA with the greatest Start <= va.
func (t *vmaTree) floor(va uintptr) *VMA {
	var best *VMA
	for n := t.root; n != nil; {
		if n.Start <= va {
			best = &n.VMA
			n = n.right
		} else {
			n = n.left
		}
	}
	return best
}

// ceil returns the VMA with the least Start >= va.
func (t *vmaTree) ceil(va uintptr) *VMA {
	var best *VMA
	for n := t.root; n != nil; {
		if n.Start >= va {
			best = &n.VMA
			n = n.left
		} else {
			n = n.right
		}
	}
	return best
}

// find returns the VMA containing va.
func (t *vmaTree) find(va uintptr) *VMA {
	set := &t.recent[va/PageSize%recentSets]
	if n := set[0]; n != nil && n.Start <= va && va < n.End {
		return &n.VMA
	}
	if n := set[1]; n != nil && n.Start <= va && va < n.End {
		set[0], set[1] = n, set[0]
		return &n.VMA
	}
	var best *vmaNode
	for n := t.root; n != nil; {
		if n.Start <= va {
			best, n = n, n.right
		} else {
			n = n.left
		}
	}
	if best == nil || va >= best.End {
		return nil
	}
	set[0], set[1] = best, set[0]
	return &best.VMA
}

// each calls fn on every VMA in address order until fn returns false.
func (t *vmaTree) each(fn func(*VMA) bool) { walk(t.root, fn) }

func walk(n *vmaNode, fn func(*VMA) bool) bool {
	for n != nil {
		if !walk(n.left, fn) || !fn(&n.VMA) {
			return false
		}
		n = n.right
	}
	return true
}
