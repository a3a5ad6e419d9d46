package fs

import (
	"sync"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/mm"
)

// fanotify: a group (a File) has marks on nodes, mounts and file
// systems, kept beside inotify's watches in the tree's notifyTable, and
// a queue of events that carry the object as a file the reader gets
// open. Open files report open, access, modify and close to it with the
// thread that caused them (an Actor). Permission events hold that thread
// until the listener writes FAN_ALLOW or FAN_DENY, or the group closes
// (allowed). As Linux's: a queue at max_queued_events ends with one
// FAN_Q_OVERFLOW, an event merges with a queued one of the same object
// and process, and events and marks are charged to mm.Charged.

// Actor is the thread that causes an event: fanotify reports its ids,
// holds it on a permission event, and opens a reader's event files in
// its descriptor table.
type Actor interface {
	NotifyIDs() (pid, tid int32)
	// WaitAnswer blocks until answered is closed: EINTR when the thread
	// must stop waiting (a signal, its process's exit).
	WaitAnswer(answered <-chan struct{}) error
	FDs() *FDTable
}

// Acting is a UserIO that knows the thread it copies for.
type Acting interface{ Actor() Actor }

// actorOf is the thread behind a UserIO, nil for none.
func actorOf(u UserIO) Actor {
	if a, ok := u.(Acting); ok {
		return a.Actor()
	}
	return nil
}

// Linux's defaults of the fanotify limits (/proc/sys/fs/fanotify):
// queued events per group, groups and marks per user (the mark limit is
// the floor of Linux's, which scales with memory).
const (
	fanotifyDefaultQueuedEvents = 16384
	fanotifyDefaultUserGroups   = 128
	fanotifyDefaultUserMarks    = 8192
)

// What events and marks are charged: Linux's struct fanotify_path_event
// and struct fsnotify_mark with its connector.
const (
	fanotifyEventCost = 64
	fanotifyMarkCost  = 128
)

// The events a group without file handles reports (FANOTIFY_FD_EVENTS),
// the permission events, and the flags of a mark's mask.
const (
	FanotifyPermEvents = unix.FAN_OPEN_PERM | unix.FAN_ACCESS_PERM | unix.FAN_OPEN_EXEC_PERM
	FanotifyFDEvents   = unix.FAN_ACCESS | unix.FAN_MODIFY | unix.FAN_CLOSE | unix.FAN_OPEN | unix.FAN_OPEN_EXEC | FanotifyPermEvents
	fanotifyEventFlags = unix.FAN_ONDIR | unix.FAN_EVENT_ON_CHILD
)

// FanotifyTarget is what a mark is on: a node, a mount (by id) or a file
// system (by device); exactly one is set.
type FanotifyTarget struct {
	Node  *Node
	Mount int
	Dev   uint64
}

// FilesystemTarget is the file system n is on, as a mark's target.
func FilesystemTarget(n *Node) FanotifyTarget { return FanotifyTarget{Dev: devOf(n)} }

// FanotifyKind is a kind of mark, which FAN_MARK_FLUSH drops together.
type FanotifyKind int

const (
	FanotifyNodeMark FanotifyKind = iota
	FanotifyMountMark
	FanotifyFilesystemMark
)

func (t FanotifyTarget) kind() FanotifyKind {
	switch {
	case t.Node != nil:
		return FanotifyNodeMark
	case t.Mount != 0:
		return FanotifyMountMark
	}
	return FanotifyFilesystemMark
}

type fanotifyMark struct {
	g              *Fanotify
	target         FanotifyTarget
	mask, ignored  uint32
	ignoredSurvive bool // FAN_MARK_IGNORED_SURV_MODIFY
}

// fanotifyKey is what makes events mergeable: their object and process.
type fanotifyKey struct {
	node *Node
	path string
	pid  int32
}

type fanotifyEvent struct {
	mask     uint32
	node     *Node
	path     string
	pid      int32
	answered chan struct{} // a permission event's; closed with response set
	response uint32
	fd       int32 // a read permission event's file in the reader
}

// Fanotify is a fanotify group (fanotify_init).
type Fanotify struct {
	tree      *Tree
	uid       uint32
	ino       uint64
	flags     uint32 // fanotify_init's
	fileFlags uint32 // the event files' open flags
	maxQueued int64  // max_queued_events when it was made, as Linux's

	mu       sync.Mutex // under the tree's notifyTable.mu
	queue    []*fanotifyEvent
	merge    map[fanotifyKey]*fanotifyEvent // the queued notification events
	overflow bool
	waiting  []*fanotifyEvent // permission events read and not answered
	marks    map[FanotifyTarget]*fanotifyMark
	closed   bool
	notifier Notifier
}

