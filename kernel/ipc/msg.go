package ipc

import (
	"slices"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/mm"
)

// Linux's message queue limits (linux/msg.h) and msgrcv's flags.
const (
	msgMax  = 8192  // MSGMAX: the largest message
	msgMnb  = 16384 // MSGMNB: a queue's default capacity in bytes
	msgMni  = 32000 // MSGMNI: the most queues
	msgSsz  = 16
	msgPool = msgMni * msgMnb / 1024
	// msgHeader is what a queued message costs the kernel besides its
	// text (Linux's struct msg_msg), charged with it.
	msgHeader = 48

	MsgNoerror = 0o10000
	MsgExcept  = 0o20000
	MsgCopy    = 0o40000
	MsgNowait  = flagNowait
)

// Message is one message: its type (positive) and text.
type Message struct {
	Type int64
	Text []byte
}

// Queue is a message queue.
type Queue struct {
	Perm
	msgs         []Message
	bytes        int // of text queued
	qbytes       int // capacity, in bytes and in messages
	stime, rtime int64
	lspid, lrpid int
}

func (q *Queue) perm() *Perm { return &q.Perm }

// MsgGet implements msgget(2).
func (ns *Namespace) MsgGet(key int32, flags int, c Caller) (int, error) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	return ns.msg.get(key, flags, c, func() (object, error) { return &Queue{qbytes: ns.msgMnb}, nil },
		func(object) error { return nil }, func(object) {})
}

// queue finds the queue an id names (the one of an earlier try, w) and
// checks the caller's access.
func (ns *Namespace) queue(id int, c Caller, flag uint32, w *Wait) (*Queue, error) {
	o, err := ns.msg.lookup(id, w)
	if err != nil {
		return nil, err
	}
	q := o.(*Queue)
	return q, q.access(c, flag)
}

// MsgCheckSize is msgsnd's check of a message before it is read from
// user memory: EINVAL for a size over msgmax or negative.
func (ns *Namespace) MsgCheckSize(size int64) error {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if size < 0 || size > int64(ns.msgMax) {
		return unix.EINVAL
	}
	return nil
}

// ChargeMessage takes what a message of size bytes costs the kernel from
// its memory budget before its text is read (ENOMEM past it): a queued
// message keeps the charge until it is received or its queue removed;
// one not queued gives it back (UnchargeMessage).
func ChargeMessage(size int) error {
	if mm.Charged.ChargeBuffer(msgHeader+size) != nil {
		return unix.ENOMEM
	}
	return nil
}

// UnchargeMessage gives back the charge of a message not queued.
func UnchargeMessage(size int) { mm.Charged.Uncharge(msgHeader + size) }

// MsgSend implements msgsnd(2) once m has been read and charged: the message is
// queued, or with a full queue EAGAIN (IPC_NOWAIT) or ErrWouldBlock and
// the channel to wait on. EIDRM when the queue of an earlier try (w) went
// meanwhile.
func (ns *Namespace) MsgSend(id int, m Message, flags int, c Caller, w *Wait) (<-chan struct{}, error) {
	if id < 0 || m.Type < 1 {
		return nil, unix.EINVAL
	}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	q, err := ns.queue(id, c, 0o222, w)
	if err != nil {
		return nil, err
	}
	if len(m.Text)+q.bytes > q.qbytes || len(q.msgs)+1 > q.qbytes {
		if flags&flagNowait != 0 {
			return nil, unix.EAGAIN
		}
		return q.changed, ErrWouldBlock
	}
	q.msgs = append(q.msgs, m)
	q.bytes += len(m.Text)
	ns.msgs++
	ns.msgBytes += len(m.Text)
	q.lspid, q.stime = c.PID, ns.seconds()
	q.notify()
	return nil, nil
}

// MsgReceive implements msgrcv(2): the message typ selects (0 the first,
// positive the first of that type or with MSG_EXCEPT of another, negative
// the lowest type up to its magnitude; with MSG_COPY the one at that
// index, copied and left in place), its text cut to size with
// MSG_NOERROR (else E2BIG; a copy into a smaller buffer is EINVAL, as
// Linux's copy_msg). With none, ENOMSG (IPC_NOWAIT) or ErrWouldBlock and
// the channel to wait on.
func (ns *Namespace) MsgReceive(id int, size int64, typ int64, flags int, c Caller, w *Wait) (Message, <-chan struct{}, error) {
	if id < 0 || size < 0 {
		return Message{}, nil, unix.EINVAL
	}
	if flags&MsgCopy != 0 && (flags&flagNowait == 0 || flags&MsgExcept != 0) {
		return Message{}, nil, unix.EINVAL
	}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	q, err := ns.queue(id, c, 0o444, w)
	if err != nil {
		return Message{}, nil, err
	}
	i := q.find(typ, flags)
	if i < 0 {
		if flags&flagNowait != 0 {
			return Message{}, nil, unix.ENOMSG
		}
		return Message{}, q.changed, ErrWouldBlock
	}
	m := q.msgs[i]
	if int64(len(m.Text)) > size {
		if flags&MsgNoerror == 0 {
			return Message{}, nil, unix.E2BIG
		}
		if flags&MsgCopy != 0 {
			return Message{}, nil, unix.EINVAL
		}
		m.Text = m.Text[:size]
	}
	if flags&MsgCopy != 0 {
		return m, nil, nil
	}
	ns.dequeue(q, i)
	q.lrpid, q.rtime = c.PID, ns.seconds()
	q.notify()
	return m, nil, nil
}

