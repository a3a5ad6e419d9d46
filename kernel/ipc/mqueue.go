package ipc

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
)

// POSIX message queues (mq_overview(7), Linux's ipc/mqueue.c): named
// queues of prioritized messages whose descriptors are files. They share
// the namespace's lock with System V IPC and its way of waiting: a send
// to a full queue or a receive from an empty one returns ErrWouldBlock
// and a channel closed at the queue's next change.

// The limits of /proc/sys/fs/mqueue and the hard ones root is held to.
const (
	mqQueuesMax      = 256
	mqMsgMax         = 10
	mqMsgsizeMax     = 8192
	mqHardMsgMax     = 65536
	mqHardMsgsizeMax = 16 << 20
	mqMinMsgMax      = 1
	mqMinMsgsizeMax  = 128
	// MQPrioMax bounds a message's priority (MQ_PRIO_MAX).
	MQPrioMax = 32768
	// mqNodeSize is sizeof(struct posix_msg_tree_node), counted with
	// struct msg_msg (msgHeader) per message a queue may hold against
	// RLIMIT_MSGQUEUE, as Linux counts it.
	mqNodeSize = 48
	// mqFileSize is a queue file's st_size (FILENT_SIZE).
	mqFileSize = 80
	// mqQueueCharge is what a queue costs the kernel-wide budget (ENOMEM
	// past it, as a failed inode allocation): root may create queues
	// past queues_max, and tiny ones fit under RLIMIT_MSGQUEUE.
	mqQueueCharge = 512
)

// MQAttr is struct mq_attr.
type MQAttr struct {
	Flags, MaxMsg, MsgSize, CurMsgs int64
	_                               [4]int64
}

// mqLimits are a namespace's POSIX message queues and their settings.
type mqLimits struct {
	byName                 map[string]*MQueue
	count                  int               // queues that exist, unlinked ones still open included
	userBytes              map[uint32]uint64 // RLIMIT_MSGQUEUE's count, by real uid
	queuesMax, msgMax      int
	msgsizeMax, msgDefault int
	msgsizeDefault         int
}

func newMQLimits() mqLimits {
	return mqLimits{byName: map[string]*MQueue{}, userBytes: map[uint32]uint64{}, queuesMax: mqQueuesMax,
		msgMax: mqMsgMax, msgsizeMax: mqMsgsizeMax, msgDefault: mqMsgMax, msgsizeDefault: mqMsgsizeMax}
}

// MQueue is one queue.
type MQueue struct {
	ns              *Namespace
	mode, uid, gid  uint32
	maxMsg, msgSize int64
	msgs            []mqMessage // by priority, highest first; in order of sending within one
	bytes           int64       // the messages' lengths (QSIZE)
	opens           int         // descriptors open on it
	receivers       int         // receives waiting for a message
	linked          bool        // its name still names it
	owner           uint32      // the real uid RLIMIT_MSGQUEUE charged
	cost            uint64      // what it charged
	notify          *MQNotify
	notifier        fs.Notifier   // poll and epoll
	changed         chan struct{} // closed and replaced at every change
	ino             uint64
}

type mqMessage struct {
	prio uint32
	text []byte
}

// MQNotify is mq_notify(3)'s registration: who is told of the first
// message to arrive in an empty queue, and how.
type MQNotify struct {
	PID    int             // the registering process
	Gone   <-chan struct{} // closed when it exits: the registration is void
	Notify int32           // SIGEV_NONE, SIGEV_SIGNAL or SIGEV_THREAD
	Signo  int32
	// Signal sends SIGEV_SIGNAL's signal, from the sender's pid and real
	// uid (nil for the other kinds).
	Signal func(senderPID int, senderUID uint32)
	// Socket and Cookie are SIGEV_THREAD's: the netlink socket the cookie
	// goes to, its last byte set to NOTIFY_WOKENUP or NOTIFY_REMOVED.
	Socket interface{ Deliver(...[]byte) }
	Cookie []byte
}

