package mm

// vmaTree holds an address space's VMAs ordered by start address in a
// treap: a binary search tree by Start whose random priorities keep it
// balanced in expectation, so lookups, inserts and the split and join that
// cut a range out cost O(log n), and removing k VMAs costs O(k log n).
type vmaTree struct {
	root  *vmaNode
	count int
	seed  uint64
}

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
	if v := t.floor(va); v != nil && va < v.End {
		return v
	}
	return nil
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
