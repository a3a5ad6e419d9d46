package fs

import (
	"path"
	"strings"
)

// File handles (name_to_handle_at(2), open_by_handle_at(2)): a node is
// named by its inode number within its file system, which the mount it is
// reached through stands for; /proc and /sys give none.

// devOf is the device a node's file system reports.
func devOf(n *Node) uint64 {
	if n.Dev != 0 {
		return n.Dev
	}
	return devInitramfs
}

// Exportable reports whether n's file system gives file handles.
func (n *Node) Exportable() bool { return devOf(n) != DevProc && devOf(n) != DevSysfs }

// MountOf returns the mount of ns (nil: the initial namespace) that n is
// reached through at path p (p need not be canonical): of the mounts of
// n's file system, the one whose target is the longest prefix of p, else
// the first.
func (t *Tree) MountOf(ns *MountNS, n *Node, p string) Mount {
	var best *Mount
	ms := t.Mounts(ns)
	for i := range ms {
		m := &ms[i]
		if m.Dev != devOf(n) {
			continue
		}
		under := m.Target == "/" || p == m.Target || strings.HasPrefix(p, m.Target+"/")
		if best == nil || under && len(m.Target) >= len(best.Target) {
			best = m
		}
	}
	if best == nil {
		return ms[0]
	}
	return *best
}

// FindIno returns the path, under m, of the node numbered ino in m's file
// system; false when none is there (a removed file's handle is stale).
func (t *Tree) FindIno(m Mount, ino uint64) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var walk func(dir *Node, p string) (string, bool)
	walk = func(dir *Node, p string) (string, bool) {
		if dir.Ino == ino {
			return p, true
		}
		for name, c := range dir.Children {
			if devOf(c) != m.Dev || c.mountedOn != 0 {
				continue // another file system, or one mounted here
			}
			if c.Ino == ino {
				return path.Join(p, name), true
			}
			if c.IsDir() {
				if found, ok := walk(c, path.Join(p, name)); ok {
					return found, true
				}
			}
		}
		return "", false
	}
	return walk(m.Root, m.Target)
}
