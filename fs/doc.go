// Package fs owns files: the in-memory tree unpacked from the initramfs,
// path lookup, and (later) the VFS, pipes, epoll and eventfd.
package fs
