// Package fs owns files: the tree unpacked from an initramfs or a root
// disk, path lookup, mounts, file descriptions, pipes, epoll, eventfd,
// timerfd and character devices. A Tree is one kernel's VFS and owns its
// per-kernel state (file system types, devices, mounts, data accounting,
// the root image's cache, record locks): two trees share nothing.
package fs
