package fs

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/mm"
)

// inotify: an instance (a File) keeps watches on nodes and a queue of
// events. A tree keeps every watch on its nodes (notifyTable), and its
// operations report what happened to a node, and to the directory it
// was named in, with Tree.fsnotify; with no watch in the tree that costs
// one atomic load. Events are queued as Linux's inotify queues them: an
// event equal to the last one queued merges with it, a queue at
// max_queued_events ends with one IN_Q_OVERFLOW, and each queued event is
// charged to mm.Charged (a failed charge overflows too).

// NotifyLimits are a notification family's limits (/proc/sys/fs/inotify,
// /proc/sys/fs/fanotify), which root sets: the events one instance
// queues, and the instances and watches (marks) each user holds.
type NotifyLimits struct {
	MaxQueuedEvents, MaxUserInstances, MaxUserWatches atomic.Int64
	names                                             [3]string // in /proc, in that order
}

// Linux's defaults of the inotify limits.
const (
	inotifyDefaultQueuedEvents  = 16384
	inotifyDefaultUserInstances = 128
	inotifyDefaultUserWatches   = 8192
)

// setNotifyLimits gives l its names and their values.
func setNotifyLimits(l *NotifyLimits, names [3]string, queued, instances, watches int64) {
	l.names = names
	l.MaxQueuedEvents.Store(queued)
	l.MaxUserInstances.Store(instances)
	l.MaxUserWatches.Store(watches)
}

// Names are the limits' names in /proc.
func (l *NotifyLimits) Names() []string { return l.names[:] }

func (l *NotifyLimits) byName(name string) *atomic.Int64 {
	switch name {
	case l.names[0]:
		return &l.MaxQueuedEvents
	case l.names[1]:
		return &l.MaxUserInstances
	}
	return &l.MaxUserWatches
}

// Setting is the limit of that name, as its /proc file shows it.
func (l *NotifyLimits) Setting(name string) string {
	return strconv.FormatInt(l.byName(name).Load(), 10)
}

// Set sets the limit of that name from what root wrote: a decimal int
// from 0 up, as Linux's proc_dointvec_minmax with its floor of zero;
// EINVAL otherwise.
func (l *NotifyLimits) Set(name string, b []byte) error {
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 32)
	if err != nil || n < 0 {
		return unix.EINVAL
	}
	l.byName(name).Store(n)
	return nil
}

// InotifyLimits are t's inotify limits.
func (t *Tree) InotifyLimits() *NotifyLimits { return &t.notify.limits }

// FanotifyLimits are t's fanotify limits.
func (t *Tree) FanotifyLimits() *NotifyLimits { return &t.notify.fanotifyLimits }

// inotifyEventCost is what a queued event is charged besides its name:
// Linux's struct inotify_event_info.
const inotifyEventCost = 64

// notifyTable is a tree's inotify watches, by node. Lock order: mu, then
// an instance's mu.
type notifyTable struct {
	mu      sync.Mutex
	byNode  map[*Node][]*inotifyWatch
	count   atomic.Int64 // watches in the tree
	cookie  uint32       // the last rename's cookie
	perUser map[uint32]*inotifyUsage
	limits  NotifyLimits
	dnotify map[*Node][]*dnotifyMark // dnotify.go; counted in count too
	// fanotify.go's marks, counted in count too, and apart: all of
	// them, and those on mounts (whose events look the mount up).
	fanotify                      map[FanotifyTarget][]*fanotifyMark
	fanotifyMarks, fanotifyMounts atomic.Int64
	fanotifyLimits                NotifyLimits
}

// inotifyUsage is what one user holds: inotify instances and watches,
// fanotify groups and marks.
type inotifyUsage struct{ instances, watches, fanGroups, fanMarks int }

type inotifyWatch struct {
	in   *Inotify
	wd   int32
	node *Node
	mask uint32
}

type inotifyEvent struct {
	wd                 int32
	mask, cookie       uint32
	name               string
	size, chargedBytes int
}