// NewFanotify makes a group for user uid with fanotify_init's flags and
// the event files' flags: EMFILE past the user's groups.
func NewFanotify(t *Tree, uid, flags, fileFlags uint32) (*Fanotify, error) {
	nt := &t.notify
	nt.mu.Lock()
	defer nt.mu.Unlock()
	u := nt.user(uid)
	if int64(u.fanGroups) >= nt.fanotifyLimits.MaxUserInstances.Load() {
		return nil, unix.EMFILE
	}
	u.fanGroups++
	return &Fanotify{tree: t, uid: uid, ino: nextIno.Add(1), flags: flags, fileFlags: fileFlags,
		maxQueued: nt.fanotifyLimits.MaxQueuedEvents.Load(),
		marks:     map[FanotifyTarget]*fanotifyMark{}, merge: map[fanotifyKey]*fanotifyEvent{}}, nil
}

// Permissions reports whether the group may hear permission events.
func (g *Fanotify) Permissions() bool {
	return g.flags&(unix.FAN_CLASS_CONTENT|unix.FAN_CLASS_PRE_CONTENT) != 0
}

// AddMark adds mask (to the ignored mask with FAN_MARK_IGNORED_MASK) to
// the group's mark on target, making it: ENOSPC past the user's marks.
func (g *Fanotify) AddMark(target FanotifyTarget, mask uint32, flags uint32) error {
	nt := &g.tree.notify
	nt.mu.Lock()
	defer nt.mu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	m := g.marks[target]
	if m == nil {
		u := nt.user(g.uid)
		if int64(u.fanMarks) >= nt.fanotifyLimits.MaxUserWatches.Load() && g.flags&unix.FAN_UNLIMITED_MARKS == 0 {
			return unix.ENOSPC
		}
		if err := mm.Charged.Charge(fanotifyMarkCost); err != nil {
			return err
		}
		u.fanMarks++
		m = &fanotifyMark{g: g, target: target}
		g.marks[target] = m
		if nt.fanotify == nil {
			nt.fanotify = map[FanotifyTarget][]*fanotifyMark{}
		}
		nt.fanotify[target] = append(nt.fanotify[target], m)
		nt.count.Add(1)
		nt.fanotifyMarks.Add(1)
		if target.Mount != 0 {
			nt.fanotifyMounts.Add(1)
		}
	}
	if flags&unix.FAN_MARK_IGNORED_MASK != 0 {
		m.ignored |= mask
		if flags&unix.FAN_MARK_IGNORED_SURV_MODIFY != 0 {
			m.ignoredSurvive = true
		}
	} else {
		m.mask |= mask
	}
	return nil
}

// RemoveMark takes mask from the group's mark on target (from its
// ignored mask with FAN_MARK_IGNORED_MASK), dropping a mark left with
// nothing: ENOENT for no mark.
func (g *Fanotify) RemoveMark(target FanotifyTarget, mask uint32, flags uint32) error {
	nt := &g.tree.notify
	nt.mu.Lock()
	defer nt.mu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	m := g.marks[target]
	if m == nil {
		return unix.ENOENT
	}
	if flags&unix.FAN_MARK_IGNORED_MASK != 0 {
		m.ignored &^= mask
	} else {
		m.mask &^= mask
	}
	if m.mask&^fanotifyEventFlags == 0 && m.ignored == 0 {
		nt.dropFanotifyMark(m)
	}
	return nil
}

// Flush drops the group's marks of one kind.
func (g *Fanotify) Flush(kind FanotifyKind) {
	nt := &g.tree.notify
	nt.mu.Lock()
	defer nt.mu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	for t, m := range g.marks {
		if t.kind() == kind {
			nt.dropFanotifyMark(m)
		}
	}
}

// dropFanotifyMark removes m from its group and the table; nt.mu and the
// group's mu are held.
func (nt *notifyTable) dropFanotifyMark(m *fanotifyMark) {
	ms := nt.fanotify[m.target]
	for i, x := range ms {
		if x == m {
			ms = append(ms[:i:i], ms[i+1:]...)
			break
		}
	}
	if len(ms) == 0 {
		delete(nt.fanotify, m.target)
	} else {
		nt.fanotify[m.target] = ms
	}
	nt.count.Add(-1)
	nt.fanotifyMarks.Add(-1)
	if m.target.Mount != 0 {
		nt.fanotifyMounts.Add(-1)
	}
	nt.user(m.g.uid).fanMarks--
	delete(m.g.marks, m.target)
	mm.Charged.Uncharge(fanotifyMarkCost)
}

