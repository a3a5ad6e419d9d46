package fs

import (
	"sync"

	"golang.org/x/sys/unix"
)

// epollMaxNests is Linux's EP_MAX_NESTS: at most this many epoll
// instances below the top one in any chain of instances watching
// instances, so that a wake-up or a poll passes through a bounded chain.
const epollMaxNests = 4

// epollNestMu guards every instance's nest, the graph of instances that
// watch instances. It is a leaf lock: nothing else is taken under it,
// so remove, which runs under an instance's mu, may take it.
var epollNestMu sync.Mutex

// epollNest is an instance's place in that graph: the instances it
// watches and those watching it, each with the number of watches (an
// instance added under two descriptor numbers is watched twice).
type epollNest struct {
	children map[*Epoll]int
	parents  map[*Epoll]int
}

// linkNested records that e watches child, unless that would close a
// loop (ELOOP) or make a chain deeper than epollMaxNests (ELOOP too, as
// Linux answers): the deepest chain below child, the new link and the
// longest chain above e.
func (e *Epoll) linkNested(child *Epoll) error {
	epollNestMu.Lock()
	defer epollNestMu.Unlock()
	if child.reaches(e, map[*Epoll]bool{}) {
		return unix.ELOOP
	}
	if child.chain(nestChildren, map[*Epoll]int{})+1+e.chain(nestParents, map[*Epoll]int{}) > epollMaxNests {
		return unix.ELOOP
	}
	if e.nest.children == nil {
		e.nest.children = map[*Epoll]int{}
	}
	if child.nest.parents == nil {
		child.nest.parents = map[*Epoll]int{}
	}
	e.nest.children[child]++
	child.nest.parents[e]++
	return nil
}

// unlinkNested drops one watch of child by e.
func (e *Epoll) unlinkNested(child *Epoll) {
	epollNestMu.Lock()
	defer epollNestMu.Unlock()
	if e.nest.children[child]--; e.nest.children[child] <= 0 {
		delete(e.nest.children, child)
	}
	if child.nest.parents[e]--; child.nest.parents[e] <= 0 {
		delete(child.nest.parents, e)
	}
}

// reaches reports whether target is e or below it; seen holds the
// instances already searched (a diamond is visited once).
func (e *Epoll) reaches(target *Epoll, seen map[*Epoll]bool) bool {
	if e == target {
		return true
	}
	if seen[e] {
		return false
	}
	seen[e] = true
	for c := range e.nest.children {
		if c.reaches(target, seen) {
			return true
		}
	}
	return false
}

// chain is the length of the longest chain of instances from e along
// step: below it (children) or above it (parents).
func (e *Epoll) chain(step func(*Epoll) map[*Epoll]int, memo map[*Epoll]int) int {
	if n, ok := memo[e]; ok {
		return n
	}
	n := 0
	for next := range step(e) {
		n = max(n, 1+next.chain(step, memo))
	}
	memo[e] = n
	return n
}

func nestChildren(e *Epoll) map[*Epoll]int { return e.nest.children }
func nestParents(e *Epoll) map[*Epoll]int  { return e.nest.parents }