// MQOpen is what mq_open(3) asks.
type MQOpen struct {
	Name    string // without glibc's leading slash
	Flags   uint32 // O_ACCMODE, O_CREAT, O_EXCL, O_NONBLOCK
	Mode    uint32 // with the umask applied
	Attr    *MQAttr
	RealUID uint32
	Limit   uint64 // RLIMIT_MSGQUEUE
	// CanExceed is CAP_SYS_RESOURCE: the hard limits instead of the
	// settings, and no queues_max.
	CanExceed bool
}

// mqValidName checks a name as Linux 6.18 does: ENOENT for "" (glibc's
// "/"), EACCES for ".", ".." and a name with a slash, ENAMETOOLONG past
// NAME_MAX.
func mqValidName(name string) error {
	switch {
	case len(name) > 255:
		return unix.ENAMETOOLONG
	case name == "":
		return unix.ENOENT
	case name == "." || name == "..":
		return unix.EACCES
	}
	for i := 0; i < len(name); i++ {
		if name[i] == '/' {
			return unix.EACCES
		}
	}
	return nil
}

// MQOpen opens or creates a queue and returns a file for its descriptor.
func (ns *Namespace) MQOpen(o MQOpen, c Caller) (*MQFile, error) {
	if err := mqValidName(o.Name); err != nil {
		return nil, err
	}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	mq := &ns.mq
	q := mq.byName[o.Name]
	if q == nil {
		if o.Flags&unix.O_CREAT == 0 {
			return nil, unix.ENOENT
		}
		var err error
		if q, err = ns.mqCreate(o, c); err != nil {
			return nil, err
		}
	} else {
		if o.Flags&(unix.O_CREAT|unix.O_EXCL) == unix.O_CREAT|unix.O_EXCL {
			return nil, unix.EEXIST
		}
		// O_ACCMODE itself asks for both, as Linux 6.18 lets it.
		want := [...]uint32{0o4, 0o2, 0o6, 0o6}[o.Flags&unix.O_ACCMODE]
		if err := q.access(c, want); err != nil {
			return nil, err
		}
	}
	q.opens++
	return &MQFile{q: q}, nil
}

// mqCreate makes a queue (ns.mu held): ENOSPC past queues_max, EINVAL for
// attributes out of the limits, EMFILE past the creator's RLIMIT_MSGQUEUE.
func (ns *Namespace) mqCreate(o MQOpen, c Caller) (*MQueue, error) {
	mq := &ns.mq
	if mq.count >= mq.queuesMax && !o.CanExceed {
		return nil, unix.ENOSPC
	}
	maxMsg, msgSize := int64(mq.msgDefault), int64(mq.msgsizeDefault)
	if o.Attr != nil {
		maxMsg, msgSize = o.Attr.MaxMsg, o.Attr.MsgSize
		if maxMsg <= 0 || msgSize <= 0 {
			return nil, unix.EINVAL
		}
		limitMsg, limitSize := int64(mq.msgMax), int64(mq.msgsizeMax)
		if o.CanExceed {
			limitMsg, limitSize = mqHardMsgMax, mqHardMsgsizeMax
		}
		if maxMsg > limitMsg || msgSize > limitSize {
			return nil, unix.EINVAL
		}
	}
	cost := uint64(maxMsg*msgHeader+min(maxMsg, MQPrioMax)*mqNodeSize) + uint64(maxMsg*msgSize)
	if used := mq.userBytes[o.RealUID]; used+cost > o.Limit {
		return nil, unix.EMFILE
	}
	if mm.Charged.Charge(mqQueueCharge) != nil {
		return nil, unix.ENOMEM
	}
	mq.userBytes[o.RealUID] += cost
	mq.count++
	q := &MQueue{ns: ns, mode: o.Mode & 0o777, uid: c.Cred.UID, gid: c.Cred.GID, maxMsg: maxMsg, msgSize: msgSize,
		linked: true, owner: o.RealUID, cost: cost, changed: make(chan struct{}), ino: fs.NewAnonIno()}
	mq.byName[o.Name] = q
	return q, nil
}

// access is the queue's permission check, as inode_permission on its
// file: want holds the requested bits (4 read, 2 write); root passes.
func (q *MQueue) access(c Caller, want uint32) error {
	mode := q.mode
	switch {
	case c.Cred.UID == q.uid:
		mode >>= 6
	case c.Cred.InGroup(q.gid):
		mode >>= 3
	}
	if want&^mode&7 != 0 && !c.Cred.Privileged() {
		return unix.EACCES
	}
	return nil
}