// Inotify is an inotify instance (inotify_init1).
type Inotify struct {
	tree *Tree
	uid  uint32
	ino  uint64

	// readMu keeps one read between its look at the queue and its take
	// (ReadPeeked), as Linux takes each event off under the group's
	// lock.
	readMu   sync.Mutex
	mu       sync.Mutex // under the tree's notifyTable.mu
	queue    []inotifyEvent
	queued   int // bytes a read would return
	overflow bool
	watches  map[int32]*inotifyWatch
	byNode   map[*Node]*inotifyWatch
	lastWD   int32
	notifier Notifier
}

// NewInotify makes an instance watching t's nodes for user uid: EMFILE
// past max_user_instances.
func NewInotify(t *Tree, uid uint32) (*Inotify, error) {
	nt := &t.notify
	nt.mu.Lock()
	defer nt.mu.Unlock()
	u := nt.user(uid)
	if int64(u.instances) >= nt.limits.MaxUserInstances.Load() {
		return nil, unix.EMFILE
	}
	u.instances++
	return &Inotify{tree: t, uid: uid, ino: nextIno.Add(1), watches: map[int32]*inotifyWatch{}, byNode: map[*Node]*inotifyWatch{}}, nil
}

// user returns uid's usage; mu is held.
func (nt *notifyTable) user(uid uint32) *inotifyUsage {
	if nt.perUser == nil {
		nt.perUser = map[uint32]*inotifyUsage{}
		nt.byNode = map[*Node][]*inotifyWatch{}
	}
	u := nt.perUser[uid]
	if u == nil {
		u = &inotifyUsage{}
		nt.perUser[uid] = u
	}
	return u
}

// AddWatch watches n for the events in mask (IN_MASK_ADD: added to the
// watch's mask; IN_MASK_CREATE: EEXIST if n is watched already) and
// returns the watch descriptor, the same for the same node.
func (in *Inotify) AddWatch(n *Node, mask uint32) (int32, error) {
	nt := &in.tree.notify
	nt.mu.Lock()
	defer nt.mu.Unlock()
	in.mu.Lock()
	defer in.mu.Unlock()
	events := mask & unix.IN_ALL_EVENTS
	if w := in.byNode[n]; w != nil {
		if mask&unix.IN_MASK_CREATE != 0 {
			return 0, unix.EEXIST
		}
		if mask&unix.IN_MASK_ADD != 0 {
			events |= w.mask & unix.IN_ALL_EVENTS
		}
		w.mask = events | mask&(unix.IN_ONESHOT|unix.IN_EXCL_UNLINK)
		return w.wd, nil
	}
	u := nt.user(in.uid)
	if int64(u.watches) >= nt.limits.MaxUserWatches.Load() {
		return 0, unix.ENOSPC
	}
	u.watches++
	in.lastWD++
	w := &inotifyWatch{in: in, wd: in.lastWD, node: n, mask: events | mask&(unix.IN_ONESHOT|unix.IN_EXCL_UNLINK)}
	in.watches[w.wd] = w
	in.byNode[n] = w
	nt.byNode[n] = append(nt.byNode[n], w)
	nt.count.Add(1)
	return w.wd, nil
}

// RemoveWatch drops watch wd, queueing IN_IGNORED: EINVAL for no such
// watch.
func (in *Inotify) RemoveWatch(wd int32) error {
	nt := &in.tree.notify
	fns, err := func() ([]func(), error) {
		nt.mu.Lock()
		defer nt.mu.Unlock()
		w := in.watchOf(wd)
		if w == nil {
			return nil, unix.EINVAL
		}
		return nt.dropWatch(w, true), nil
	}()
	Notify(fns)
	return err
}

func (in *Inotify) watchOf(wd int32) *inotifyWatch {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.watches[wd]
}

// dropWatch removes w from its instance and the table, with IN_IGNORED
// queued when ignored is set, and returns the instance's wake-ups; nt.mu
// is held.
func (nt *notifyTable) dropWatch(w *inotifyWatch, ignored bool) []func() {
	ws := nt.byNode[w.node]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(nt.byNode, w.node)
	} else {
		nt.byNode[w.node] = ws
	}
	nt.count.Add(-1)
	nt.user(w.in.uid).watches--
	in := w.in
	in.mu.Lock()
	defer in.mu.Unlock()
	delete(in.watches, w.wd)
	delete(in.byNode, w.node)
	if !ignored {
		return nil
	}
	in.queueLocked(inotifyEvent{wd: w.wd, mask: unix.IN_IGNORED})
	return in.notifier.Changed()
}