// fanotifyCandidate is one group's combined marks for an event.
type fanotifyCandidate struct {
	g              *Fanotify
	mask, ignored  uint32
	clearIgnoredOf []*fanotifyMark
}

// fanotifyMatch returns, by group, the events of mask the marks on n, on
// dir (which names n; nil for none), on n's mount and on its file system
// ask for, as Linux's fanotify_group_event_mask combines them. nt.mu is
// held.
func (nt *notifyTable) fanotifyMatch(n, dir *Node, mount int, mask uint32) []fanotifyCandidate {
	var out []fanotifyCandidate
	isDir := n.IsDir()
	add := func(m *fanotifyMark, parent bool) {
		var c *fanotifyCandidate
		for i := range out {
			if out[i].g == m.g {
				c = &out[i]
			}
		}
		if c == nil {
			out = append(out, fanotifyCandidate{g: m.g})
			c = &out[len(out)-1]
		}
		// A legacy ignored mask covers directories, and a parent's
		// covers its children when the parent watches them.
		if m.ignored != 0 && (!parent || m.mask&unix.FAN_EVENT_ON_CHILD != 0) {
			c.ignored |= m.ignored
		}
		if mask&unix.FAN_MODIFY != 0 && !m.ignoredSurvive {
			c.clearIgnoredOf = append(c.clearIgnoredOf, m)
		}
		if isDir && m.mask&unix.FAN_ONDIR == 0 || parent && m.mask&unix.FAN_EVENT_ON_CHILD == 0 {
			return
		}
		c.mask |= m.mask
	}
	for _, m := range nt.fanotify[FanotifyTarget{Node: n}] {
		add(m, false)
	}
	if dir != nil {
		for _, m := range nt.fanotify[FanotifyTarget{Node: dir}] {
			add(m, true)
		}
	}
	if mount != 0 {
		for _, m := range nt.fanotify[FanotifyTarget{Mount: mount}] {
			add(m, false)
		}
	}
	for _, m := range nt.fanotify[FanotifyTarget{Dev: devOf(n)}] {
		add(m, false)
	}
	for i := range out {
		out[i].mask &= mask &^ out[i].ignored
	}
	return out
}

// fanotify reports mask (FAN_ bits, which are inotify's) on n, opened at
// p and named in dir, caused by who, to the groups that mark it; a
// permission event waits for their answers: EPERM when one denies.
func (t *Tree) fanotify(n, dir *Node, p string, mask uint32, who Actor) error {
	nt := &t.notify
	if nt.fanotifyMarks.Load() == 0 || who == nil {
		return nil
	}
	mount := 0
	if nt.fanotifyMounts.Load() > 0 {
		mount = t.MountOf(nil, n, p).ID // the initial namespace's
	}
	cands := func() []fanotifyCandidate {
		nt.mu.Lock()
		defer nt.mu.Unlock()
		cands := nt.fanotifyMatch(n, dir, mount, mask)
		for _, c := range cands {
			for _, m := range c.clearIgnoredOf {
				m.ignored = 0
			}
		}
		return cands
	}()
	pid, tid := who.NotifyIDs()
	for _, c := range cands {
		if c.mask == 0 {
			continue
		}
		ev := &fanotifyEvent{mask: c.mask, node: n, path: p, pid: pid}
		if c.g.flags&unix.FAN_REPORT_TID != 0 {
			ev.pid = tid
		}
		if c.mask&FanotifyPermEvents == 0 {
			Notify(c.g.queueEvent(ev))
			continue
		}
		ev.answered = make(chan struct{})
		queued, fns := c.g.queuePerm(ev)
		Notify(fns)
		if !queued {
			continue
		}
		if err := who.WaitAnswer(ev.answered); err != nil {
			c.g.withdraw(ev)
			return err
		}
		if ev.response&unix.FAN_DENY != 0 {
			return unix.EPERM
		}
	}
	return nil
}

