package procfs

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"strings"
)

// /proc/config.gz: the kernel's configuration in Linux's option names, as
// Linux's IKCONFIG_PROC serves it. Programs (LTP's needs_kconfigs, above
// all) read it to learn what the kernel has; an option listed here must
// be one the kernel really implements, so that a test of a feature we
// lack ends in TCONF, not in a failure.

// KernelConfig lists the options set to y: each line names the option and
// what of the kernel it stands for. Add an option when its feature lands
// (CONFIG_SIGNALFD came with signalfd).
var KernelConfig = []string{
	"CONFIG_RISCV",     // the architecture
	"CONFIG_64BIT",     // riscv64
	"CONFIG_MMU",       // Sv39 page tables
	"CONFIG_SMP",       // every hart QEMU gives
	"CONFIG_MULTIUSER", // uids, gids, setuid and the rest
	"CONFIG_SYSCTL",    // /proc/sys
	"CONFIG_PROC_FS",   // /proc
	"CONFIG_SYSFS",     // /sys
	"CONFIG_TMPFS",     // tmpfs mounts
	"CONFIG_SHMEM",     // MAP_SHARED anonymous memory, /dev/shm
	"CONFIG_DEVTMPFS",
	"CONFIG_DEVTMPFS_MOUNT",
	"CONFIG_BLK_DEV_INITRD", // the root from an initramfs
	"CONFIG_BINFMT_ELF",
	"CONFIG_BINFMT_SCRIPT", // #! lines
	"CONFIG_FUTEX",
	"CONFIG_EPOLL",
	"CONFIG_EVENTFD",
	"CONFIG_TIMERFD",
	"CONFIG_SIGNALFD",     // signalfd4 (kernel/signalfd.go)
	"CONFIG_MEMBARRIER",   // membarrier (syscall/sys_membarrier.go)
	"CONFIG_FHANDLE",      // name_to_handle_at, open_by_handle_at
	"CONFIG_INOTIFY_USER", // inotify (fs/inotify.go)
	"CONFIG_DNOTIFY",      // fcntl F_NOTIFY (fs/dnotify.go)
	"CONFIG_FANOTIFY",     // fanotify (fs/fanotify.go)
	"CONFIG_FANOTIFY_ACCESS_PERMISSIONS",
	"CONFIG_BSD_PROCESS_ACCT",    // acct(2) (kernel/acct.go)
	"CONFIG_BSD_PROCESS_ACCT_V3", // its records are struct acct_v3
	"CONFIG_COREDUMP",            // core files (kernel/coredump.go)
	"CONFIG_ELF_CORE",
	"CONFIG_POSIX_TIMERS",      // timer_create and the rest (kernel/posixtimers.go)
	"CONFIG_POSIX_MQUEUE",      // mq_open and the rest (kernel/ipc/mqueue.go)
	"CONFIG_AIO",               // io_setup and the rest (kernel/aio)
	"CONFIG_KEYS",              // add_key, request_key, keyctl (kernel/keys)
	"CONFIG_USERFAULTFD",       // userfaultfd and /dev/userfaultfd (kernel/userfaultfd.go)
	"CONFIG_SECURITY_LANDLOCK", // landlock_create_ruleset and the rest (fs/landlock.go)
	// checkpoint/restore: kcmp, the *_next_id and ns_last_pid settings,
	// /proc/PID/map_files, clone3's set_tid, PR_SET_MM, TFD_IOC_SET_TICKS
	"CONFIG_CHECKPOINT_RESTORE",
	"CONFIG_KCMP",
	"CONFIG_SECCOMP", // strict mode and classic BPF filters (kernel/seccomp.go)
	"CONFIG_SECCOMP_FILTER",
	"CONFIG_NAMESPACES", // UTS, IPC, time and PID namespaces (kernel/namespace.go)
	"CONFIG_UTS_NS",
	"CONFIG_IPC_NS",
	"CONFIG_TIME_NS",      // kernel/timens.go
	"CONFIG_PID_NS",       // kernel/pidns.go
	"CONFIG_FILE_LOCKING", // flock, fcntl locks
	"CONFIG_ADVISE_SYSCALLS",
	"CONFIG_HIGH_RES_TIMERS",
	"CONFIG_NET",
	"CONFIG_UNIX",
	"CONFIG_INET",
	"CONFIG_IPV6",
	"CONFIG_VIRTIO",
	"CONFIG_VIRTIO_MMIO",
	"CONFIG_VIRTIO_NET",
	"CONFIG_VIRTIO_BLK",
	"CONFIG_HW_RANDOM_VIRTIO",
	"CONFIG_SERIAL_8250",
	"CONFIG_SERIAL_8250_CONSOLE",
	"CONFIG_IKCONFIG",
	"CONFIG_IKCONFIG_PROC", // this file
}

// KernelConfigNotSet lists options the kernel lacks that programs ask
// about; Linux's .config says "is not set" for them.
var KernelConfigNotSet = []string{
	"CONFIG_MODULES",
	"CONFIG_IO_URING",
	"CONFIG_USER_NS",
	"CONFIG_NET_NS",
	"CONFIG_SWAP",
	"CONFIG_SECURITY_LOCKDOWN_LSM",
	"CONFIG_BLK_DEV_LOOP",
	"CONFIG_QUOTA",
	"CONFIG_MEMCG",
	"CONFIG_CGROUPS",
}

// kernelConfigText is the configuration as a .config file.
func kernelConfigText() []byte {
	var b strings.Builder
	b.WriteString("#\n# Automatically generated file; DO NOT EDIT.\n# Linux/riscv Jiege-Go Kernel Configuration\n#\n")
	for _, o := range KernelConfig {
		b.WriteString(o + "=y\n")
	}
	for _, o := range KernelConfigNotSet {
		b.WriteString("# " + o + " is not set\n")
	}
	return []byte(b.String())
}

// gzipStored wraps data in a gzip member whose deflate stream is stored
// blocks: a valid gzip file that zcat reads, without linking a compressor
// into the kernel for a file of a few kilobytes.
func gzipStored(data []byte) []byte {
	sum, size := crc32.ChecksumIEEE(data), uint32(len(data))
	var b bytes.Buffer
	b.Write([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3}) // magic, deflate, no flags, no mtime, Unix
	for first := true; first || len(data) > 0; first = false {
		n := min(len(data), 0xffff)
		final := byte(0)
		if n == len(data) {
			final = 1
		}
		b.WriteByte(final) // BFINAL, BTYPE 00: stored
		binary.Write(&b, binary.LittleEndian, uint16(n))
		binary.Write(&b, binary.LittleEndian, ^uint16(n))
		b.Write(data[:n])
		data = data[n:]
	}
	binary.Write(&b, binary.LittleEndian, sum)
	binary.Write(&b, binary.LittleEndian, size)
	return b.Bytes()
}
