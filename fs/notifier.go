package fs

import "sync"

// Notifier is the wake-up side of a file with state: blocked calls and
// epoll watches register functions, and every change of state calls them.
// Its owner's lock guards it.
type Notifier struct {
	watchers map[int]func()
	next     int
}

// Changed returns the watch functions, which the owner calls after
// releasing its lock. The owner's lock is held.
func (n *Notifier) Changed() []func() {
	fns := make([]func(), 0, len(n.watchers))
	for _, fn := range n.watchers {
		fns = append(fns, fn)
	}
	return fns
}

// Add registers a watch function and returns its id. The owner's lock is held.
func (n *Notifier) Add(fn func()) int {
	if n.watchers == nil {
		n.watchers = map[int]func(){}
	}
	n.next++
	n.watchers[n.next] = fn
	return n.next
}

// Watch registers notify under the owner's lock mu and returns the
// function that drops it: the Watch of a Waitable file.
func (n *Notifier) Watch(mu sync.Locker, notify func()) (cancel func()) {
	mu.Lock()
	id := n.Add(notify)
	mu.Unlock()
	return func() {
		mu.Lock()
		n.Remove(id)
		mu.Unlock()
	}
}

// Remove drops a watch function. The owner's lock is held.
func (n *Notifier) Remove(id int) { delete(n.watchers, id) }

// Notify calls watch functions returned by Changed.
func Notify(fns []func()) {
	for _, fn := range fns {
		fn()
	}
}