// queueLocked queues ev (in.mu held): merged with an equal last event,
// an IN_Q_OVERFLOW instead once the queue is full or the budget spent.
func (in *Inotify) queueLocked(ev inotifyEvent) {
	if k := len(in.queue); k > 0 {
		last := in.queue[k-1]
		if last.wd == ev.wd && last.mask == ev.mask && last.cookie == ev.cookie && last.name == ev.name {
			return
		}
	}
	if in.overflow {
		return
	}
	ev.size = linux.SizeofInotifyEvent
	if ev.name != "" {
		ev.size += (len(ev.name) + linux.SizeofInotifyEvent) &^ (linux.SizeofInotifyEvent - 1)
	}
	ev.chargedBytes = inotifyEventCost + len(ev.name)
	if int64(len(in.queue)) >= in.tree.notify.limits.MaxQueuedEvents.Load() || mm.Charged.Charge(ev.chargedBytes) != nil {
		ev = inotifyEvent{wd: -1, mask: unix.IN_Q_OVERFLOW, size: linux.SizeofInotifyEvent}
		in.overflow = true
	}
	in.queue = append(in.queue, ev)
	in.queued += ev.size
}

// dirEntryEvents are heard by the directory only, not by the entry.
const dirEntryEvents = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO

// fsnotify reports mask on n to n's watchers and, for events a directory
// hears about its entries, to dir's (n's directory, named name there;
// nil for none), with the directory flag for a directory. It takes the
// notify table's lock: no caller holds an instance's.
func (t *Tree) fsnotify(n, dir *Node, name string, mask, cookie uint32) {
	t.fsnotifyFile(n, dir, name, mask, cookie, false)
}

// fsnotifyFile is fsnotify for an event of an open file, which watches
// with IN_EXCL_UNLINK do not hear once the file is unlinked.
func (t *Tree) fsnotifyFile(n, dir *Node, name string, mask, cookie uint32, unlinked bool) {
	nt := &t.notify
	if nt.count.Load() == 0 {
		return
	}
	if n != nil && n.IsDir() && mask&(unix.IN_MOVE_SELF|unix.IN_DELETE_SELF) == 0 {
		mask |= unix.IN_ISDIR
	}
	// The tree-wide lock, held by every file event: released by defer.
	fns := func() (fns []func()) {
		nt.mu.Lock()
		defer nt.mu.Unlock()
		if dir != nil {
			for _, w := range nt.byNode[dir] {
				if !unlinked || w.mask&unix.IN_EXCL_UNLINK == 0 {
					fns = append(fns, w.deliver(nt, mask, cookie, name)...)
				}
			}
			fns = append(fns, nt.deliverDnotify(dir, mask)...)
		}
		if n != nil && mask&(dirEntryEvents|renamedWithin) == 0 {
			for _, w := range nt.byNode[n] {
				if !unlinked || w.mask&unix.IN_EXCL_UNLINK == 0 {
					fns = append(fns, w.deliver(nt, mask, cookie, "")...)
				}
			}
			if n.IsDir() {
				fns = append(fns, nt.deliverDnotify(n, mask)...)
			}
			if mask&unix.IN_DELETE_SELF != 0 {
				for _, w := range nt.byNode[n] {
					fns = append(fns, nt.dropWatch(w, true)...)
				}
			}
		}
		return fns
	}()
	Notify(fns)
}