// queueEvent queues a notification event, merged into a queued one of
// the same object and process, or FAN_Q_OVERFLOW once the queue is full
// or the charge fails; it returns the watchers to notify.
func (g *Fanotify) queueEvent(ev *fanotifyEvent) []func() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || !g.roomLocked() {
		return g.notifier.Changed()
	}
	key := fanotifyKey{ev.node, ev.path, ev.pid}
	if q := g.merge[key]; q != nil {
		q.mask |= ev.mask
		return nil
	}
	if mm.Charged.Charge(fanotifyEventCost) != nil {
		g.queueOverflowLocked()
		return g.notifier.Changed()
	}
	g.queue = append(g.queue, ev)
	g.merge[key] = ev
	return g.notifier.Changed()
}

// queuePerm queues a permission event, which is never merged; a full
// queue lets it pass unasked, as Linux's does.
func (g *Fanotify) queuePerm(ev *fanotifyEvent) (bool, []func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || !g.roomLocked() || mm.Charged.Charge(fanotifyEventCost) != nil {
		return false, g.notifier.Changed()
	}
	g.queue = append(g.queue, ev)
	return true, g.notifier.Changed()
}

// roomLocked reports whether the queue takes another event, queueing the
// overflow event when it does not.
func (g *Fanotify) roomLocked() bool {
	if g.flags&unix.FAN_UNLIMITED_QUEUE != 0 || int64(len(g.queue)) < g.maxQueued {
		return true
	}
	g.queueOverflowLocked()
	return false
}

func (g *Fanotify) queueOverflowLocked() {
	if !g.overflow {
		g.overflow = true
		g.queue = append(g.queue, &fanotifyEvent{mask: unix.FAN_Q_OVERFLOW})
	}
}

// withdraw drops a permission event whose waiter gave up.
func (g *Fanotify) withdraw(ev *fanotifyEvent) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, q := range g.queue {
		if q == ev {
			g.queue = append(g.queue[:i:i], g.queue[i+1:]...)
			mm.Charged.Uncharge(fanotifyEventCost)
			return
		}
	}
	for i, q := range g.waiting {
		if q == ev {
			g.waiting = append(g.waiting[:i:i], g.waiting[i+1:]...)
			mm.Charged.Uncharge(fanotifyEventCost)
			return
		}
	}
}

// answerLocked gives ev its response and lets its waiter go.
func answerLocked(ev *fanotifyEvent, response uint32) {
	ev.response = response
	close(ev.answered)
	mm.Charged.Uncharge(fanotifyEventCost)
}

// ReadTo reads whole events, each with its object opened in the reader
// (dst's Actor) with the group's event file flags, never reporting
// events of its own: EINVAL when the first does not fit, EAGAIN when
// none is queued. A permission event read waits for its answer; one
// whose file cannot be opened is denied.
func (g *Fanotify) ReadTo(dst UserIO) (int64, error) {
	who := actorOf(dst)
	if who == nil {
		return 0, unix.EINVAL
	}
	if g.Readiness(unix.EPOLLIN) == 0 {
		return 0, unix.EAGAIN
	}
	var total int64
	for dst.Len() >= unix.FAN_EVENT_METADATA_LEN {
		ev, err := g.take(total == 0)
		if ev == nil {
			if total > 0 {
				return total, nil
			}
			return 0, err
		}
		rec := unix.FanotifyEventMetadata{Event_len: unix.FAN_EVENT_METADATA_LEN, Vers: unix.FANOTIFY_METADATA_VERSION,
			Metadata_len: unix.FAN_EVENT_METADATA_LEN, Mask: uint64(ev.mask), Fd: unix.FAN_NOFD, Pid: ev.pid}
		if ev.node != nil {
			fd, err := g.openEventFile(ev, who.FDs())
			if err != nil {
				g.finish(ev, unix.FAN_DENY)
				if total > 0 {
					return total, nil
				}
				return 0, err
			}
			rec.Fd = fd
		}
		ev.fd = rec.Fd
		if _, err := dst.CopyOut(linux.AsBytes(&rec)); err != nil {
			if rec.Fd >= 0 {
				who.FDs().Close(int(rec.Fd))
			}
			g.finish(ev, unix.FAN_DENY)
			if total > 0 {
				return total, nil
			}
			return 0, err
		}
		g.finish(ev, 0)
		total += unix.FAN_EVENT_METADATA_LEN
	}
	if total == 0 {
		return 0, unix.EINVAL
	}
	return total, nil
}