// MQUnlink removes a queue's name: ENOENT for none, EACCES for a bad
// name or unless the caller owns it (as Linux answers, LTP's mq_unlink01).
// It lives on until its last descriptor is closed.
func (ns *Namespace) MQUnlink(name string, c Caller) error {
	if err := mqValidName(name); err != nil {
		return err
	}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	q := ns.mq.byName[name]
	if q == nil {
		return unix.ENOENT
	}
	if !c.Cred.Privileged() && c.Cred.UID != q.uid {
		return unix.EACCES
	}
	delete(ns.mq.byName, name)
	q.linked = false
	q.destroyIfUnused()
	return nil
}

// destroyIfUnused frees an unlinked queue with no descriptor open
// (ns.mu held): its messages' charges and its RLIMIT_MSGQUEUE bytes.
func (q *MQueue) destroyIfUnused() {
	if q.linked || q.opens > 0 {
		return
	}
	mq := &q.ns.mq
	for _, m := range q.msgs {
		UnchargeMessage(len(m.text))
	}
	q.msgs = nil
	mm.Charged.Uncharge(mqQueueCharge)
	mq.count--
	if mq.userBytes[q.owner] -= q.cost; mq.userBytes[q.owner] == 0 {
		delete(mq.userBytes, q.owner)
	}
}

// changedLocked wakes the queue's waiters and returns its pollers' calls
// (ns.mu held).
func (q *MQueue) changedLocked() []func() {
	close(q.changed)
	q.changed = make(chan struct{})
	return q.notifier.Changed()
}

// MQFile is a queue descriptor's file.
type MQFile struct {
	q    *MQueue
	read int // how much of the status line reads took
}

// Send queues a message that ChargeMessage charged, or with a full queue
// EAGAIN (nonblock) or ErrWouldBlock and the channel to wait on; EMSGSIZE
// for a message longer than the queue's. The first message into an empty
// queue that no receiver waits for fires its notification.
func (f *MQFile) Send(text []byte, prio uint32, nonblock bool, sender Caller, senderUID uint32) (<-chan struct{}, error) {
	ch, fns, fire, err := f.send(text, prio, nonblock)
	fs.Notify(fns)
	if fire != nil {
		fire.fire(notifyWokenUp, sender.PID, senderUID)
	}
	return ch, err
}

// send is Send under the namespace's lock: it returns the pollers to
// tell and the notification to fire once the lock is released.
func (f *MQFile) send(text []byte, prio uint32, nonblock bool) (<-chan struct{}, []func(), *MQNotify, error) {
	q := f.q
	q.ns.mu.Lock()
	defer q.ns.mu.Unlock()
	if int64(len(text)) > q.msgSize {
		return nil, nil, nil, unix.EMSGSIZE
	}
	if int64(len(q.msgs)) >= q.maxMsg {
		if nonblock {
			return nil, nil, nil, unix.EAGAIN
		}
		return q.changed, nil, nil, ErrWouldBlock
	}
	at := len(q.msgs)
	for i, m := range q.msgs {
		if m.prio < prio {
			at = i
			break
		}
	}
	q.msgs = slices.Insert(q.msgs, at, mqMessage{prio: prio, text: text})
	q.bytes += int64(len(text))
	var fire *MQNotify
	if len(q.msgs) == 1 && q.notify != nil && q.receivers == 0 {
		fire, q.notify = q.notify, nil
	}
	return nil, q.changedLocked(), fire, nil
}

// The last byte of a SIGEV_THREAD cookie (NOTIFY_WOKENUP, NOTIFY_REMOVED).
const (
	notifyWokenUp = 1
	notifyRemoved = 2
)

// fire tells the registered process, unless it has exited.
func (n *MQNotify) fire(how byte, senderPID int, senderUID uint32) {
	select {
	case <-n.Gone:
		return
	default:
	}
	switch {
	case n.Notify == linux.SigevSignal && how == notifyWokenUp && n.Signo != 0:
		n.Signal(senderPID, senderUID)
	case n.Notify == linux.SigevThread:
		cookie := slices.Clone(n.Cookie)
		cookie[len(cookie)-1] = how
		n.Socket.Deliver(cookie)
	}
}