// dequeue takes message i out of q.
func (ns *Namespace) dequeue(q *Queue, i int) {
	n := len(q.msgs[i].Text)
	mm.Charged.Uncharge(msgHeader + n)
	q.bytes -= n
	ns.msgs--
	ns.msgBytes -= n
	q.msgs = slices.Delete(q.msgs, i, i+1)
}

// find returns the index of the message msgrcv's type and flags select,
// or -1.
func (q *Queue) find(typ int64, flags int) int {
	switch {
	case flags&MsgCopy != 0:
		if typ >= 0 && typ < int64(len(q.msgs)) {
			return int(typ)
		}
		return -1
	case typ == 0:
		if len(q.msgs) > 0 {
			return 0
		}
		return -1
	case typ < 0:
		limit := -typ
		if typ == -1<<63 {
			limit = 1<<63 - 1
		}
		best := -1
		for i, m := range q.msgs {
			if m.Type <= limit && (best < 0 || m.Type < q.msgs[best].Type) {
				best = i
			}
		}
		return best
	}
	for i, m := range q.msgs {
		if (m.Type == typ) == (flags&MsgExcept == 0) {
			return i
		}
	}
	return -1
}

// MsgStat implements msgctl's IPC_STAT (by id; returns 0) and MSG_STAT and
// MSG_STAT_ANY (by index; return the id).
func (ns *Namespace) MsgStat(idOrIndex int, byIndex, any bool, c Caller) (linux.MsqidDs, int, error) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	var q *Queue
	ret := 0
	if byIndex {
		o, id, err := ns.msg.statByIndex(idOrIndex, c, any)
		if err != nil {
			return linux.MsqidDs{}, 0, err
		}
		q, ret = o.(*Queue), id
	} else {
		var err error
		if q, err = ns.queue(idOrIndex, c, 0o444, nil); err != nil {
			return linux.MsqidDs{}, 0, err
		}
	}
	return linux.MsqidDs{Perm: q.Perm.linux(), Stime: q.stime, Rtime: q.rtime, Ctime: q.Ctime,
		Cbytes: uint64(q.bytes), Qnum: uint64(len(q.msgs)), Qbytes: uint64(q.qbytes),
		Lspid: int32(q.lspid), Lrpid: int32(q.lrpid)}, ret, nil
}

// MsgSet implements msgctl's IPC_SET: the owner, mode and capacity; a
// capacity above MSGMNB needs root (CAP_SYS_RESOURCE).
func (ns *Namespace) MsgSet(id int, ds linux.MsqidDs, c Caller) error {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	o, err := ns.msg.byID(id)
	if err != nil {
		return err
	}
	q := o.(*Queue)
	if !q.owns(c) || ds.Qbytes > uint64(ns.msgMnb) && !c.Cred.Privileged() {
		return unix.EPERM
	}
	q.set(ds.Perm, ns.seconds())
	q.qbytes = int(min(ds.Qbytes, 1<<31-1))
	q.notify() // senders may fit now
	return nil
}

// MsgRemove implements msgctl's IPC_RMID.
func (ns *Namespace) MsgRemove(id int, c Caller) error {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	o, err := ns.msg.byID(id)
	if err != nil {
		return err
	}
	if !o.perm().owns(c) {
		return unix.EPERM
	}
	q := o.(*Queue)
	for len(q.msgs) > 0 {
		ns.dequeue(q, len(q.msgs)-1)
	}
	ns.msg.remove(o)
	return nil
}

// MsgInfo implements msgctl's IPC_INFO (the limits) and MSG_INFO (what is
// in use); both return the highest index in use.
func (ns *Namespace) MsgInfo(usage bool) (linux.Msginfo, int) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	info := linux.Msginfo{Pool: msgPool, Map: msgMnb, Max: int32(ns.msgMax), Mnb: int32(ns.msgMnb), Mni: int32(ns.msg.max),
		Ssz: msgSsz, Tql: msgMnb, Seg: 0xffff}
	if usage {
		info.Pool, info.Map, info.Tql = int32(len(ns.msg.objects)), int32(ns.msgs), int32(ns.msgBytes)
	}
	return info, ns.msg.highest()
}
