package boot

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
)

// MountTmpfs mounts devtmpfs at /dev (the tree's own, PopulateDev's) and
// a tmpfs where Debian has one: /dev/shm (made here), /run and /tmp, each
// only when the initramfs left the directory empty (files it put there
// stay visible).
func MountTmpfs(tree *fs.Tree) error {
	if _, err := tree.Lookup(nil, "/dev/shm", true); err != nil {
		if err := tree.Mkdir(nil, "/dev/shm", 0o1777); err != nil {
			return err
		}
	}
	if err := tree.Mount(nil, "devtmpfs", "/dev", "devtmpfs", unix.MS_NOSUID, ""); err != nil {
		return fmt.Errorf("mount /dev: %v", err)
	}
	for _, m := range []struct{ dir, data string }{{"/dev/shm", ""}, {"/run", "mode=755"}, {"/tmp", ""}} {
		d, err := tree.Lookup(nil, m.dir, true)
		if err != nil || !d.IsDir() || len(tree.List(d)) > 0 {
			continue
		}
		if err := tree.Mount(nil, "tmpfs", m.dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, m.data); err != nil {
			return fmt.Errorf("mount %s: %v", m.dir, err)
		}
	}
	return nil
}