// Receive takes the oldest message of the highest priority into a buffer
// of size bytes: EMSGSIZE when size is below the queue's message size,
// and with an empty queue EAGAIN (nonblock) or ErrWouldBlock and the
// channel to wait on. A receive that waits is counted in *waiting (a
// message it is there for fires no notification) until it tries again or
// gives up (StopWaiting). The caller gives back the message's charge once
// it has copied it out (UnchargeMessage).
func (f *MQFile) Receive(size int64, nonblock bool, waiting *bool) (text []byte, prio uint32, ch <-chan struct{}, err error) {
	var fns []func()
	text, prio, ch, fns, err = f.receive(size, nonblock, waiting)
	fs.Notify(fns)
	return text, prio, ch, err
}

// receive is Receive under the namespace's lock: it returns the pollers
// to tell once the lock is released.
func (f *MQFile) receive(size int64, nonblock bool, waiting *bool) ([]byte, uint32, <-chan struct{}, []func(), error) {
	q := f.q
	q.ns.mu.Lock()
	defer q.ns.mu.Unlock()
	if *waiting {
		q.receivers--
		*waiting = false
	}
	if size < q.msgSize {
		return nil, 0, nil, nil, unix.EMSGSIZE
	}
	if len(q.msgs) == 0 {
		if nonblock {
			return nil, 0, nil, nil, unix.EAGAIN
		}
		q.receivers++
		*waiting = true
		return nil, 0, q.changed, nil, ErrWouldBlock
	}
	m := q.msgs[0]
	q.msgs[0] = mqMessage{}
	q.msgs = q.msgs[1:]
	q.bytes -= int64(len(m.text))
	return m.text, m.prio, nil, q.changedLocked(), nil
}

// StopWaiting ends a receive's wait that Receive counted.
func (f *MQFile) StopWaiting(waiting *bool) {
	if !*waiting {
		return
	}
	f.q.ns.mu.Lock()
	defer f.q.ns.mu.Unlock()
	f.q.receivers--
	*waiting = false
}

// SetNotify registers n (nil: removes the caller's registration, which
// tells a SIGEV_THREAD one NOTIFY_REMOVED); EBUSY while another process's
// registration stands.
func (f *MQFile) SetNotify(n *MQNotify, pid int) error {
	removed, err := f.setNotify(n, pid)
	if removed != nil {
		removed.fire(notifyRemoved, 0, 0)
	}
	return err
}

// setNotify is SetNotify under the namespace's lock: it returns the
// registration the caller removed, to tell once the lock is released.
func (f *MQFile) setNotify(n *MQNotify, pid int) (*MQNotify, error) {
	q := f.q
	q.ns.mu.Lock()
	defer q.ns.mu.Unlock()
	old := q.notify
	if old != nil {
		select {
		case <-old.Gone:
			q.notify, old = nil, nil // its process exited: void
		default:
		}
	}
	if n == nil {
		if old == nil || old.PID != pid {
			return nil, nil
		}
		q.notify = nil
		return old, nil
	}
	if old != nil {
		return nil, unix.EBUSY
	}
	q.notify = n
	return nil, nil
}

// Flush is close(2) of one of the process's descriptors of the queue: its
// registration goes, as Linux's mqueue_flush_file.
func (f *MQFile) Flush(pid int) { f.SetNotify(nil, pid) }

// Attr returns the queue's attributes (mq_flags is the description's).
func (f *MQFile) Attr() MQAttr {
	q := f.q
	q.ns.mu.Lock()
	defer q.ns.mu.Unlock()
	return MQAttr{MaxMsg: q.maxMsg, MsgSize: q.msgSize, CurMsgs: int64(len(q.msgs))}
}