// take dequeues the first event: EAGAIN when there is none.
func (g *Fanotify) take(first bool) (*fanotifyEvent, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) == 0 {
		return nil, unix.EAGAIN
	}
	ev := g.queue[0]
	g.queue[0] = nil
	g.queue = g.queue[1:]
	if ev.mask&unix.FAN_Q_OVERFLOW != 0 {
		g.overflow = false
	} else if ev.answered == nil {
		delete(g.merge, fanotifyKey{ev.node, ev.path, ev.pid})
		mm.Charged.Uncharge(fanotifyEventCost)
	}
	return ev, nil
}

// finish settles a read event: a permission event waits for its answer,
// or is answered with response when reading it failed.
func (g *Fanotify) finish(ev *fanotifyEvent, response uint32) {
	if ev.answered == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if response != 0 || g.closed {
		answerLocked(ev, max(response, unix.FAN_ALLOW))
		return
	}
	g.waiting = append(g.waiting, ev)
}

// openEventFile opens the event's object in fds, as a file whose own
// use reports nothing: EISDIR for a directory and a group whose files
// are writable.
func (g *Fanotify) openEventFile(ev *fanotifyEvent, fds *FDTable) (int32, error) {
	flags := g.fileFlags &^ unix.O_CLOEXEC
	if ev.node.IsDir() && flags&unix.O_ACCMODE != unix.O_RDONLY {
		return 0, unix.EISDIR
	}
	f := g.tree.OpenNode(ev.node, ev.path)
	f.quiet = true
	f.OpenedAs(flags)
	fd, err := fds.Open(f, flags, g.fileFlags&unix.O_CLOEXEC != 0)
	return int32(fd), err
}

// WriteFrom takes responses (struct fanotify_response) to read
// permission events: ENOENT for no event of that fd, EINVAL for a bad
// response.
func (g *Fanotify) WriteFrom(src UserIO) (int64, error) {
	var resp unix.FanotifyResponse
	if src.Len() < int64(len(linux.AsBytes(&resp))) {
		return 0, unix.EINVAL
	}
	if _, err := src.CopyIn(linux.AsBytes(&resp)); err != nil {
		return 0, err
	}
	if err := g.Answer(resp.Fd, resp.Response); err != nil {
		return 0, err
	}
	return int64(len(linux.AsBytes(&resp))), nil
}

// Answer answers the read permission event of fd with FAN_ALLOW or
// FAN_DENY.
func (g *Fanotify) Answer(fd int32, response uint32) error {
	if fd < 0 || response&^(unix.FAN_ALLOW|unix.FAN_DENY) != 0 {
		return unix.EINVAL
	}
	switch response {
	case unix.FAN_ALLOW, unix.FAN_DENY:
	default:
		return unix.EINVAL
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, ev := range g.waiting {
		if ev.fd == fd {
			g.waiting = append(g.waiting[:i:i], g.waiting[i+1:]...)
			answerLocked(ev, response)
			return nil
		}
	}
	return unix.ENOENT
}

func (g *Fanotify) Stat() Stat {
	return Stat{Dev: devAnon, Ino: g.ino, Mode: 0o600, Nlink: 1, Blksize: 4096}
}

// Close drops the marks, the queue and their charges, and lets every
// waiter on a permission event go (allowed), as Linux's release does.
func (g *Fanotify) Close() error {
	nt := &g.tree.notify
	func() {
		nt.mu.Lock()
		defer nt.mu.Unlock()
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, m := range g.marks {
			nt.dropFanotifyMark(m)
		}
		nt.user(g.uid).fanGroups--
	}()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	for _, ev := range g.queue {
		switch {
		case ev.answered != nil:
			answerLocked(ev, unix.FAN_ALLOW)
		case ev.mask&unix.FAN_Q_OVERFLOW == 0:
			mm.Charged.Uncharge(fanotifyEventCost)
		}
	}
	for _, ev := range g.waiting {
		answerLocked(ev, unix.FAN_ALLOW)
	}
	g.queue, g.waiting, g.merge = nil, nil, nil
	return nil
}

// Readiness is EPOLLIN while an event is queued.
func (g *Fanotify) Readiness(mask uint32) uint32 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) > 0 {
		return mask & (unix.EPOLLIN | unix.EPOLLRDNORM)
	}
	return 0
}

func (g *Fanotify) Watch(notify func()) func() { return g.notifier.Watch(&g.mu, notify) }

// Pending is the bytes a read would return (FIONREAD).
func (g *Fanotify) Pending() (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue) * unix.FAN_EVENT_METADATA_LEN, nil
}
