package ipc

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The listings of /proc/sysvipc and the settings of /proc/sys/kernel, in
// Linux's formats (ipc/util.c, ipc/ipc_sysctl.c).

// sorted returns a table's objects by index, as Linux's idr lists them.
func (t *table) sorted() []object {
	idx := make([]int, 0, len(t.objects))
	for i := range t.objects {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	objs := make([]object, len(idx))
	for i, x := range idx {
		objs[i] = t.objects[x]
	}
	return objs
}

// Listing is /proc/sysvipc/KIND (shm, sem or msg): a header and a line per
// object.
func (ns *Namespace) Listing(kind string) []byte {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	var b bytes.Buffer
	switch kind {
	case "shm":
		b.WriteString("       key      shmid perms                  size  cpid  lpid nattch   uid   gid  cuid  cgid      atime      dtime      ctime                   rss                  swap\n")
		for _, o := range ns.shm.sorted() {
			s := o.(*Segment)
			fmt.Fprintf(&b, "%10d %10d  %4o %21d %5d %5d  %5d %5d %5d %5d %5d %10d %10d %10d %21d %21d\n",
				s.Key, s.id(), s.Mode, s.size, s.cpid, s.lpid, s.nattch(), s.UID, s.GID, s.CUID, s.CGID,
				s.atime, s.dtime, s.Ctime, s.mem.Resident()*4096, 0)
		}
	case "sem":
		b.WriteString("       key      semid perms      nsems   uid   gid  cuid  cgid      otime      ctime\n")
		for _, o := range ns.sem.sorted() {
			s := o.(*SemSet)
			fmt.Fprintf(&b, "%10d %10d  %4o %10d %5d %5d %5d %5d %10d %10d\n",
				s.Key, s.id(), s.Mode, len(s.sems), s.UID, s.GID, s.CUID, s.CGID, s.otime, s.Ctime)
		}
	case "msg":
		b.WriteString("       key      msqid perms      cbytes       qnum lspid lrpid   uid   gid  cuid  cgid      stime      rtime      ctime\n")
		for _, o := range ns.msg.sorted() {
			q := o.(*Queue)
			fmt.Fprintf(&b, "%10d %10d  %4o  %10d %10d %5d %5d %5d %5d %5d %5d %10d %10d %10d\n",
				q.Key, q.id(), q.Mode, q.bytes, len(q.msgs), q.lspid, q.lrpid, q.UID, q.GID, q.CUID, q.CGID,
				q.stime, q.rtime, q.Ctime)
		}
	}
	return b.Bytes()
}

// Settings names the files of /proc/sys/kernel that IPC owns.
func (ns *Namespace) Settings() []string {
	return []string{"shmmax", "shmall", "shmmni", "shm_next_id", "sem", "sem_next_id", "msgmax", "msgmnb", "msgmni", "msg_next_id"}
}

// Setting is the contents of one of Settings' files, without the newline.
func (ns *Namespace) Setting(name string) string {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	switch name {
	case "shmmax":
		return strconv.FormatUint(ns.shmMax, 10)
	case "shmall":
		return strconv.FormatUint(ns.shmAll, 10)
	case "shmmni":
		return strconv.Itoa(ns.shm.max)
	case "sem":
		return fmt.Sprintf("%d\t%d\t%d\t%d", ns.semMsl, ns.semMns, ns.semOpm, ns.sem.max)
	case "msgmax":
		return strconv.Itoa(ns.msgMax)
	case "msgmnb":
		return strconv.Itoa(ns.msgMnb)
	case "msgmni":
		return strconv.Itoa(ns.msg.max)
	case "shm_next_id":
		return strconv.Itoa(ns.shm.nextID)
	case "sem_next_id":
		return strconv.Itoa(ns.sem.nextID)
	case "msg_next_id":
		return strconv.Itoa(ns.msg.nextID)
	}
	return ""
}

// Set writes one of Settings' files: EINVAL for a value that is not a
// number in the setting's range, as Linux's proc_dointvec_minmax.
func (ns *Namespace) Set(name, value string) error {
	fields := strings.Fields(value)
	if len(fields) == 0 {
		return nil
	}
	want := 1
	if name == "sem" {
		want = 4
	}
	if len(fields) < want {
		return unix.EINVAL
	}
	nums := make([]uint64, want)
	for i := range nums {
		n, err := strconv.ParseUint(fields[i], 10, 64)
		if err != nil {
			return unix.EINVAL
		}
		nums[i] = n
	}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	const intMax = 1<<31 - 1
	switch name {
	case "shmmax":
		ns.shmMax = nums[0]
		return nil
	case "shmall":
		ns.shmAll = nums[0]
		return nil
	}
	for _, n := range nums {
		if n > intMax {
			return unix.EINVAL
		}
	}
	n := int(nums[0])
	switch name {
	case "shmmni", "msgmni":
		if n > ipcMni {
			return unix.EINVAL
		}
		if name == "shmmni" {
			ns.shm.max = n
		} else {
			ns.msg.max = n
		}
	case "sem":
		if nums[3] > ipcMni {
			return unix.EINVAL
		}
		ns.semMsl, ns.semMns, ns.semOpm, ns.sem.max = n, int(nums[1]), int(nums[2]), int(nums[3])
	case "msgmax":
		ns.msgMax = n
	case "msgmnb":
		ns.msgMnb = n
	case "shm_next_id":
		ns.shm.nextID = n
	case "sem_next_id":
		ns.sem.nextID = n
	case "msg_next_id":
		ns.msg.nextID = n
	}
	return nil
}