// deliver queues what w asked for of an event and drops a one-shot
// watch that heard one; nt.mu is held.
func (w *inotifyWatch) deliver(nt *notifyTable, mask, cookie uint32, name string) []func() {
	ev := mask & (w.mask | unix.IN_ISDIR)
	if ev&unix.IN_ALL_EVENTS == 0 {
		return nil
	}
	fns := w.in.queueEvent(inotifyEvent{wd: w.wd, mask: ev, cookie: cookie, name: name})
	if w.mask&unix.IN_ONESHOT != 0 && mask&unix.IN_DELETE_SELF == 0 {
		fns = append(fns, nt.dropWatch(w, true)...)
	}
	return fns
}

// queueEvent queues one event and returns the instance's watchers to notify.
func (in *Inotify) queueEvent(ev inotifyEvent) []func() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.queueLocked(ev)
	return in.notifier.Changed()
}

// nextCookie returns a new rename cookie, which ties IN_MOVED_FROM to
// IN_MOVED_TO.
func (t *Tree) nextCookie() uint32 {
	t.notify.mu.Lock()
	defer t.notify.mu.Unlock()
	t.notify.cookie++
	return t.notify.cookie
}

// ReadTo reads whole events: EINVAL when the first does not fit, EAGAIN
// when none is queued.
func (in *Inotify) ReadTo(dst UserIO) (int64, error) {
	var taken int
	return ReadPeeked(dst, &in.readMu, func(p []byte) (int, error) {
		in.mu.Lock()
		defer in.mu.Unlock()
		if len(in.queue) == 0 {
			return 0, unix.EAGAIN
		}
		n := 0
		taken = 0
		for _, ev := range in.queue {
			if n+ev.size > len(p) {
				break
			}
			rec := linux.InotifyEvent{Wd: ev.wd, Mask: ev.mask, Cookie: ev.cookie, Len: uint32(ev.size - linux.SizeofInotifyEvent)}
			b := p[n : n+ev.size]
			clear(b)
			copy(b, linux.AsBytes(&rec))
			copy(b[linux.SizeofInotifyEvent:], ev.name)
			n += ev.size
			taken++
		}
		if n == 0 {
			return 0, unix.EINVAL
		}
		return n, nil
	}, func(int) {
		in.mu.Lock()
		defer in.mu.Unlock()
		for _, ev := range in.queue[:taken] {
			in.queued -= ev.size
			mm.Charged.Uncharge(ev.chargedBytes)
			if ev.mask == unix.IN_Q_OVERFLOW {
				in.overflow = false
			}
		}
		in.queue = append(in.queue[:0:0], in.queue[taken:]...)
	})
}

func (in *Inotify) WriteFrom(UserIO) (int64, error) { return 0, unix.EINVAL }

func (in *Inotify) Stat() Stat {
	return Stat{Dev: devAnon, Ino: in.ino, Mode: 0o600, Nlink: 1, Blksize: 4096}
}

// Close drops every watch (no IN_IGNORED: nobody reads them) and the
// queue's charge.
func (in *Inotify) Close() error {
	nt := &in.tree.notify
	func() {
		nt.mu.Lock()
		defer nt.mu.Unlock()
		for _, w := range in.watchList() {
			nt.dropWatch(w, false)
		}
		nt.user(in.uid).instances--
	}()
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, ev := range in.queue {
		mm.Charged.Uncharge(ev.chargedBytes)
	}
	in.queue, in.queued = nil, 0
	return nil
}

func (in *Inotify) watchList() []*inotifyWatch {
	in.mu.Lock()
	defer in.mu.Unlock()
	ws := make([]*inotifyWatch, 0, len(in.watches))
	for _, w := range in.watches {
		ws = append(ws, w)
	}
	return ws
}

// Readiness is EPOLLIN while an event is queued.
func (in *Inotify) Readiness(mask uint32) uint32 {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.queue) > 0 {
		return mask & (unix.EPOLLIN | unix.EPOLLRDNORM)
	}
	return 0
}

func (in *Inotify) Watch(notify func()) func() { return in.notifier.Watch(&in.mu, notify) }

// Pending is the bytes a read would return (FIONREAD).
func (in *Inotify) Pending() (int, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.queued, nil
}

