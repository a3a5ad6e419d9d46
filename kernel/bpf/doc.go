// Package bpf owns eBPF objects (bpf(2)): array and hash maps, and
// socket filter programs, which a verifier proves safe before an
// interpreter runs them on the datagrams a socket receives
// (SO_ATTACH_BPF). The system call (syscall/sys_bpf.go) decodes
// union bpf_attr and calls in here; maps and programs are files, open
// as anonymous inodes, and what they hold is charged to mm.Charged.
package bpf