// status is the line a read of the descriptor gives (mqueue_read_file).
func (q *MQueue) status() string {
	notify, signo, pid := 0, 0, 0
	if n := q.notify; n != nil {
		notify, pid = int(n.Notify), n.PID
		if n.Notify == linux.SigevSignal {
			signo = int(n.Signo)
		}
	}
	return fmt.Sprintf("QSIZE:%-10d NOTIFY:%-5d SIGNO:%-5d NOTIFY_PID:%-6d\n", q.bytes, notify, signo, pid)
}

// ReadTo reads the queue's status line, from where the last read ended.
func (f *MQFile) ReadTo(dst fs.UserIO) (int64, error) {
	return fs.ReadStaged(dst, func(p []byte) (int, error) {
		f.q.ns.mu.Lock()
		defer f.q.ns.mu.Unlock()
		s := f.q.status()
		if f.read >= len(s) {
			return 0, nil
		}
		n := copy(p, s[f.read:])
		f.read += n
		return n, nil
	})
}

// WriteFrom is EINVAL: a queue is written with mq_timedsend.
func (f *MQFile) WriteFrom(fs.UserIO) (int64, error) { return 0, unix.EINVAL }

// Readiness: readable with a message queued, writable with room.
func (f *MQFile) Readiness(mask uint32) uint32 {
	q := f.q
	q.ns.mu.Lock()
	defer q.ns.mu.Unlock()
	var r uint32
	if len(q.msgs) > 0 {
		r |= unix.EPOLLIN | unix.EPOLLRDNORM
	}
	if int64(len(q.msgs)) < q.maxMsg {
		r |= unix.EPOLLOUT | unix.EPOLLWRNORM
	}
	return r & mask
}

// Watch calls notify at every change of the queue until cancelled.
func (f *MQFile) Watch(notify func()) func() { return f.q.notifier.Watch(&f.q.ns.mu, notify) }

// Close drops the descriptor's hold on the queue, which an unlinked queue
// does not survive.
func (f *MQFile) Close() error {
	q := f.q
	q.ns.mu.Lock()
	defer q.ns.mu.Unlock()
	q.opens--
	q.destroyIfUnused()
	return nil
}

func (f *MQFile) Stat() fs.Stat {
	q := f.q
	q.ns.mu.Lock()
	defer q.ns.mu.Unlock()
	return fs.Stat{Dev: fs.DevMqueue, Ino: q.ino, Mode: unix.S_IFREG | q.mode, Nlink: 1, UID: q.uid, GID: q.gid,
		Size: mqFileSize, Blksize: 4096}
}

// MQSettings names the files of /proc/sys/fs/mqueue.
func (ns *Namespace) MQSettings() []string {
	return []string{"queues_max", "msg_max", "msgsize_max", "msg_default", "msgsize_default"}
}

// mqSetting is one of MQSettings' values and its range (Linux's
// ipc/mq_sysctl.c), ns.mu held.
func (ns *Namespace) mqSetting(name string) (v *int, lo, hi int) {
	mq := &ns.mq
	switch name {
	case "queues_max":
		return &mq.queuesMax, 0, 1<<31 - 1
	case "msg_max":
		return &mq.msgMax, mqMinMsgMax, mqHardMsgMax
	case "msgsize_max":
		return &mq.msgsizeMax, mqMinMsgsizeMax, mqHardMsgsizeMax
	case "msg_default":
		return &mq.msgDefault, mqMinMsgMax, mqHardMsgMax
	case "msgsize_default":
		return &mq.msgsizeDefault, mqMinMsgsizeMax, mqHardMsgsizeMax
	}
	return nil, 0, 0
}

// MQSetting is the contents of one of MQSettings' files, without the
// newline.
func (ns *Namespace) MQSetting(name string) string {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if v, _, _ := ns.mqSetting(name); v != nil {
		return strconv.Itoa(*v)
	}
	return ""
}

// MQSet writes one of MQSettings' files: EINVAL out of its range.
func (ns *Namespace) MQSet(name, value string) error {
	fields := strings.Fields(value)
	if len(fields) == 0 {
		return nil
	}
	n, err := strconv.Atoi(fields[0])
	if err != nil {
		return unix.EINVAL
	}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	v, lo, hi := ns.mqSetting(name)
	if v == nil || n < lo || n > hi {
		return unix.EINVAL
	}
	*v = n
	return nil
}