// parentOf returns the directory that names n at p, and the name, as
// Linux's dentry would: nil when p no longer leads to n because it was
// renamed; the directory and unlinked set when n's names are gone.
func (t *Tree) parentOf(n *Node, p string) (dir *Node, name string, unlinked bool) {
	dirPath, name := path.Split(path.Clean("/" + p))
	if name == "" {
		return nil, "", false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	parent, _, err := t.walk(nil, dirPath, true, 0)
	switch {
	case err != nil:
		return nil, "", false
	case parent.Children[name] == n:
		return parent, name, false
	case n.Links <= 0:
		return parent, name, true
	}
	return nil, "", false
}

// NotifyOpen reports an open of n, found at p, by who, to inotify
// watchers and fanotify marks; an open that truncated the file modified
// it after. f, the file opened, remembers who for its later events.
func (t *Tree) NotifyOpen(f File, n *Node, p string, truncated bool, who Actor) {
	if nf, ok := f.(*NodeFile); ok {
		nf.opener = who
	}
	if t.notify.count.Load() == 0 {
		return
	}
	dir, name, _ := t.parentOf(n, p)
	t.fsnotify(n, dir, name, unix.IN_OPEN, 0)
	t.fanotify(n, dir, p, unix.FAN_OPEN, who)
	if truncated {
		t.fsnotify(n, dir, name, unix.IN_MODIFY, 0)
		t.fanotify(n, dir, p, unix.FAN_MODIFY, who)
	}
}

// OpenPermission asks fanotify's permission marks whether who may open
// n, found at p (FAN_OPEN_PERM): EPERM when a listener denies it.
func (t *Tree) OpenPermission(n *Node, p string, who Actor) error {
	if t.notify.fanotifyMarks.Load() == 0 {
		return nil
	}
	dir, _, _ := t.parentOf(n, p)
	return t.fanotify(n, dir, p, unix.FAN_OPEN_PERM, who)
}

// notifyAttrib reports a change of n's link count to n's watchers; the
// tree's lock may be held.
func (n *Node) notifyAttrib() {
	if n.tree != nil {
		n.tree.fsnotify(n, nil, "", unix.IN_ATTRIB, 0)
	}
}

// notifyChange reports a change of n's attributes (chmod, chown, times,
// xattrs) to n's watchers and to a watched directory that names it; the
// tree's lock is not held.
func (n *Node) notifyChange() {
	t := n.tree
	if t == nil || t.notify.count.Load() == 0 {
		return
	}
	dir, name := t.watchedParent(n)
	t.fsnotify(n, dir, name, unix.IN_ATTRIB, 0)
}

// watchedParent finds a watched directory (by inotify or dnotify) that
// names n: only a watched one hears of n's changes, and a node does not
// know its names.
func (t *Tree) watchedParent(n *Node) (*Node, string) {
	dirs := t.notify.watchedDirs()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, d := range dirs {
		for name, c := range d.Children {
			if c == n {
				return d, name
			}
		}
	}
	return nil, ""
}

// watchedDirs lists the directories an inotify watch or a dnotify mark
// is on.
func (nt *notifyTable) watchedDirs() []*Node {
	nt.mu.Lock()
	defer nt.mu.Unlock()
	var dirs []*Node
	for d := range nt.byNode {
		if d.IsDir() {
			dirs = append(dirs, d)
		}
	}
	for d := range nt.dnotify {
		dirs = append(dirs, d)
	}
	return dirs
}

// Watches describes the instance's watches for /proc/PID/fdinfo, as
// Linux's inotify_fdinfo: one "inotify wd:..." line each, by wd.
func (in *Inotify) Watches() []string {
	in.mu.Lock()
	ws := make([]*inotifyWatch, 0, len(in.watches))
	for _, w := range in.watches {
		ws = append(ws, w)
	}
	in.mu.Unlock()
	slices.SortFunc(ws, func(a, b *inotifyWatch) int { return cmp.Compare(a.wd, b.wd) })
	lines := make([]string, len(ws))
	for i, w := range ws {
		st := StatNode(w.node)
		lines[i] = fmt.Sprintf("inotify wd:%x ino:%x sdev:%x mask:%x ignored_mask:0", w.wd, st.Ino, st.Dev, w.mask)
	}
	return lines
}
