/* A resource-aware system call fuzzer run as init (tests/fuzz_test.go), in
 * the way of syzkaller: each call is described by the resources it consumes
 * and produces (descriptors of each kind, mappings, child processes), and a
 * program is 5-30 calls that create, connect, fill, drain and tear those
 * down, spread over 1-4 threads. Programs are generated from the seed and
 * their number alone, so `fuzz print SEED P` (any riscv64 Linux, qemu-riscv64
 * too) prints program P of SEED, and `fuzz SEED 1 1 P` runs it alone.
 *
 * Usage: fuzz SEED PROGRAMS WORKERS [FIRST]: WORKERS processes run programs
 * FIRST.. FIRST+PROGRAMS-1 at once, each in a child process of its own
 * group that is killed with everything it forked when it ends. A worker
 * prints "fuzz: wW pP" before program P, so a kernel panic names the
 * programs that were running. The main thread of a program gets SIGALRM
 * every 30 ms (the other threads block it), so its blocking calls end with
 * EINTR; the other threads may block for good, and end with the program's
 * exit_group. A program still running after 3 s is killed and printed; one
 * that SIGKILL does not end within 10 s more is a kernel hang. A program
 * the kernel killed (a handler bug, or the OOM killer) is printed too.
 *
 * About 100 calls over 31 kinds of resource: pipes, Unix, TCP and UDP
 * sockets on loopback, eventfd, timerfd, signalfd, epoll, inotify, memfd
 * and files, io_uring and aio, POSIX and System V IPC, keys, perf events,
 * BPF maps, POSIX timers, directories of /proc and /sys, mappings and
 * children; their flags, counts, lengths and offsets are drawn with a
 * bias to the edges (edge(), flags_of()). What could end the whole test
 * is left out: no netlink or packet socket, no real-time policy, no CPU
 * or process-count limit, no seccomp, no writes under /proc but a
 * program's own name, nothing that populates a mapping larger than 1 MiB;
 * the System V objects a program leaves are removed by its worker. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/bpf.h>
#include <linux/close_range.h>
#include <linux/futex.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <mqueue.h>
#include <sched.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/sysinfo.h>
#include <sys/timex.h>
#include <sys/xattr.h>
#include <sys/file.h>
#include <grp.h>
#include <sys/fsuid.h>
#include <sys/sendfile.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Resource kinds. K_RECVD is a descriptor received over a Unix socket,
 * whose kind the generator cannot know. */
enum {
	K_NONE,
	K_PIPE_R,
	K_PIPE_W,
	K_UNIX_STREAM,
	K_UNIX_DGRAM,
	K_UNIX_SEQ,
	K_TCP_LISTEN,
	K_TCP,
	K_UDP,
	K_EVENTFD,
	K_TIMERFD,
	K_EPOLL,
	K_INOTIFY,
	K_MEMFD,
	K_FILE,
	K_PIDFD,
	K_RECVD,
	K_MAP,
	K_CHILD,
	K_SIGNALFD,
	K_URING,
	K_AIO, /* an aio context */
	K_MQ,
	K_MSGQ, /* System V identifiers */
	K_SEM,
	K_SHM,
	K_KEY,
	K_PERF,
	K_BPFMAP,
	K_TIMER, /* a POSIX timer */
	K_DIR,
	K_SAME, /* an output of the kind of the first input; 31 at most (masks are 32 bits) */
};
#define B(k) (1u << (k))
#define UNIXS (B(K_UNIX_STREAM) | B(K_UNIX_DGRAM) | B(K_UNIX_SEQ))
#define SOCKS (UNIXS | B(K_TCP) | B(K_UDP))
#define FILES (B(K_MEMFD) | B(K_FILE))
#define FDS                                                                                                  \
	(B(K_PIPE_R) | B(K_PIPE_W) | SOCKS | B(K_TCP_LISTEN) | B(K_EVENTFD) | B(K_TIMERFD) | B(K_EPOLL) |        \
	 B(K_INOTIFY) | FILES | B(K_PIDFD) | B(K_RECVD) | B(K_SIGNALFD) | B(K_URING) | B(K_MQ) | B(K_PERF) |    \
	 B(K_BPFMAP) | B(K_DIR))
#define READABLE                                                                                             \
	(B(K_PIPE_R) | SOCKS | B(K_EVENTFD) | B(K_TIMERFD) | B(K_INOTIFY) | FILES | B(K_RECVD) | B(K_SIGNALFD) | \
	 B(K_PERF) | B(K_DIR))
#define WRITABLE (B(K_PIPE_W) | SOCKS | B(K_EVENTFD) | FILES | B(K_RECVD))
#define PIPES (B(K_PIPE_R) | B(K_PIPE_W))

enum {
	O_PIPE,
	O_SOCKETPAIR,
	O_TCP_LISTEN,
	O_TCP_CONNECT,
	O_ACCEPT,
	O_UDP,
	O_UDP_CONNECT,
	O_SENDTO,
	O_EVENTFD,
	O_TIMERFD,
	O_TIMERFD_SET,
	O_EPOLL,
	O_EPOLL_CTL,
	O_EPOLL_LOOP,
	O_EPOLL_WAIT,
	O_INOTIFY,
	O_INOTIFY_WATCH,
	O_MEMFD,
	O_OPEN,
	O_UNLINK,
	O_TRUNCATE,
	O_FALLOCATE,
	O_PWRITE,
	O_MMAP_ANON,
	O_MMAP_FD,
	O_MUNMAP,
	O_MPROTECT,
	O_MREMAP,
	O_MADVISE,
	O_TOUCH,
	O_FUTEX,
	O_FORK,
	O_KILL,
	O_WAIT,
	O_PIDFD,
	O_WAITID,
	O_READ,
	O_WRITE,
	O_FILL,
	O_DRAIN,
	O_SEND_FDS,
	O_RECV_FDS,
	O_SHUTDOWN,
	O_SOCKOPT,
	O_SPLICE,
	O_SENDFILE,
	O_POLL,
	O_DUP,
	O_DUP3,
	O_FCNTL,
	O_CLOSE,
	O_SIGNALFD,
	O_SIGNAL,
	O_PIDFD_SIGNAL,
	O_TIMER,
	O_TIMER_OP,
	O_URING,
	O_URING_ENTER,
	O_URING_REGISTER,
	O_AIO,
	O_AIO_SUBMIT,
	O_MQ,
	O_MQ_OP,
	O_MSGGET,
	O_MSG_OP,
	O_SEMGET,
	O_SEM_OP,
	O_SHMGET,
	O_SHMAT,
	O_SHMCTL,
	O_ADD_KEY,
	O_KEYCTL,
	O_PERF,
	O_PERF_OP,
	O_BPF_MAP,
	O_BPF_ELEM,
	O_BPF_PROG,
	O_OPENDIR,
	O_GETDENTS,
	O_READ_PROC,
	O_LOCK,
	O_FILE_OP,
	O_COPY_RANGE,
	O_VMSPLICE,
	O_PROCESS_VM,
	O_MLOCK,
	O_SOCKET,
	O_GETSOCKOPT,
	O_MMSG,
	O_PRCTL,
	O_RLIMIT,
	O_SCHED,
	O_UNSHARE,
	O_CREDS,
	O_CLOSE_RANGE,
	O_MISC,
	NOPS
};

struct opdef {
	const char *name;
	uint32_t in[3];  /* kind masks of the inputs, 0: none */
	uint8_t out[3];  /* kinds of the outputs, K_NONE: none */
	uint8_t weight;
};

static const struct opdef ops[NOPS] = {
	[O_PIPE] = {"pipe2", {0}, {K_PIPE_R, K_PIPE_W}, 6},
	[O_SOCKETPAIR] = {"socketpair", {0}, {K_UNIX_STREAM, K_UNIX_STREAM}, 8},
	[O_TCP_LISTEN] = {"tcp_listen", {0}, {K_TCP_LISTEN}, 3},
	[O_TCP_CONNECT] = {"tcp_connect", {B(K_TCP_LISTEN)}, {K_TCP}, 4},
	[O_ACCEPT] = {"accept4", {B(K_TCP_LISTEN)}, {K_TCP}, 4},
	[O_UDP] = {"udp_bind", {0}, {K_UDP}, 2},
	[O_UDP_CONNECT] = {"udp_connect", {B(K_UDP), B(K_UDP)}, {0}, 2},
	[O_SENDTO] = {"udp_sendto", {B(K_UDP), B(K_UDP)}, {0}, 3},
	[O_EVENTFD] = {"eventfd2", {0}, {K_EVENTFD}, 3},
	[O_TIMERFD] = {"timerfd", {0}, {K_TIMERFD}, 2},
	[O_TIMERFD_SET] = {"timerfd_settime", {B(K_TIMERFD)}, {0}, 2},
	[O_EPOLL] = {"epoll_create1", {0}, {K_EPOLL}, 5},
	[O_EPOLL_CTL] = {"epoll_ctl", {B(K_EPOLL), FDS}, {0}, 10},
	[O_EPOLL_LOOP] = {"epoll_loop", {B(K_EPOLL), B(K_EPOLL)}, {0}, 3},
	[O_EPOLL_WAIT] = {"epoll_wait", {B(K_EPOLL)}, {0}, 6},
	[O_INOTIFY] = {"inotify_init1", {0}, {K_INOTIFY}, 2},
	[O_INOTIFY_WATCH] = {"inotify_watch", {B(K_INOTIFY)}, {0}, 2},
	[O_MEMFD] = {"memfd_create", {0}, {K_MEMFD}, 3},
	[O_OPEN] = {"open", {0}, {K_FILE}, 3},
	[O_UNLINK] = {"unlink", {0}, {0}, 1},
	[O_TRUNCATE] = {"ftruncate", {FILES}, {0}, 3},
	[O_FALLOCATE] = {"fallocate", {FILES}, {0}, 1},
	[O_PWRITE] = {"pwrite64", {FILES}, {0}, 2},
	[O_MMAP_ANON] = {"mmap_anon", {0}, {K_MAP}, 3},
	[O_MMAP_FD] = {"mmap_fd", {FILES}, {K_MAP}, 3},
	[O_MUNMAP] = {"munmap", {B(K_MAP)}, {0}, 2},
	[O_MPROTECT] = {"mprotect", {B(K_MAP)}, {0}, 2},
	[O_MREMAP] = {"mremap", {B(K_MAP)}, {0}, 2},
	[O_MADVISE] = {"madvise", {B(K_MAP)}, {0}, 2},
	[O_TOUCH] = {"touch", {B(K_MAP)}, {0}, 3},
	[O_FUTEX] = {"futex", {0}, {0}, 4},
	[O_FORK] = {"fork", {FDS}, {K_CHILD}, 3},
	[O_KILL] = {"kill", {B(K_CHILD)}, {0}, 2},
	[O_WAIT] = {"wait4", {B(K_CHILD)}, {0}, 2},
	[O_PIDFD] = {"pidfd_open", {B(K_CHILD)}, {K_PIDFD}, 1},
	[O_WAITID] = {"waitid_pidfd", {B(K_PIDFD)}, {0}, 1},
	[O_READ] = {"read", {READABLE}, {0}, 8},
	[O_WRITE] = {"write", {WRITABLE}, {0}, 8},
	[O_FILL] = {"fill", {WRITABLE}, {0}, 6},
	[O_DRAIN] = {"drain", {READABLE}, {0}, 4},
	[O_SEND_FDS] = {"sendmsg_rights", {UNIXS, FDS, FDS}, {0}, 5},
	[O_RECV_FDS] = {"recvmsg_rights", {UNIXS}, {K_RECVD, K_RECVD}, 4},
	[O_SHUTDOWN] = {"shutdown", {SOCKS}, {0}, 2},
	[O_SOCKOPT] = {"setsockopt_buf", {SOCKS}, {0}, 2},
	[O_SPLICE] = {"splice", {READABLE, WRITABLE}, {0}, 3},
	[O_SENDFILE] = {"sendfile", {FILES, WRITABLE}, {0}, 2},
	[O_POLL] = {"poll", {FDS, FDS, FDS}, {0}, 4},
	[O_DUP] = {"dup", {FDS}, {K_SAME}, 3},
	[O_DUP3] = {"dup3", {FDS, FDS}, {0}, 2},
	[O_FCNTL] = {"fcntl", {FDS}, {0}, 3},
	[O_CLOSE] = {"close", {FDS}, {0}, 8},
	[O_SIGNALFD] = {"signalfd4", {0}, {K_SIGNALFD}, 2},
	[O_SIGNAL] = {"signal_self", {0}, {0}, 3},
	[O_PIDFD_SIGNAL] = {"pidfd_signal", {B(K_PIDFD)}, {K_RECVD}, 1},
	[O_TIMER] = {"timer_create", {0}, {K_TIMER}, 2},
	[O_TIMER_OP] = {"timer_op", {B(K_TIMER)}, {0}, 2},
	[O_URING] = {"io_uring_setup", {0}, {K_URING}, 2},
	[O_URING_ENTER] = {"io_uring_enter", {B(K_URING), FDS}, {0}, 5},
	[O_URING_REGISTER] = {"io_uring_register", {B(K_URING), FDS}, {0}, 1},
	[O_AIO] = {"io_setup", {0}, {K_AIO}, 1},
	[O_AIO_SUBMIT] = {"io_submit", {B(K_AIO), FDS}, {0}, 3},
	[O_MQ] = {"mq_open", {0}, {K_MQ}, 2},
	[O_MQ_OP] = {"mq_op", {B(K_MQ)}, {0}, 3},
	[O_MSGGET] = {"msgget", {0}, {K_MSGQ}, 2},
	[O_MSG_OP] = {"msg_op", {B(K_MSGQ)}, {0}, 4},
	[O_SEMGET] = {"semget", {0}, {K_SEM}, 2},
	[O_SEM_OP] = {"sem_op", {B(K_SEM)}, {0}, 4},
	[O_SHMGET] = {"shmget", {0}, {K_SHM}, 2},
	[O_SHMAT] = {"shmat", {B(K_SHM)}, {K_MAP}, 2},
	[O_SHMCTL] = {"shmctl", {B(K_SHM)}, {0}, 1},
	[O_ADD_KEY] = {"add_key", {0}, {K_KEY}, 2},
	[O_KEYCTL] = {"keyctl", {B(K_KEY)}, {0}, 4},
	[O_PERF] = {"perf_event_open", {0}, {K_PERF}, 2},
	[O_PERF_OP] = {"perf_op", {B(K_PERF)}, {0}, 2},
	[O_BPF_MAP] = {"bpf_map_create", {0}, {K_BPFMAP}, 2},
	[O_BPF_ELEM] = {"bpf_map_elem", {B(K_BPFMAP)}, {0}, 3},
	[O_BPF_PROG] = {"bpf_prog_load", {SOCKS}, {K_RECVD}, 1},
	[O_OPENDIR] = {"open_dir", {0}, {K_DIR}, 2},
	[O_GETDENTS] = {"getdents64", {B(K_DIR)}, {0}, 3},
	[O_READ_PROC] = {"read_proc", {0}, {0}, 4},
	[O_LOCK] = {"lock", {FILES}, {0}, 3},
	[O_FILE_OP] = {"file_op", {FILES}, {0}, 5},
	[O_COPY_RANGE] = {"copy_file_range", {FILES, FILES}, {0}, 2},
	[O_VMSPLICE] = {"vmsplice", {B(K_MAP), PIPES}, {0}, 1},
	[O_PROCESS_VM] = {"process_vm_rw", {B(K_MAP)}, {0}, 1},
	[O_MLOCK] = {"mlock", {B(K_MAP)}, {0}, 2},
	[O_SOCKET] = {"socket", {0}, {K_RECVD}, 2},
	[O_GETSOCKOPT] = {"getsockopt", {SOCKS | B(K_TCP_LISTEN)}, {0}, 2},
	[O_MMSG] = {"sendmmsg_recvmmsg", {SOCKS}, {0}, 3},
	[O_PRCTL] = {"prctl", {0}, {0}, 2},
	[O_RLIMIT] = {"prlimit64", {0}, {0}, 1},
	[O_SCHED] = {"sched", {0}, {0}, 2},
	[O_UNSHARE] = {"unshare", {0}, {0}, 1},
	[O_CREDS] = {"creds", {0}, {0}, 1},
	[O_CLOSE_RANGE] = {"close_range", {FDS}, {0}, 1},
	[O_MISC] = {"misc", {0}, {0}, 2},
};

#define MAXCALLS 40 /* 30 and the blocking calls set against closes */
#define SLOTS 128
#define THREADS 4

struct call {
	uint8_t op, thread;
	int8_t in[3], out[3];
	uint64_t v[3];
};

struct program {
	int ncalls, nthreads;
	struct call c[MAXCALLS];
};

static uint64_t state;

static uint64_t next(void) {
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

static void seed_state(uint64_t seed, uint64_t p) {
	state = seed * 0x9e3779b97f4a7c15ull ^ (p + 1) * 0xbf58476d1ce4e5b9ull;
	if (!state)
		state = 1;
	for (int i = 0; i < 8; i++)
		next();
}

/* A program being built: its slots' kinds so far. */
struct builder {
	struct program *pr;
	uint8_t kind[SLOTS];
	int nslots;
};

/* pick draws one of the slots of a kind in mask, -1 if there is none. */
static int pick(const struct builder *b, uint32_t mask) {
	int cand[SLOTS], n = 0;
	for (int s = 0; s < b->nslots; s++)
		if (mask & B(b->kind[s]))
			cand[n++] = s;
	return n ? cand[next() % n] : -1;
}

/* add_outputs gives c's outputs the next slots, of their kinds. */
static void add_outputs(struct builder *b, struct call *c) {
	const struct opdef *d = &ops[c->op];
	for (int k = 0; k < 3; k++) {
		c->out[k] = -1;
		if (!d->out[k] || b->nslots >= SLOTS)
			continue;
		c->out[k] = b->nslots;
		b->kind[b->nslots++] = d->out[k] == K_SAME ? b->kind[c->in[0]] : d->out[k];
	}
	if (c->op == O_SOCKETPAIR && c->out[1] >= 0) { /* the type decides the kind */
		static const uint8_t types[] = {K_UNIX_STREAM, K_UNIX_DGRAM, K_UNIX_SEQ};
		b->kind[c->out[0]] = b->kind[c->out[1]] = types[c->v[0] % 3];
	}
}

/* fresh appends a new call whose inputs are slots that earlier calls
 * produced of a fitting kind (nothing if there are none). A close on one
 * thread is often preceded by a call that may block on the same
 * descriptor on another. */
static void fresh(struct builder *b) {
	struct program *pr = b->pr;
	int total = 0;
	for (int k = 0; k < NOPS; k++)
		total += ops[k].weight;
	int r = next() % total, op = 0;
	while (r >= ops[op].weight)
		r -= ops[op].weight, op++;
	const struct opdef *d = &ops[op];
	struct call c = {.op = op, .thread = next() % pr->nthreads, .in = {-1, -1, -1}};
	for (int k = 0; k < 3 && d->in[k]; k++)
		if ((c.in[k] = pick(b, d->in[k])) < 0)
			return;
	for (int k = 0; k < 3; k++)
		c.v[k] = next();
	add_outputs(b, &c);
	if (op == O_CLOSE && pr->nthreads > 1 && next() % 2) {
		static const uint8_t blockers[] = {O_READ, O_DRAIN, O_EPOLL_WAIT, O_ACCEPT, O_POLL, O_FILL};
		int w_op = blockers[next() % 6];
		if (ops[w_op].in[0] & B(b->kind[c.in[0]])) {
			struct call w = {.op = w_op, .in = {c.in[0], c.in[0], c.in[0]}, .out = {-1, -1, -1}};
			w.thread = (c.thread + 1 + next() % (pr->nthreads - 1)) % pr->nthreads;
			w.v[0] = next(), w.v[1] = next() | 1, w.v[2] = next();
			pr->c[pr->ncalls++] = w;
		}
	}
	pr->c[pr->ncalls++] = c;
}

/* generate builds program p of seed from fresh calls. */
static void generate(struct program *pr, uint64_t seed, uint64_t p) {
	seed_state(seed, p);
	memset(pr, 0, sizeof *pr);
	struct builder b = {.pr = pr};
	pr->nthreads = 1 + next() % THREADS;
	int want = 5 + next() % 26;
	while (pr->ncalls < want && pr->ncalls < MAXCALLS - 1)
		fresh(&b);
}

/* keep appends c, a call of another program whose slots map renames
 * (-1: none here). An input without a slot here, or of a kind the call
 * does not take, is drawn again; a call with no fitting slot is left out. */
static void keep(struct builder *b, struct call c, int8_t *map) {
	const struct opdef *d = &ops[c.op];
	if (b->pr->ncalls >= MAXCALLS - 1)
		return;
	for (int k = 0; k < 3 && d->in[k]; k++) {
		int s = c.in[k] >= 0 ? map[c.in[k]] : -1;
		if (s < 0 || !(d->in[k] & B(b->kind[s])))
			s = pick(b, d->in[k]);
		if (s < 0)
			return;
		c.in[k] = s;
	}
	int8_t old[3] = {c.out[0], c.out[1], c.out[2]};
	add_outputs(b, &c);
	for (int k = 0; k < 3; k++)
		if (old[k] >= 0)
			map[old[k]] = c.out[k];
	c.thread %= b->pr->nthreads;
	b->pr->c[b->pr->ncalls++] = c;
}

/* derive builds program p of seed, in guided mode, from programs of the
 * corpus: a's calls with 1-3 edits (a call inserted, left out, given a
 * new argument or another thread, or the threads renumbered), or, with
 * b, a's calls before a cut and b's after one. The edits are drawn from
 * seed and p, so the program follows from its parents: `fuzz print SEED
 * P P=A+B ...` rebuilds it from the lineage the run printed. */
static void derive(struct program *pr, const struct program *a, const struct program *b, uint64_t seed,
		   uint64_t p) {
	enum { INSERT, LEAVE_OUT, ARGUMENT, THREAD, THREADS_RENUMBERED };
	/* Programs grow more than they shrink: what a kept program reached
	 * is kept, and something is added to it. */
	static const uint8_t edits[] = {INSERT, INSERT, INSERT, LEAVE_OUT, ARGUMENT, ARGUMENT, THREAD, THREADS_RENUMBERED};
	int8_t map[2][SLOTS];
	memset(map, -1, sizeof map);
	seed_state(seed, p ^ 0xd1b54a32d192ed03ull);
	memset(pr, 0, sizeof *pr);
	struct builder bd = {.pr = pr};
	pr->nthreads = a->nthreads;
	if (b) {
		pr->nthreads = a->nthreads > b->nthreads ? a->nthreads : b->nthreads;
		int cut_a = next() % (a->ncalls + 1), cut_b = next() % (b->ncalls + 1);
		for (int i = 0; i < cut_a; i++)
			keep(&bd, a->c[i], map[0]);
		for (int i = cut_b; i < b->ncalls; i++)
			keep(&bd, b->c[i], map[1]);
		return;
	}
	int nedits = 1 + next() % 3, at[3], what[3];
	for (int e = 0; e < nedits; e++) {
		at[e] = next() % (a->ncalls + 1), what[e] = edits[next() % sizeof edits];
		if (what[e] == THREADS_RENUMBERED)
			pr->nthreads = 1 + next() % THREADS;
	}
	for (int i = 0; i <= a->ncalls; i++) {
		int left_out = 0;
		struct call c = i < a->ncalls ? a->c[i] : (struct call){0};
		for (int e = 0; e < nedits; e++) {
			if (at[e] != i)
				continue;
			if (what[e] == INSERT)
				fresh(&bd);
			else if (what[e] == LEAVE_OUT)
				left_out = 1;
			else if (what[e] == ARGUMENT) { /* often a small change: a low bit */
				int k = next() % 3;
				if (next() % 2)
					c.v[k] ^= 1ull << next() % 8;
				else
					c.v[k] = next();
			} else if (what[e] == THREAD)
				c.thread = next() % THREADS;
		}
		if (i < a->ncalls && !left_out)
			keep(&bd, c, map[0]);
	}
}

/* A lineage: which programs a derived program came from. */
struct parents {
	uint64_t p, a, b; /* b == p: none */
};

/* build builds program p of seed: derived from its parents if lineage
 * names it, fresh otherwise. */
static void build(struct program *pr, uint64_t seed, uint64_t p, const struct parents *lineage, int n) {
	for (int i = 0; i < n; i++)
		if (lineage[i].p == p) {
			struct program *a = malloc(sizeof *a), *b = NULL;
			build(a, seed, lineage[i].a, lineage, n);
			if (lineage[i].b != p)
				build(b = malloc(sizeof *b), seed, lineage[i].b, lineage, n);
			derive(pr, a, b, seed, p);
			free(a);
			free(b);
			return;
		}
	generate(pr, seed, p);
}

static void print_program(const struct program *pr, uint64_t seed, uint64_t p) {
	printf("fuzz: seed %llu program %llu: %d threads, %d calls\n", (unsigned long long)seed, (unsigned long long)p,
	       pr->nthreads, pr->ncalls);
	for (int i = 0; i < pr->ncalls; i++) {
		const struct call *c = &pr->c[i];
		printf("fuzz:   %d: t%d %s(", i, c->thread, ops[c->op].name);
		for (int k = 0; k < 3 && c->in[k] >= 0; k++)
			printf("r%d, ", c->in[k]);
		printf("%#llx, %#llx, %#llx)", (unsigned long long)c->v[0], (unsigned long long)c->v[1],
		       (unsigned long long)c->v[2]);
		for (int k = 0; k < 3 && c->out[k] >= 0; k++)
			printf(" r%d", c->out[k]);
		printf("\n");
	}
	fflush(stdout);
}

/* Counters in memory shared by init, the workers and the programs. */
struct stats {
	uint64_t programs, calls, syscalls, signaled, slow, unkillable;
	int32_t current[64][THREADS]; /* each worker's program's threads' calls, -1: none */
	uint32_t nipc[64];            /* System V objects each worker's program made, */
	int32_t ipc[64][16][2];       /* kind and identifier, for the worker to remove */
};
static struct stats *stats;

/* SYS counts a system call and keeps its result for tracing. */
static __thread long last_result;
static __thread int last_errno;
static long done(long r) {
	last_result = r;
	last_errno = errno;
	return r;
}
#define SYS(x) (__atomic_fetch_add(&stats->syscalls, 1, __ATOMIC_RELAXED), errno = 0, done((long)(x)))
static int tracing;

/* The running program's resources: descriptor numbers, pids, addresses,
 * with ports and lengths beside them. Its threads share them. */
static long val[SLOTS], aux[SLOTS];
static uint32_t *futexes; /* 16 words shared with the program's children: a page of its worker, zeroed for each program */
static const struct program *running;
static int threads_done;

static __thread sigjmp_buf fault_jump;
static __thread volatile int touching;

static void on_fault(int sig) {
	if (touching)
		siglongjmp(fault_jump, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_alarm(int sig) { (void)sig; }

static size_t pick_size(uint64_t v) {
	static const size_t sizes[] = {0, 1, 8, 100, 4095, 4096, 4097, 65536, 65537, 1 << 20};
	return sizes[v % 10];
}

static char buf[1 << 20]; /* what writes send and reads fill; its contents do not matter */

/* edge draws a number for a flag word, count, length or offset that is
 * not a buffer's size: mostly the edges where checks go wrong (0, 1, a
 * page and its neighbours, sign and width limits, huge), else small or
 * any number. */
static int64_t edge(uint64_t v) {
	static const int64_t edges[] = {0,	   1,	       2,	   -1,	       7,	  64,
					255,	   4095,       4096,	   4097,       65535,	  65536,
					1 << 20,   INT32_MAX,  INT32_MIN,  1ll << 32,  INT64_MAX, 1ll << 40,
					-4096,	   32768,      (1ll << 31) + 1};
	switch (v % 4) {
	case 0:
		return (int64_t)(v >> 2);
	case 1:
		return (int64_t)(v >> 2) % 64;
	default:
		return edges[(v >> 2) % (sizeof edges / sizeof *edges)];
	}
}

/* flags_of draws a subset of valid, or one time in eight any bits. */
static uint32_t flags_of(uint64_t v, uint32_t valid) { return v % 8 ? (uint32_t)(v >> 3) & valid : (uint32_t)(v >> 3); }

/* remember_ipc records a System V object the program made, which
 * outlives it, for its worker to remove when the program ends. */
static int worker_index;
static void remember_ipc(int kind, long id) {
	if (id < 0)
		return;
	uint32_t i = __atomic_fetch_add(&stats->nipc[worker_index], 1, __ATOMIC_RELAXED);
	if (i < 16)
		stats->ipc[worker_index][i][0] = kind, stats->ipc[worker_index][i][1] = (int32_t)id;
}

static void remove_ipc(int w) {
	for (uint32_t i = 0; i < stats->nipc[w] && i < 16; i++) {
		int id = stats->ipc[w][i][1];
		if (stats->ipc[w][i][0] == K_MSGQ)
			msgctl(id, IPC_RMID, NULL);
		else if (stats->ipc[w][i][0] == K_SEM)
			semctl(id, 0, IPC_RMID);
		else
			shmctl(id, IPC_RMID, NULL);
	}
	stats->nipc[w] = 0;
}

/* An io_uring's rings as the program mapped them. */
struct ring {
	struct io_uring_params p;
	char *sq, *cq;
	struct io_uring_sqe *sqes;
};
static struct ring rings[SLOTS];

static void set_result(const struct call *c, int k, long v) {
	if (c->out[k] >= 0)
		val[c->out[k]] = v;
}

static long fd(const struct call *c, int k) { return c->in[k] >= 0 ? val[c->in[k]] : -1; }

static void child_action(const struct call *c) {
	long f = fd(c, 0);
	switch (c->v[1] % 5) {
	case 0:
		_exit(0);
	case 1: {
		struct timespec ts = {0, (long)(c->v[2] % 20) * 1000000};
		nanosleep(&ts, NULL);
		_exit(1);
	}
	case 2:
		write(f, buf, pick_size(c->v[2]));
		_exit(2);
	case 3:
		read(f, buf, pick_size(c->v[2]));
		_exit(3);
	default:
		syscall(SYS_futex, &futexes[c->v[2] % 16], FUTEX_WAIT, 0, NULL, NULL, 0);
		_exit(4);
	}
}

static void run_call(const struct call *c) {
	const uint64_t *v = c->v;
	long r = -1;
	int sv[2];
	__atomic_fetch_add(&stats->calls, 1, __ATOMIC_RELAXED);
	switch (c->op) {
	case O_PIPE: {
		static const int flags[] = {0, O_NONBLOCK, O_CLOEXEC, O_DIRECT, O_NONBLOCK | O_DIRECT};
		if (SYS(pipe2(sv, flags[v[1] % 5])) == 0)
			set_result(c, 0, sv[0]), set_result(c, 1, sv[1]);
		break;
	}
	case O_SOCKETPAIR: {
		static const int types[] = {SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET};
		if (SYS(socketpair(AF_UNIX, types[v[0] % 3] | (v[1] % 2 ? SOCK_NONBLOCK : 0), 0, sv)) == 0)
			set_result(c, 0, sv[0]), set_result(c, 1, sv[1]);
		break;
	}
	case O_TCP_LISTEN:
	case O_UDP: {
		int tcp = c->op == O_TCP_LISTEN;
		r = SYS(socket(AF_INET, (tcp ? SOCK_STREAM : SOCK_DGRAM) | (v[1] % 2 ? SOCK_NONBLOCK : 0), 0));
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		socklen_t len = sizeof a;
		if (r >= 0 && SYS(bind(r, (struct sockaddr *)&a, sizeof a)) == 0 &&
		    SYS(getsockname(r, (struct sockaddr *)&a, &len)) == 0 && c->out[0] >= 0)
			aux[c->out[0]] = a.sin_port;
		if (r >= 0 && tcp)
			SYS(listen(r, v[2] % 8));
		set_result(c, 0, r);
		break;
	}
	case O_TCP_CONNECT: {
		r = SYS(socket(AF_INET, SOCK_STREAM | (v[1] % 3 == 0 ? SOCK_NONBLOCK : 0), 0));
		struct sockaddr_in a = {.sin_family = AF_INET,
					.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
					.sin_port = (uint16_t)aux[c->in[0]]};
		if (r >= 0)
			SYS(connect(r, (struct sockaddr *)&a, sizeof a));
		set_result(c, 0, r);
		break;
	}
	case O_ACCEPT:
		set_result(c, 0, SYS(accept4(fd(c, 0), NULL, NULL, v[1] % 2 ? SOCK_NONBLOCK : 0)));
		break;
	case O_UDP_CONNECT:
	case O_SENDTO: {
		struct sockaddr_in a = {.sin_family = AF_INET,
					.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
					.sin_port = (uint16_t)aux[c->in[1]]};
		if (c->op == O_UDP_CONNECT)
			SYS(connect(fd(c, 0), (struct sockaddr *)&a, v[0] % 4 ? sizeof a : 0));
		else
			SYS(sendto(fd(c, 0), buf, pick_size(v[0]) % 65000, MSG_DONTWAIT, (struct sockaddr *)&a, sizeof a));
		break;
	}
	case O_EVENTFD:
		set_result(c, 0, SYS(eventfd(v[0] % 3, (v[1] % 2 ? EFD_NONBLOCK : 0) | (v[2] % 2 ? EFD_SEMAPHORE : 0))));
		break;
	case O_TIMERFD:
		r = SYS(timerfd_create(v[0] % 2 ? CLOCK_MONOTONIC : CLOCK_REALTIME, v[1] % 2 ? TFD_NONBLOCK : 0));
		set_result(c, 0, r);
		/* fallthrough: arm it */
	case O_TIMERFD_SET: {
		struct itimerspec its = {.it_value = {0, (long)(v[2] % 5) * 1000000},
					 .it_interval = {0, (long)(v[2] / 5 % 3) * 1000000}};
		SYS(timerfd_settime(c->op == O_TIMERFD ? r : fd(c, 0), 0, &its, NULL));
		break;
	}
	case O_EPOLL:
		set_result(c, 0, SYS(epoll_create1(v[0] % 2 ? EPOLL_CLOEXEC : 0)));
		break;
	case O_EPOLL_CTL: {
		static const uint32_t extra[] = {0, EPOLLET, EPOLLONESHOT, EPOLLEXCLUSIVE, EPOLLET | EPOLLONESHOT};
		struct epoll_event ev = {.events = ((uint32_t)v[1] & (EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLPRI)) | extra[v[2] % 5],
					 .data.u64 = v[2]};
		SYS(epoll_ctl(fd(c, 0), 1 + v[0] % 3, fd(c, 1), &ev));
		break;
	}
	case O_EPOLL_LOOP: {
		struct epoll_event ev = {.events = EPOLLIN};
		SYS(epoll_ctl(fd(c, 0), EPOLL_CTL_ADD, fd(c, 1), &ev));
		SYS(epoll_ctl(fd(c, 1), EPOLL_CTL_ADD, fd(c, 0), &ev));
		break;
	}
	case O_EPOLL_WAIT: {
		struct epoll_event evs[8];
		static const int timeouts[] = {0, 1, 10, -1};
		SYS(epoll_wait(fd(c, 0), evs, 1 + v[0] % 8, timeouts[v[1] % 4]));
		break;
	}
	case O_INOTIFY:
		set_result(c, 0, SYS(inotify_init1(v[0] % 2 ? IN_NONBLOCK : 0)));
		break;
	case O_INOTIFY_WATCH: {
		char path[32];
		snprintf(path, sizeof path, v[0] % 3 ? "/tmp/f%d" : "/tmp", (int)(v[1] % 8));
		r = SYS(inotify_add_watch(fd(c, 0), path, (uint32_t)v[2] | IN_ALL_EVENTS));
		if (v[1] % 4 == 0)
			SYS(inotify_rm_watch(fd(c, 0), r));
		break;
	}
	case O_MEMFD:
		r = SYS(memfd_create("fuzz", v[0] % 2 ? MFD_ALLOW_SEALING : 0));
		if (r >= 0 && v[1] % 2)
			SYS(ftruncate(r, pick_size(v[2])));
		set_result(c, 0, r);
		break;
	case O_OPEN: {
		static const int flags[] = {O_RDWR, O_RDWR | O_APPEND, O_RDWR | O_TRUNC, O_RDONLY, O_WRONLY | O_NONBLOCK};
		char path[32];
		snprintf(path, sizeof path, "/tmp/f%d", (int)(v[0] % 8));
		set_result(c, 0, SYS(open(path, O_CREAT | flags[v[1] % 5], 0600)));
		break;
	}
	case O_UNLINK: {
		char path[32], to[32];
		snprintf(path, sizeof path, "/tmp/f%d", (int)(v[0] % 8));
		snprintf(to, sizeof to, "/tmp/f%d", (int)(v[1] % 8));
		if (v[2] % 2)
			SYS(unlink(path));
		else
			SYS(rename(path, to));
		break;
	}
	case O_TRUNCATE:
		SYS(ftruncate(fd(c, 0), pick_size(v[0]) + v[1] % 3));
		break;
	case O_FALLOCATE:
		SYS(fallocate(fd(c, 0), v[0] % 2 ? FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE : 0, pick_size(v[1]),
			      pick_size(v[2]) + 1));
		break;
	case O_PWRITE:
		SYS(pwrite(fd(c, 0), buf, pick_size(v[0]), pick_size(v[1])));
		break;
	case O_MMAP_ANON:
	case O_MMAP_FD: {
		size_t len = v[0] % 5 ? 4096 * (1 + v[0] % 16) : (size_t)edge(v[0] >> 3);
		int prot = (v[1] % 4 ? PROT_READ | PROT_WRITE : PROT_READ) | (v[1] % 7 ? 0 : PROT_EXEC);
		int flags = (v[2] % 2 ? MAP_SHARED : MAP_PRIVATE) | (c->op == O_MMAP_ANON ? MAP_ANONYMOUS : 0);
		if (v[2] % 3 == 0) { /* what populates the mapping only on a small one: no OOM kill */
			int extra = MAP_NORESERVE | MAP_STACK | MAP_GROWSDOWN;
			if (len <= 1 << 20)
				extra |= MAP_POPULATE | MAP_LOCKED;
			flags |= (int)(v[2] >> 2) & extra;
		}
		off_t off = v[1] % 5 ? 0 : edge(v[1] >> 3);
		void *a = (void *)SYS(syscall(SYS_mmap, NULL, len, prot, flags, c->op == O_MMAP_ANON ? -1 : fd(c, 0), off));
		if (a != MAP_FAILED && c->out[0] >= 0)
			val[c->out[0]] = (long)a, aux[c->out[0]] = len;
		break;
	}
	case O_MUNMAP:
		SYS(munmap((void *)val[c->in[0]], aux[c->in[0]] >> (v[0] % 2)));
		break;
	case O_MPROTECT: {
		static const int prots[] = {PROT_NONE, PROT_READ, PROT_READ | PROT_WRITE};
		SYS(mprotect((void *)val[c->in[0]], aux[c->in[0]], prots[v[0] % 3]));
		break;
	}
	case O_MREMAP: {
		size_t len = 4096 * (1 + v[0] % 32);
		void *a = (void *)SYS(syscall(SYS_mremap, val[c->in[0]], aux[c->in[0]], len, v[1] % 2 ? MREMAP_MAYMOVE : 0, 0));
		if (a != MAP_FAILED)
			val[c->in[0]] = (long)a, aux[c->in[0]] = len;
		break;
	}
	case O_MADVISE: {
		static const int advice[] = {MADV_DONTNEED, MADV_FREE, MADV_WILLNEED, MADV_DONTFORK, MADV_DOFORK};
		SYS(madvise((void *)val[c->in[0]], aux[c->in[0]], advice[v[0] % 5]));
		break;
	}
	case O_TOUCH: {
		volatile char *a = (volatile char *)val[c->in[0]];
		long len = aux[c->in[0]];
		touching = 1;
		if (!sigsetjmp(fault_jump, 1) && len > 0) {
			for (long off = v[0] % 4096; off < len && off < 64 * 4096; off += 4096) {
				if (v[1] % 2)
					a[off] = (char)v[2];
				else
					(void)a[off];
			}
		}
		touching = 0;
		break;
	}
	case O_FUTEX: {
		uint32_t *w = &futexes[v[0] % 16];
		struct timespec ts = {0, (long)(v[2] % 10) * 1000000};
		switch (v[1] % 4) {
		case 0:
			SYS(syscall(SYS_futex, w, FUTEX_WAIT, *w, &ts, NULL, 0));
			break;
		case 1:
			__atomic_fetch_add(w, 1, __ATOMIC_SEQ_CST);
			SYS(syscall(SYS_futex, w, FUTEX_WAKE, (int)(v[2] % 3), NULL, NULL, 0));
			break;
		case 2:
			SYS(syscall(SYS_futex, w, FUTEX_CMP_REQUEUE, 1, 1, &futexes[v[2] % 16], *w));
			break;
		default:
			SYS(syscall(SYS_futex, w, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, *w, NULL, NULL,
				    (uint32_t)v[2] | 1));
			break;
		}
		break;
	}
	case O_FORK:
		r = SYS(fork());
		if (r == 0)
			child_action(c);
		set_result(c, 0, r);
		break;
	case O_KILL: {
		static const int sigs[] = {SIGKILL, SIGTERM, SIGSTOP, SIGCONT, 0};
		if (val[c->in[0]] > 0)
			SYS(kill(val[c->in[0]], sigs[v[0] % 5]));
		break;
	}
	case O_WAIT:
		if (val[c->in[0]] > 0)
			SYS(wait4(val[c->in[0]], NULL, v[0] % 2 ? WNOHANG : 0, NULL));
		break;
	case O_PIDFD:
		set_result(c, 0, val[c->in[0]] > 0 ? SYS(syscall(SYS_pidfd_open, val[c->in[0]], 0)) : -1);
		break;
	case O_WAITID: {
		siginfo_t si;
		SYS(waitid(P_PIDFD, fd(c, 0), &si, WEXITED | (v[0] % 2 ? WNOHANG : 0)));
		break;
	}
	case O_READ:
		SYS(read(fd(c, 0), buf, pick_size(v[0])));
		break;
	case O_WRITE:
		if (v[1] % 2)
			SYS(write(fd(c, 0), buf, pick_size(v[0])));
		else {
			struct iovec iov[3] = {{buf, pick_size(v[0])}, {NULL, v[2] % 2 ? 0 : 5}, {buf, 7}};
			SYS(writev(fd(c, 0), iov, 3));
		}
		break;
	case O_FILL: /* until full (EAGAIN) or an error, 8 MiB at most */
		for (int i = 0; i < 128; i++) {
			size_t n = v[0] % 2 ? 65536 : 4096;
			r = v[1] % 3 == 0 ? SYS(send(fd(c, 0), buf, n, MSG_DONTWAIT)) : SYS(write(fd(c, 0), buf, n));
			if (r < (long)n)
				break;
		}
		break;
	case O_DRAIN:
		for (int i = 0; i < 128; i++)
			if (SYS(read(fd(c, 0), buf, 65536)) <= 0)
				break;
		break;
	case O_SEND_FDS: {
		int fds[2] = {(int)fd(c, 1), (int)fd(c, 2)};
		char cm[CMSG_SPACE(sizeof fds)] = {0};
		struct iovec iov = {buf, 1 + v[0] % 16};
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm, .msg_controllen = sizeof cm};
		struct cmsghdr *h = CMSG_FIRSTHDR(&m);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(sizeof fds);
		memcpy(CMSG_DATA(h), fds, sizeof fds);
		SYS(sendmsg(fd(c, 0), &m, v[1] % 2 ? MSG_DONTWAIT : 0));
		break;
	}
	case O_RECV_FDS: {
		char cm[CMSG_SPACE(4 * sizeof(int))] = {0};
		struct iovec iov = {buf, 64};
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm,
				   .msg_controllen = v[0] % 4 ? sizeof cm : CMSG_SPACE(sizeof(int))};
		if (SYS(recvmsg(fd(c, 0), &m, (v[1] % 2 ? MSG_DONTWAIT : 0) | (v[2] % 3 ? 0 : MSG_PEEK))) >= 0) {
			int k = 0;
			for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h))
				if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS)
					for (size_t j = 0; j < (h->cmsg_len - CMSG_LEN(0)) / sizeof(int) && k < 2; j++, k++) {
						int f;
						memcpy(&f, CMSG_DATA(h) + j * sizeof f, sizeof f);
						set_result(c, k, f);
					}
		}
		break;
	}
	case O_SHUTDOWN:
		SYS(shutdown(fd(c, 0), v[0] % 3));
		break;
	case O_SOCKOPT: {
		int n = (int)pick_size(v[1]);
		SYS(setsockopt(fd(c, 0), SOL_SOCKET, v[0] % 2 ? SO_SNDBUF : SO_RCVBUF, &n, sizeof n));
		break;
	}
	case O_SPLICE:
		if (v[0] % 3 == 0)
			SYS(tee(fd(c, 0), fd(c, 1), pick_size(v[1]), v[2] % 2 ? SPLICE_F_NONBLOCK : 0));
		else
			SYS(splice(fd(c, 0), NULL, fd(c, 1), NULL, pick_size(v[1]), v[2] % 2 ? SPLICE_F_NONBLOCK : 0));
		break;
	case O_SENDFILE: {
		off_t off = pick_size(v[0]);
		SYS(sendfile(fd(c, 1), fd(c, 0), v[2] % 2 ? &off : NULL, pick_size(v[1])));
		break;
	}
	case O_POLL: {
		struct pollfd p[3];
		static const int timeouts[] = {0, 1, 10, -1};
		for (int k = 0; k < 3; k++)
			p[k] = (struct pollfd){(int)fd(c, k), (short)(POLLIN | (v[0] >> k) % 2 * POLLOUT), 0};
		SYS(poll(p, 3, timeouts[v[1] % 4]));
		break;
	}
	case O_DUP:
		set_result(c, 0, SYS(dup(fd(c, 0))));
		break;
	case O_DUP3:
		SYS(dup3(fd(c, 0), fd(c, 1), v[0] % 2 ? O_CLOEXEC : 0));
		break;
	case O_FCNTL:
		switch (v[0] % 4) {
		case 0:
			SYS(fcntl(fd(c, 0), F_SETFL, v[1] % 2 ? O_NONBLOCK : 0));
			break;
		case 1:
			SYS(fcntl(fd(c, 0), F_SETPIPE_SZ, (int)pick_size(v[1])));
			break;
		case 2:
			SYS(fcntl(fd(c, 0), F_ADD_SEALS, (int)(v[1] % 16)));
			break;
		default: {
			int n;
			SYS(ioctl(fd(c, 0), FIONREAD, &n));
			break;
		}
		}
		break;
	case O_CLOSE:
		SYS(close(fd(c, 0)));
		break;
	case O_SIGNALFD: {
		static const int sigs[] = {SIGUSR1, SIGUSR2, SIGCHLD, SIGWINCH, SIGIO, SIGKILL}; /* not SIGALRM: reads would take it */
		sigset_t set;
		sigemptyset(&set);
		for (int k = 0; k < 6; k++)
			if (v[0] >> k & 1)
				sigaddset(&set, sigs[k]);
		set_result(c, 0, SYS(syscall(SYS_signalfd4, -1, &set, v[1] % 4 ? 8 : (size_t)edge(v[2]),
					     flags_of(v[1] >> 2, SFD_NONBLOCK | SFD_CLOEXEC))));
		break;
	}
	case O_SIGNAL: { /* SIGUSR1, SIGUSR2 and SIGIO are blocked in every thread: they stay pending */
		int sig = v[0] % 3 ? SIGUSR1 + (int)(v[0] % 2) * (SIGUSR2 - SIGUSR1) : SIGIO;
		siginfo_t si = {.si_signo = sig, .si_code = v[2] % 2 ? SI_QUEUE : SI_USER};
		struct timespec ts = {0, (long)(v[2] % 3) * 1000000};
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, sig);
		switch (v[1] % 6) {
		case 0:
			SYS(syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig));
			break;
		case 1:
			SYS(syscall(SYS_rt_sigqueueinfo, getpid(), sig, &si));
			break;
		case 2:
			SYS(kill(getpid(), sig));
			break;
		case 3:
			SYS(sigtimedwait(&set, &si, &ts));
			break;
		case 4:
			SYS(sigpending(&set));
			break;
		default:
			SYS(syscall(SYS_rt_tgsigqueueinfo, getpid(), getpid(), sig, &si));
			break;
		}
		break;
	}
	case O_PIDFD_SIGNAL: {
		static const int sigs[] = {SIGUSR1, SIGTERM, SIGSTOP, SIGCONT, SIGKILL, 0, 65};
		if (v[0] % 3)
			SYS(syscall(SYS_pidfd_send_signal, fd(c, 0), sigs[v[1] % 7], NULL, (unsigned)(v[2] % 4 == 0)));
		else
			set_result(c, 0, SYS(syscall(SYS_pidfd_getfd, fd(c, 0), (int)(v[1] % 12), (unsigned)(v[2] % 4 == 0))));
		break;
	}
	case O_TIMER: {
		static const clockid_t clocks[] = {CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID,
						   CLOCK_THREAD_CPUTIME_ID, CLOCK_BOOTTIME, 99};
		static const int notify[] = {SIGEV_NONE, SIGEV_SIGNAL, SIGEV_THREAD_ID, 7};
		struct sigevent ev = {.sigev_notify = notify[v[1] % 4], .sigev_signo = v[1] / 4 % 2 ? SIGUSR1 : SIGALRM};
		ev._sigev_un._tid = (int)syscall(SYS_gettid);
		timer_t id;
		if (SYS(syscall(SYS_timer_create, clocks[v[0] % 6], v[2] % 5 ? &ev : NULL, &id)) == 0)
			set_result(c, 0, (long)(intptr_t)id);
		break;
	}
	case O_TIMER_OP: {
		timer_t id = (timer_t)(intptr_t)val[c->in[0]];
		struct itimerspec its = {.it_value = {0, (long)(v[1] % 5) * 1000000}, .it_interval = {0, (long)(v[1] / 5 % 3) * 500000}},
				  old;
		if (v[2] % 7 == 0)
			its.it_value.tv_nsec = edge(v[2] >> 3);
		switch (v[0] % 5) {
		case 0:
		case 1:
			SYS(syscall(SYS_timer_settime, id, v[0] % 5 ? TIMER_ABSTIME : 0, &its, v[2] % 2 ? &old : NULL));
			break;
		case 2:
			SYS(syscall(SYS_timer_gettime, id, &old));
			break;
		case 3:
			SYS(syscall(SYS_timer_getoverrun, id));
			break;
		default:
			SYS(syscall(SYS_timer_delete, id));
			break;
		}
		break;
	}
	case O_URING: {
		struct ring *rg = c->out[0] >= 0 ? &rings[c->out[0]] : &rings[0];
		memset(rg, 0, sizeof *rg);
		rg->p.flags = flags_of(v[1], IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP | IORING_SETUP_SUBMIT_ALL);
		rg->p.cq_entries = (uint32_t)edge(v[2]);
		uint32_t entries = v[0] % 3 ? 1u << v[0] / 3 % 6 : (uint32_t)edge(v[0] / 3);
		r = SYS(syscall(SYS_io_uring_setup, entries, &rg->p));
		set_result(c, 0, r);
		if (r < 0)
			break;
		size_t sq_len = rg->p.sq_off.array + rg->p.sq_entries * 4, cq_len = rg->p.cq_off.cqes + rg->p.cq_entries * 16;
		void *a = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED, r, IORING_OFF_SQ_RING);
		void *b = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED, r, IORING_OFF_CQ_RING);
		void *e = mmap(NULL, rg->p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE, MAP_SHARED, r,
			       IORING_OFF_SQES);
		__atomic_fetch_add(&stats->syscalls, 3, __ATOMIC_RELAXED);
		if (a != MAP_FAILED && b != MAP_FAILED && e != MAP_FAILED)
			rg->sq = a, rg->cq = b, rg->sqes = e;
		break;
	}
	case O_URING_ENTER: {
		static const uint8_t opcodes[] = {IORING_OP_NOP,   IORING_OP_READ,     IORING_OP_WRITE,	  IORING_OP_READV,
						  IORING_OP_WRITEV, IORING_OP_FSYNC,   IORING_OP_POLL_ADD, IORING_OP_SEND,
						  IORING_OP_RECV,  IORING_OP_TIMEOUT, IORING_OP_CLOSE,	  IORING_OP_ASYNC_CANCEL};
		struct ring *rg = &rings[c->in[0]];
		unsigned n = 1 + v[0] % 4, submitted = 0;
		static struct iovec iov[THREADS] = {{0}};
		static struct __kernel_timespec ts = {0, 1000000};
		if (rg->sq && rg->p.sq_entries) {
			uint32_t *tail = (uint32_t *)(rg->sq + rg->p.sq_off.tail), mask = *(uint32_t *)(rg->sq + rg->p.sq_off.ring_mask);
			uint32_t *array = (uint32_t *)(rg->sq + rg->p.sq_off.array), t = __atomic_load_n(tail, __ATOMIC_ACQUIRE);
			for (; submitted < n && submitted < rg->p.sq_entries; submitted++, t++) {
				uint64_t w = v[1] >> (8 * submitted);
				struct io_uring_sqe *sqe = &rg->sqes[t & mask];
				memset(sqe, 0, sizeof *sqe);
				sqe->opcode = w % 16 < 12 ? opcodes[w % 16] : (uint8_t)(w >> 4) % 64;
				sqe->fd = (int)fd(c, 1);
				sqe->flags = w % 5 == 0 ? (uint8_t)(w >> 3) % 8 : 0; /* FIXED_FILE, IO_DRAIN, IO_LINK */
				iov[c->thread] = (struct iovec){buf, pick_size(w >> 2)};
				int vectored = sqe->opcode == IORING_OP_READV || sqe->opcode == IORING_OP_WRITEV;
				sqe->addr = sqe->opcode == IORING_OP_TIMEOUT ? (uint64_t)(uintptr_t)&ts
					    : vectored			     ? (uint64_t)(uintptr_t)&iov[c->thread]
									     : (uint64_t)(uintptr_t)buf;
				sqe->len = sqe->opcode == IORING_OP_TIMEOUT || vectored ? 1 : (uint32_t)pick_size(w >> 2);
				sqe->off = v[2] % 3 ? 0 : (uint64_t)edge(v[2] >> 2);
				sqe->poll32_events = sqe->opcode == IORING_OP_POLL_ADD ? POLLIN | POLLOUT : 0;
				sqe->user_data = w;
				array[t & mask] = t & mask;
			}
			__atomic_store_n(tail, t, __ATOMIC_RELEASE);
		}
		SYS(syscall(SYS_io_uring_enter, fd(c, 0), submitted ? submitted : (unsigned)edge(v[0]), v[2] % 4 == 1 ? 1 : 0,
			    flags_of(v[2] >> 2, IORING_ENTER_GETEVENTS), NULL, 0));
		if (rg->cq) { /* take what completed */
			uint32_t *head = (uint32_t *)(rg->cq + rg->p.cq_off.head), *tail = (uint32_t *)(rg->cq + rg->p.cq_off.tail);
			__atomic_store_n(head, __atomic_load_n(tail, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
		}
		break;
	}
	case O_URING_REGISTER: {
		static const unsigned opcodes[] = {IORING_REGISTER_BUFFERS, IORING_UNREGISTER_BUFFERS, IORING_REGISTER_FILES,
						   IORING_UNREGISTER_FILES, IORING_REGISTER_PROBE, IORING_REGISTER_EVENTFD};
		struct iovec iov = {buf, pick_size(v[1])};
		int f = (int)fd(c, 1);
		unsigned op = v[0] % 7 < 6 ? opcodes[v[0] % 7] : (unsigned)(v[0] >> 3) % 40;
		void *arg = op == IORING_REGISTER_BUFFERS ? (void *)&iov : op == IORING_REGISTER_PROBE ? (void *)buf : (void *)&f;
		SYS(syscall(SYS_io_uring_register, fd(c, 0), op, arg, v[2] % 4 ? 1 : (unsigned)edge(v[2] >> 2)));
		break;
	}
	case O_AIO: {
		aio_context_t ctx = 0;
		if (SYS(syscall(SYS_io_setup, v[0] % 3 ? (unsigned)(1 + v[0] % 16) : (unsigned)edge(v[0] >> 2), &ctx)) == 0)
			set_result(c, 0, (long)ctx);
		break;
	}
	case O_AIO_SUBMIT: {
		static const uint16_t opcodes[] = {IOCB_CMD_PREAD, IOCB_CMD_PWRITE, IOCB_CMD_FSYNC, IOCB_CMD_FDSYNC,
						   IOCB_CMD_POLL, IOCB_CMD_NOOP, IOCB_CMD_PREADV, 99};
		aio_context_t ctx = (aio_context_t)val[c->in[0]];
		struct iocb cbs[3], *list[3];
		int n = 1 + v[0] % 3;
		for (int k = 0; k < n; k++) {
			uint64_t w = v[1] >> (16 * k);
			cbs[k] = (struct iocb){.aio_lio_opcode = opcodes[w % 8], .aio_fildes = (uint32_t)fd(c, 1),
					       .aio_buf = (uint64_t)(uintptr_t)buf, .aio_nbytes = pick_size(w >> 3),
					       .aio_offset = w % 3 ? 0 : edge(w >> 5), .aio_data = w};
			if (cbs[k].aio_lio_opcode == IOCB_CMD_POLL)
				cbs[k].aio_buf = POLLIN | POLLOUT;
			list[k] = &cbs[k];
		}
		struct io_event evs[4];
		struct timespec ts = {0, (long)(v[2] % 3) * 1000000};
		SYS(syscall(SYS_io_submit, ctx, (long)n, list));
		SYS(syscall(SYS_io_getevents, ctx, (long)(v[2] / 3 % 2), 4L, evs, &ts));
		if (v[2] % 5 == 0)
			SYS(syscall(SYS_io_cancel, ctx, list[0], evs));
		if (v[2] % 7 == 0)
			SYS(syscall(SYS_io_destroy, ctx));
		break;
	}
	case O_MQ: {
		char name[16];
		snprintf(name, sizeof name, "/fuzz%d", (int)(v[0] % 4));
		struct mq_attr at = {.mq_maxmsg = v[1] % 3 ? 1 + (long)(v[1] % 10) : edge(v[1] >> 2),
				     .mq_msgsize = v[2] % 3 ? 1 + (long)pick_size(v[2]) % 8192 : edge(v[2] >> 2)};
		int flags = O_RDWR | O_CREAT | flags_of(v[0] >> 2, O_NONBLOCK | O_EXCL | O_CLOEXEC);
		set_result(c, 0, SYS(syscall(SYS_mq_open, name, flags, 0600, v[1] % 5 ? &at : NULL)));
		break;
	}
	case O_MQ_OP: {
		struct timespec past = {0, 0}, soon;
		clock_gettime(CLOCK_REALTIME, &soon);
		soon.tv_nsec = (soon.tv_nsec + 2000000) % 1000000000;
		struct timespec *ts = v[2] % 3 == 0 ? NULL : v[2] % 3 == 1 ? &past : &soon;
		switch (v[0] % 5) {
		case 0:
			SYS(syscall(SYS_mq_timedsend, fd(c, 0), buf, pick_size(v[1]), (unsigned)(v[1] >> 8) % 40000, ts));
			break;
		case 1: {
			unsigned prio;
			SYS(syscall(SYS_mq_timedreceive, fd(c, 0), buf, pick_size(v[1]), &prio, ts));
			break;
		}
		case 2: {
			struct mq_attr at = {.mq_flags = v[1] % 2 ? O_NONBLOCK : 0}, old;
			SYS(syscall(SYS_mq_getsetattr, fd(c, 0), v[1] % 3 ? &at : NULL, &old));
			break;
		}
		case 3: {
			struct sigevent ev = {.sigev_notify = v[1] % 3 == 2 ? SIGEV_SIGNAL : (int)(v[1] % 3) * 9,
					      .sigev_signo = SIGUSR2};
			SYS(syscall(SYS_mq_notify, fd(c, 0), v[1] % 4 ? &ev : NULL));
			break;
		}
		default: {
			char name[16];
			snprintf(name, sizeof name, "/fuzz%d", (int)(v[1] % 4));
			SYS(syscall(SYS_mq_unlink, name));
			break;
		}
		}
		break;
	}
	case O_MSGGET:
	case O_SEMGET:
	case O_SHMGET: {
		key_t key = v[0] % 3 ? IPC_PRIVATE : (key_t)(0x46555a00 + v[0] / 3 % 4);
		int flags = IPC_CREAT | 0600 | (v[2] % 5 == 0 ? IPC_EXCL : 0);
		int kind = c->op == O_MSGGET ? K_MSGQ : c->op == O_SEMGET ? K_SEM : K_SHM;
		if (kind == K_MSGQ)
			r = SYS(msgget(key, flags));
		else if (kind == K_SEM)
			r = SYS(semget(key, v[1] % 3 ? 1 + (int)(v[1] % 8) : (int)edge(v[1] >> 2), flags));
		else
			r = SYS(shmget(key, v[1] % 3 ? pick_size(v[1] >> 2) : (size_t)edge(v[1] >> 2), flags));
		remember_ipc(kind, r);
		set_result(c, 0, r);
		break;
	}
	case O_MSG_OP: {
		int id = (int)val[c->in[0]];
		long *m = (long *)buf;
		size_t len = v[1] % 4 ? pick_size(v[1] >> 2) % 8193 : (size_t)edge(v[1] >> 2) % (sizeof buf - 8);
		int flags = flags_of(v[2], IPC_NOWAIT | MSG_NOERROR | MSG_EXCEPT | MSG_COPY);
		switch (v[0] % 4) {
		case 0:
			m[0] = v[2] % 5 ? 1 + (long)(v[2] >> 4) % 3 : edge(v[2] >> 4);
			SYS(msgsnd(id, m, len, flags & (IPC_NOWAIT | MSG_NOERROR)));
			break;
		case 1:
			SYS(msgrcv(id, m, len, v[2] % 3 ? (long)(v[2] >> 4) % 4 - 1 : edge(v[2] >> 4), flags));
			break;
		default: {
			static const int cmds[] = {IPC_STAT, IPC_SET, IPC_RMID, MSG_INFO, MSG_STAT, IPC_INFO, 99};
			struct msqid_ds ds = {0};
			int cmd = cmds[v[2] % 7];
			if (cmd == IPC_SET && msgctl(id, IPC_STAT, &ds) == 0)
				ds.msg_qbytes = (msglen_t)edge(v[1]);
			SYS(msgctl(cmd == MSG_STAT ? (int)(v[1] % 4) : id, cmd, &ds));
		}
		}
		break;
	}
	case O_SEM_OP: {
		int id = (int)val[c->in[0]];
		if (v[0] % 3) {
			struct sembuf ops_[3];
			int n = 1 + v[0] % 3;
			for (int k = 0; k < n; k++) {
				uint64_t w = v[1] >> (20 * k);
				static const short vals[] = {-1, 0, 1, 2, -2, 32767, -32768};
				ops_[k] = (struct sembuf){.sem_num = (unsigned short)(w % 4 ? w % 3 : edge(w >> 2)),
							  .sem_op = vals[w / 4 % 7],
							  .sem_flg = (short)flags_of(w >> 6, IPC_NOWAIT | SEM_UNDO)};
			}
			struct timespec ts = {0, (long)(v[2] % 3) * 1000000};
			SYS(semtimedop(id, ops_, v[2] % 11 ? (size_t)n : (size_t)edge(v[2] >> 4), v[2] % 2 ? &ts : NULL));
		} else {
			static const int cmds[] = {SETVAL, GETVAL, GETALL, SETALL, GETPID, GETNCNT, GETZCNT,
						   IPC_STAT, IPC_SET,  IPC_RMID, SEM_INFO, SEM_STAT, 99};
			int cmd = cmds[v[1] % 13];
			unsigned short *vals = (unsigned short *)buf;
			for (int k = 0; k < 8; k++)
				vals[k] = (unsigned short)(v[2] >> (8 * k));
			if (cmd == SETVAL)
				SYS(semctl(id, (int)(v[2] % 4), cmd, (int)edge(v[2] >> 2)));
			else
				SYS(semctl(cmd == SEM_STAT ? (int)(v[2] % 4) : id, (int)(v[2] % 4), cmd, buf));
		}
		break;
	}
	case O_SHMAT: {
		int id = (int)val[c->in[0]];
		struct shmid_ds ds;
		void *a = (void *)SYS((long)shmat(id, NULL, (int)flags_of(v[0], SHM_RDONLY | SHM_RND | SHM_EXEC)));
		if (a != (void *)-1 && shmctl(id, IPC_STAT, &ds) == 0 && c->out[0] >= 0)
			val[c->out[0]] = (long)a, aux[c->out[0]] = (long)(ds.shm_segsz + 4095) / 4096 * 4096;
		break;
	}
	case O_SHMCTL: {
		static const int cmds[] = {IPC_STAT, IPC_SET, IPC_RMID, SHM_LOCK, SHM_UNLOCK, SHM_INFO, SHM_STAT, IPC_INFO, 99};
		struct shmid_ds ds = {0};
		int cmd = cmds[v[0] % 9], id = (int)val[c->in[0]];
		if (cmd == IPC_SET && shmctl(id, IPC_STAT, &ds) == 0)
			ds.shm_perm.mode = (unsigned short)edge(v[1]);
		SYS(shmctl(cmd == SHM_STAT ? (int)(v[1] % 4) : id, cmd, (struct shmid_ds *)(cmd == SHM_INFO || cmd == IPC_INFO ? (void *)buf : (void *)&ds)));
		break;
	}
	case O_ADD_KEY: {
		static const char *types[] = {"user", "keyring", "logon", "bogus", "user"};
		char desc[16];
		snprintf(desc, sizeof desc, v[0] % 5 == 2 ? "fuzz:k%d" : "k%d", (int)(v[1] % 4));
		const char *type = types[v[0] % 5];
		size_t len = strcmp(type, "keyring") ? pick_size(v[2]) : 0;
		set_result(c, 0, SYS(syscall(SYS_add_key, type, desc, len ? buf : NULL, len,
					     v[1] / 4 % 2 ? KEY_SPEC_THREAD_KEYRING : KEY_SPEC_PROCESS_KEYRING)));
		break;
	}
	case O_KEYCTL: {
		long k = val[c->in[0]];
		char desc[16];
		snprintf(desc, sizeof desc, "k%d", (int)(v[1] % 4));
		switch (v[0] % 12) {
		case 0:
			SYS(syscall(SYS_keyctl, KEYCTL_READ, k, buf, pick_size(v[1])));
			break;
		case 1:
			SYS(syscall(SYS_keyctl, KEYCTL_DESCRIBE, k, buf, pick_size(v[1])));
			break;
		case 2:
			SYS(syscall(SYS_keyctl, KEYCTL_UPDATE, k, buf, pick_size(v[1])));
			break;
		case 3:
			SYS(syscall(SYS_keyctl, KEYCTL_REVOKE, k));
			break;
		case 4:
			SYS(syscall(SYS_keyctl, KEYCTL_INVALIDATE, k));
			break;
		case 5:
			SYS(syscall(SYS_keyctl, KEYCTL_SETPERM, k, (uint32_t)edge(v[1])));
			break;
		case 6:
			SYS(syscall(SYS_keyctl, v[1] % 2 ? KEYCTL_LINK : KEYCTL_UNLINK, k,
				    v[2] % 2 ? KEY_SPEC_PROCESS_KEYRING : KEY_SPEC_THREAD_KEYRING));
			break;
		case 7:
			SYS(syscall(SYS_keyctl, KEYCTL_SEARCH, k, v[2] % 2 ? "user" : "keyring", desc, 0));
			break;
		case 8:
			SYS(syscall(SYS_keyctl, KEYCTL_CLEAR, k));
			break;
		case 9:
			SYS(syscall(SYS_keyctl, KEYCTL_SET_TIMEOUT, k, (unsigned)(v[1] % 3)));
			break;
		case 10:
			SYS(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, (long)edge(v[1]), (int)(v[2] % 2)));
			break;
		default:
			SYS(syscall(SYS_request_key, v[2] % 2 ? "user" : "keyring", desc, NULL, 0));
			break;
		}
		break;
	}
	case O_PERF: {
		struct perf_event_attr at = {.type = v[0] % 4 ? PERF_TYPE_SOFTWARE : (uint32_t)(v[0] >> 2) % 8,
					     .size = v[2] % 5 ? sizeof at : (uint32_t)edge(v[2] >> 3),
					     .config = v[1] % 5 ? v[1] % 12 : (uint64_t)edge(v[1] >> 3),
					     .sample_period = v[2] % 3 ? 0 : (uint64_t)edge(v[2] >> 5)};
		at.disabled = v[1] >> 8 & 1, at.inherit = v[1] >> 9 & 1, at.exclude_kernel = v[1] >> 10 & 1;
		at.read_format = flags_of(v[1] >> 11, PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
							     PERF_FORMAT_ID | PERF_FORMAT_GROUP);
		static const int cpus[] = {-1, 0, 1, 7};
		set_result(c, 0, SYS(syscall(SYS_perf_event_open, &at, v[2] / 3 % 3 ? 0 : -1, cpus[v[2] / 9 % 4], -1,
					     flags_of(v[2] >> 12, PERF_FLAG_FD_CLOEXEC | PERF_FLAG_FD_NO_GROUP))));
		break;
	}
	case O_PERF_OP: {
		static const unsigned long cmds[] = {PERF_EVENT_IOC_ENABLE, PERF_EVENT_IOC_DISABLE, PERF_EVENT_IOC_RESET,
						     PERF_EVENT_IOC_REFRESH, PERF_EVENT_IOC_ID};
		if (v[0] % 3 == 0)
			SYS(read(fd(c, 0), buf, pick_size(v[1])));
		else if (v[0] % 3 == 1) {
			uint64_t id;
			SYS(ioctl(fd(c, 0), cmds[v[1] % 5], v[1] % 5 == 4 ? (long)&id : (long)edge(v[2])));
		} else {
			size_t len = 4096 * (1 + (v[1] % 3 ? (1u << v[1] % 4) : (size_t)(v[1] >> 2) % 5));
			void *a = (void *)SYS(syscall(SYS_mmap, NULL, len, PROT_READ | (v[2] % 2 ? PROT_WRITE : 0), MAP_SHARED,
							fd(c, 0), 0));
			if (a != MAP_FAILED)
				munmap(a, len);
		}
		break;
	}
	case O_BPF_MAP: {
		union bpf_attr at = {.map_type = v[0] % 5 < 2 ? BPF_MAP_TYPE_ARRAY : v[0] % 5 < 4 ? BPF_MAP_TYPE_HASH : (uint32_t)edge(v[0] >> 3),
				     .key_size = v[1] % 3 ? 4 << v[1] / 3 % 2 : (uint32_t)edge(v[1] >> 3),
				     .value_size = v[1] % 5 ? 8 << v[1] / 5 % 4 : (uint32_t)edge(v[1] >> 8),
				     .max_entries = v[2] % 3 ? 1 + (uint32_t)(v[2] % 16) : (uint32_t)edge(v[2] >> 2),
				     .map_flags = v[2] % 7 ? 0 : (uint32_t)edge(v[2] >> 8)};
		set_result(c, 0, SYS(syscall(SYS_bpf, BPF_MAP_CREATE, &at, v[0] % 11 ? sizeof at : (unsigned)edge(v[0] >> 4))));
		break;
	}
	case O_BPF_ELEM: {
		static const int cmds[] = {BPF_MAP_UPDATE_ELEM, BPF_MAP_LOOKUP_ELEM, BPF_MAP_DELETE_ELEM, BPF_MAP_GET_NEXT_KEY};
		uint64_t key[8] = {v[1] % 4 ? v[1] % 20 : (uint64_t)edge(v[1] >> 2)};
		union bpf_attr at = {.map_fd = (uint32_t)fd(c, 0), .key = (uint64_t)(uintptr_t)key, .value = (uint64_t)(uintptr_t)buf,
				     .flags = v[2] % 4 ? v[2] % 4 - 1 : (uint64_t)edge(v[2] >> 2)};
		SYS(syscall(SYS_bpf, cmds[v[0] % 4], &at, sizeof at));
		break;
	}
	case O_BPF_PROG: { /* r0 = value; exit, or words drawn from v, as a socket filter */
		struct bpf_insn insns[4] = {
			{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = (int32_t)edge(v[1])},
			{.code = BPF_JMP | BPF_EXIT},
		};
		int n = 2;
		if (v[0] % 3 == 0) {
			memcpy(&insns[0], &v[1], 16);
			n = 1 + v[0] / 3 % 4;
		}
		union bpf_attr at = {.prog_type = v[0] % 7 ? BPF_PROG_TYPE_SOCKET_FILTER : (uint32_t)(v[0] >> 3) % 40,
				     .insn_cnt = (uint32_t)n, .insns = (uint64_t)(uintptr_t)insns,
				     .license = (uint64_t)(uintptr_t)"GPL"};
		r = SYS(syscall(SYS_bpf, BPF_PROG_LOAD, &at, sizeof at));
		if (r >= 0 && v[2] % 2) {
			int pf = (int)r;
			SYS(setsockopt(fd(c, 0), SOL_SOCKET, SO_ATTACH_BPF, &pf, sizeof pf));
		}
		set_result(c, 0, r);
		break;
	}
	case O_OPENDIR: {
		static const char *dirs[] = {"/proc",	  "/proc/self",	    "/proc/self/fd", "/proc/self/task", "/proc/self/fdinfo",
					     "/sys",	  "/proc/sys/kernel", "/tmp",	     "/",		"/dev",
					     "/proc/sys", "/proc/self/net", "/sys/kernel",  "/proc/1"};
		set_result(c, 0, SYS(open(dirs[v[0] % 14], O_RDONLY | (v[1] % 4 ? O_DIRECTORY : 0) | (v[1] % 3 ? 0 : O_PATH))));
		break;
	}
	case O_GETDENTS:
		switch (v[0] % 4) {
		case 0:
		case 1:
			SYS(syscall(SYS_getdents64, fd(c, 0), buf, v[1] % 4 ? pick_size(v[1] >> 2) : (size_t)edge(v[1] >> 2) % sizeof buf));
			break;
		case 2: {
			static const int whence[] = {SEEK_SET, SEEK_CUR, SEEK_END, SEEK_DATA, SEEK_HOLE, 9};
			SYS(lseek(fd(c, 0), v[1] % 3 ? 0 : edge(v[1] >> 2), whence[v[2] % 6]));
			break;
		}
		default: {
			static const char *names[] = {"stat", "status", "maps", "1", "self", "fd", "kernel", "f0", "meminfo", ".."};
			struct stat st;
			int f = SYS(openat(fd(c, 0), names[v[1] % 10], O_RDONLY));
			if (f >= 0) {
				SYS(fstatat(fd(c, 0), names[v[1] % 10], &st, v[2] % 2 ? AT_SYMLINK_NOFOLLOW : 0));
				SYS(read(f, buf, pick_size(v[2])));
				close(f);
			}
		}
		}
		break;
	case O_READ_PROC: {
		static const char *files[] = {
			"/proc/self/maps", "/proc/self/smaps", "/proc/self/status", "/proc/self/stat", "/proc/self/statm",
			"/proc/self/cmdline", "/proc/self/environ", "/proc/self/limits", "/proc/self/mountinfo",
			"/proc/self/mounts", "/proc/self/io", "/proc/self/cgroup", "/proc/self/auxv", "/proc/self/wchan",
			"/proc/self/comm", "/proc/self/fdinfo/3", "/proc/self/fdinfo/5", "/proc/self/task", "/proc/self/exe",
			"/proc/self/oom_score", "/proc/self/ns/net", "/proc/self/timerslack_ns", "/proc/meminfo",
			"/proc/cpuinfo", "/proc/stat", "/proc/uptime", "/proc/loadavg", "/proc/version", "/proc/filesystems",
			"/proc/interrupts", "/proc/mounts", "/proc/net/tcp", "/proc/net/udp", "/proc/net/unix", "/proc/net/dev",
			"/proc/sys/kernel/pid_max", "/proc/sys/fs/pipe-max-size", "/proc/sys/vm/overcommit_memory",
			"/proc/sys/kernel/random/uuid", "/proc/sysvipc/msg", "/proc/sysvipc/sem", "/proc/sysvipc/shm",
			"/proc/sys/fs/mqueue/msg_max", "/proc/keys", "/proc/key-users", "/proc/self/net/tcp6",
			"/sys/kernel/mm/transparent_hugepage/enabled", "/proc/1/stat", "/proc/2/status", "/proc/self/attr/current"};
		int n = sizeof files / sizeof *files, f;
		if (v[0] % 8 == 0) { /* a program may rename itself: no other writes */
			f = SYS(open("/proc/self/comm", O_WRONLY));
			SYS(write(f, buf, pick_size(v[1]) % 20));
		} else if (v[0] % 8 == 1) {
			f = SYS(open(files[v[1] % n], O_PATH));
			SYS(readlinkat(AT_FDCWD, files[v[1] % n], buf, pick_size(v[2])));
		} else {
			f = SYS(open(files[v[1] % n], O_RDONLY));
			SYS(pread(f, buf, pick_size(v[2]), v[2] % 5 ? 0 : edge(v[2] >> 3)));
			SYS(read(f, buf, pick_size(v[2] >> 4)));
		}
		close(f);
		break;
	}
	case O_LOCK: {
		static const int cmds[] = {F_SETLK, F_SETLKW, F_GETLK, F_OFD_SETLK, F_OFD_SETLKW, F_OFD_GETLK};
		static const short types[] = {F_RDLCK, F_WRLCK, F_UNLCK, 7};
		if (v[0] % 3 == 0) {
			static const int ops_[] = {LOCK_SH, LOCK_EX, LOCK_UN, LOCK_SH | LOCK_NB, LOCK_EX | LOCK_NB, 0};
			SYS(flock(fd(c, 0), ops_[v[1] % 6]));
			break;
		}
		struct flock l = {.l_type = types[v[1] % 4], .l_whence = (short)(v[1] / 4 % 4),
				  .l_start = v[2] % 3 ? (off_t)(v[2] % 8) * 100 : edge(v[2] >> 2),
				  .l_len = v[1] % 3 ? (off_t)(v[1] >> 8) % 300 : edge(v[1] >> 8)};
		SYS(fcntl(fd(c, 0), cmds[v[0] / 3 % 6], &l));
		break;
	}
	case O_FILE_OP: {
		int f = (int)fd(c, 0);
		char name[16];
		snprintf(name, sizeof name, "user.x%d", (int)(v[1] % 3));
		struct iovec iov[2] = {{buf, pick_size(v[1])}, {buf, pick_size(v[1] >> 4)}};
		int rwf = (int)flags_of(v[2] >> 8, RWF_HIPRI | RWF_DSYNC | RWF_SYNC | RWF_NOWAIT | RWF_APPEND);
		off_t off = v[2] % 4 == 0 ? -1 : v[2] % 4 == 1 ? edge(v[2] >> 2) : (off_t)pick_size(v[2] >> 2);
		switch (v[0] % 14) {
		case 0:
			SYS(preadv2(f, iov, 2, off, rwf));
			break;
		case 1:
			SYS(pwritev2(f, iov, 2, off, rwf));
			break;
		case 2: {
			static const int whence[] = {SEEK_SET, SEEK_CUR, SEEK_END, SEEK_DATA, SEEK_HOLE};
			SYS(lseek(f, off, whence[v[1] % 5]));
			break;
		}
		case 3:
			SYS(v[1] % 2 ? fsync(f) : fdatasync(f));
			break;
		case 4:
			SYS(sync_file_range(f, off, (off_t)pick_size(v[1]), (unsigned)flags_of(v[1] >> 4, 7)));
			break;
		case 5:
			SYS(readahead(f, off, pick_size(v[1])));
			break;
		case 6:
			SYS(posix_fadvise(f, off, (off_t)pick_size(v[1]), (int)(v[1] >> 4) % 8));
			break;
		case 7: {
			struct statx sx;
			SYS(statx(f, "", AT_EMPTY_PATH | (int)flags_of(v[1], AT_STATX_FORCE_SYNC | AT_STATX_DONT_SYNC),
				  (unsigned)edge(v[1] >> 4), &sx));
			break;
		}
		case 8:
			SYS(fsetxattr(f, name, buf, pick_size(v[1] >> 4) % 65537, (int)(v[2] % 4)));
			break;
		case 9:
			SYS(fgetxattr(f, name, buf, pick_size(v[1] >> 4)));
			break;
		case 10:
			SYS(v[2] % 2 ? flistxattr(f, buf, pick_size(v[1] >> 4)) : fremovexattr(f, name));
			break;
		case 11:
			SYS(fchmod(f, (mode_t)edge(v[1])));
			break;
		case 12:
			SYS(fallocate(f, (int)flags_of(v[1], FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE |
								     FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_INSERT_RANGE),
				      off, v[2] % 3 ? (off_t)pick_size(v[2] >> 4) : edge(v[2] >> 4)));
			break;
		default: {
			struct timespec ts[2] = {{0, UTIME_NOW}, {(time_t)edge(v[1]), v[2] % 3 ? UTIME_OMIT : (long)edge(v[2] >> 2)}};
			SYS(futimens(f, ts));
		}
		}
		break;
	}
	case O_COPY_RANGE: {
		loff_t in = (loff_t)pick_size(v[0]), out = v[2] % 3 ? (loff_t)pick_size(v[2] >> 2) : edge(v[2] >> 2);
		SYS(copy_file_range(fd(c, 0), v[0] % 3 ? &in : NULL, fd(c, 1), v[2] % 5 ? &out : NULL,
				    v[1] % 4 ? pick_size(v[1]) : (size_t)edge(v[1] >> 2), v[1] % 9 ? 0 : 1));
		break;
	}
	case O_VMSPLICE: {
		struct iovec iov = {(void *)val[c->in[0]], (size_t)aux[c->in[0]] >> (v[0] % 3)};
		SYS(vmsplice(fd(c, 1), &iov, 1, flags_of(v[1], SPLICE_F_GIFT | SPLICE_F_NONBLOCK | SPLICE_F_MORE)));
		break;
	}
	case O_PROCESS_VM: {
		struct iovec local = {buf, pick_size(v[1]) % (4096 * 64)},
			     remote = {(char *)val[c->in[0]] + v[2] % 3 * 100, (size_t)aux[c->in[0]] >> (v[0] % 2)};
		if (v[0] / 2 % 2)
			SYS(process_vm_writev(getpid(), &local, 1, &remote, 1, v[2] % 11 ? 0 : 1));
		else
			SYS(process_vm_readv(getpid(), &local, 1, &remote, 1, v[2] % 11 ? 0 : 1));
		break;
	}
	case O_MLOCK: {
		void *a = (void *)val[c->in[0]];
		size_t len = (size_t)aux[c->in[0]] >> (v[1] % 2);
		if (len > 1 << 20) /* locking populates: a huge mapping would be an OOM kill */
			len = 1 << 20;
		switch (v[0] % 6) {
		case 0:
			SYS(mlock(a, len));
			break;
		case 1:
			SYS(syscall(SYS_mlock2, a, len, flags_of(v[2], MLOCK_ONFAULT)));
			break;
		case 2:
			SYS(munlock(a, len));
			break;
		case 3:
			SYS(msync(a, len, (int)flags_of(v[2], MS_ASYNC | MS_SYNC | MS_INVALIDATE)));
			break;
		case 4:
			SYS(mincore(a, len, (unsigned char *)buf));
			break;
		default:
			SYS(v[2] % 3 ? munlockall() : mlockall(MCL_ONFAULT | (v[2] % 2 ? MCL_CURRENT : 0)));
			break;
		}
		break;
	}
	case O_SOCKET: { /* no netlink nor packet sockets: they could change the guest's network */
		static const int families[] = {AF_INET, AF_INET6, AF_UNIX, AF_INET, AF_INET6};
		static const int types[] = {SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET, SOCK_RAW, SOCK_RDM};
		int family = v[0] % 6 < 5 ? families[v[0] % 6] : (int)(v[0] >> 3) % 46;
		if (family == AF_NETLINK || family == AF_PACKET)
			family = AF_UNIX;
		int proto = v[2] % 3 ? 0 : v[2] % 2 ? IPPROTO_ICMP : (int)edge(v[2] >> 2);
		set_result(c, 0, SYS(socket(family, types[v[1] % 5] | (int)flags_of(v[1] >> 3, SOCK_NONBLOCK | SOCK_CLOEXEC), proto)));
		break;
	}
	case O_GETSOCKOPT: {
		static const int opts[][2] = {
			{SOL_SOCKET, SO_TYPE},	      {SOL_SOCKET, SO_ERROR},	    {SOL_SOCKET, SO_RCVBUF},
			{SOL_SOCKET, SO_PEERCRED},    {SOL_SOCKET, SO_ACCEPTCONN},  {SOL_SOCKET, SO_DOMAIN},
			{SOL_SOCKET, SO_LINGER},      {SOL_SOCKET, SO_RCVTIMEO_OLD}, {IPPROTO_TCP, TCP_INFO},
			{IPPROTO_TCP, TCP_NODELAY},   {IPPROTO_TCP, TCP_MAXSEG},    {IPPROTO_IP, IP_TTL},
			{SOL_SOCKET, SO_PEERSEC},     {SOL_SOCKET, SO_COOKIE},	    {IPPROTO_TCP, TCP_CONGESTION}};
		socklen_t len = v[1] % 3 ? sizeof buf / 1024 : (socklen_t)edge(v[1] >> 2);
		const int *o = opts[v[0] % 15];
		if (v[2] % 3 == 0) {
			struct sockaddr_storage a;
			len = len % (sizeof a + 1);
			SYS(v[2] % 2 ? getpeername(fd(c, 0), (struct sockaddr *)&a, &len) : getsockname(fd(c, 0), (struct sockaddr *)&a, &len));
		} else
			SYS(getsockopt(fd(c, 0), o[0], o[1], buf, &len));
		break;
	}
	case O_MMSG: {
		struct mmsghdr mm[4];
		struct iovec iov[4];
		struct sockaddr_in6 from[4];
		unsigned n = 1 + v[0] % 4;
		for (unsigned k = 0; k < n; k++) {
			iov[k] = (struct iovec){buf + k * 65536, pick_size(v[1] >> (4 * k)) % 65537};
			mm[k] = (struct mmsghdr){.msg_hdr = {.msg_name = v[2] % 2 ? &from[k] : NULL,
							     .msg_namelen = sizeof from[k], .msg_iov = &iov[k], .msg_iovlen = 1}};
		}
		int flags = (int)flags_of(v[2] >> 1, MSG_DONTWAIT | MSG_PEEK | MSG_TRUNC | MSG_OOB | MSG_WAITFORONE |
							     MSG_NOSIGNAL | MSG_MORE | MSG_CMSG_CLOEXEC);
		struct timespec ts = {0, 1000000};
		if (v[0] / 4 % 3 == 0)
			SYS(sendmmsg(fd(c, 0), mm, n, (flags & ~MSG_PEEK) | MSG_DONTWAIT));
		else if (v[0] / 4 % 3 == 1)
			SYS(recvmmsg(fd(c, 0), mm, n, flags, v[2] % 5 ? &ts : NULL));
		else
			SYS(recvfrom(fd(c, 0), buf, pick_size(v[1]), flags, (struct sockaddr *)&from[0],
				     &(socklen_t){v[1] % 5 ? sizeof from[0] : (socklen_t)edge(v[1] >> 3) % 64}));
		break;
	}
	case O_PRCTL: {
		static const int options[] = {PR_SET_NAME,	 PR_GET_NAME,	     PR_SET_DUMPABLE,	   PR_GET_DUMPABLE,
					      PR_SET_PDEATHSIG,	 PR_GET_PDEATHSIG,   PR_SET_TIMERSLACK,	   PR_GET_TIMERSLACK,
					      PR_SET_NO_NEW_PRIVS, PR_GET_NO_NEW_PRIVS, PR_SET_CHILD_SUBREAPER, PR_GET_CHILD_SUBREAPER,
					      PR_SET_KEEPCAPS,	 PR_CAPBSET_READ,    PR_SET_THP_DISABLE,   PR_GET_TID_ADDRESS,
					      PR_SET_VMA,	 PR_GET_SECCOMP,     PR_SET_PTRACER,	   PR_GET_SPECULATION_CTRL};
		int option = v[0] % 21 < 20 ? options[v[0] % 21] : (int)edge(v[0] >> 5);
		if (option == PR_SET_SECCOMP || option == PR_SET_MM) /* a filter or the mm's layout would kill it */
			option = PR_GET_DUMPABLE;
		long arg = option == PR_SET_NAME || option == PR_GET_NAME || option == PR_GET_TID_ADDRESS ? (long)buf : edge(v[1]);
		if (option == PR_SET_NAME)
			buf[v[1] % 20] = 0;
		SYS(prctl(option, arg, option == PR_SET_VMA ? 0 : edge(v[2]), v[2] % 3 ? 0 : edge(v[2] >> 2), 0));
		break;
	}
	case O_RLIMIT: { /* no CPU, NPROC nor RTTIME limit: their SIGKILL would read as a kernel bug */
		static const int res[] = {RLIMIT_NOFILE, RLIMIT_AS,	    RLIMIT_DATA,       RLIMIT_STACK,  RLIMIT_FSIZE,
					  RLIMIT_MEMLOCK, RLIMIT_MSGQUEUE, RLIMIT_NICE,	       RLIMIT_RTPRIO, RLIMIT_SIGPENDING,
					  RLIMIT_CORE,	 RLIMIT_LOCKS,	  RLIMIT_NLIMITS + 3};
		struct rlimit lim = {(rlim_t)edge(v[1]), v[2] % 3 ? RLIM_INFINITY : (rlim_t)edge(v[2] >> 2)}, old;
		int rs = res[v[0] % 13];
		if (rs == RLIMIT_NOFILE && lim.rlim_cur < 64) /* the program keeps its descriptors usable */
			lim.rlim_cur = 64;
		SYS(prlimit(0, rs, v[0] / 13 % 3 ? &lim : NULL, &old));
		break;
	}
	case O_SCHED: {
		cpu_set_t set;
		CPU_ZERO(&set);
		*(uint64_t *)&set = v[1] % 4 ? v[1] % 4 : (uint64_t)edge(v[1] >> 2);
		switch (v[0] % 8) {
		case 0:
			SYS(sched_setaffinity(v[2] % 2 ? 0 : (pid_t)syscall(SYS_gettid), v[2] % 3 ? 8 : (size_t)edge(v[2] >> 2) % 256, &set));
			break;
		case 1:
			SYS(syscall(SYS_sched_getaffinity, 0, v[2] % 3 ? 128 : (size_t)edge(v[2] >> 2) % 1024, buf));
			break;
		case 2: { /* no real-time policy: a spinning program would starve the workers */
			static const int policies[] = {SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_OTHER | SCHED_RESET_ON_FORK, 12};
			struct sched_param sp = {.sched_priority = (int)(v[2] % 3)};
			SYS(sched_setscheduler(0, policies[v[1] % 5], &sp));
			break;
		}
		case 3:
			SYS(setpriority(PRIO_PROCESS, 0, (int)(v[1] % 45) - 20));
			break;
		case 4:
			SYS(getpriority((int)(v[1] % 4), 0));
			break;
		case 5: {
			unsigned cpu, node;
			SYS(syscall(SYS_getcpu, &cpu, v[1] % 2 ? &node : NULL, NULL));
			SYS(sched_yield());
			break;
		}
		case 6:
			SYS(syscall(SYS_sched_getattr, 0, buf, v[1] % 3 ? 56 : (unsigned)edge(v[1] >> 2), 0));
			break;
		default:
			SYS(syscall(SYS_ioprio_set, 1, 0, (int)edge(v[1])));
			SYS(syscall(SYS_ioprio_get, 1, 0));
			break;
		}
		break;
	}
	case O_UNSHARE:
		SYS(unshare((int)flags_of(v[0], CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWPID |
						       CLONE_NEWUSER | CLONE_NEWCGROUP | CLONE_FILES | CLONE_FS | CLONE_SYSVSEM) &
			    ~(CLONE_VM | CLONE_SIGHAND | CLONE_THREAD)));
		break;
	case O_CREDS: {
		gid_t groups[4] = {(gid_t)v[2], 0, 65534, 100};
		switch (v[0] % 5) {
		case 0:
			SYS(setgroups(v[1] % 3 ? v[1] % 5 : (size_t)edge(v[1] >> 2), groups));
			break;
		case 1:
			SYS(getgroups(v[1] % 3 ? (int)(v[1] % 5) : (int)edge(v[1] >> 2), groups));
			break;
		case 2:
			SYS(setresgid(-1, v[1] % 2 ? 65534 : (gid_t)edge(v[1] >> 1), -1));
			break;
		case 3:
			SYS(v[1] % 2 ? setfsuid((uid_t)edge(v[1] >> 1)) : setfsgid((gid_t)edge(v[1] >> 1)));
			break;
		default:
			SYS(setresuid(-1, v[1] % 2 ? 65534 : (uid_t)edge(v[1] >> 1), -1));
			break;
		}
		break;
	}
	case O_CLOSE_RANGE: {
		unsigned first = (unsigned)fd(c, 0);
		SYS(syscall(SYS_close_range, first, v[0] % 3 ? first + v[0] % 4 : (unsigned)edge(v[0] >> 2),
			    flags_of(v[1], CLOSE_RANGE_CLOEXEC | CLOSE_RANGE_UNSHARE)));
		break;
	}
	case O_MISC:
		switch (v[0] % 7) {
		case 0:
			SYS(getrandom(buf, pick_size(v[1]), flags_of(v[2], GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE)));
			break;
		case 1: {
			struct timespec ts;
			clockid_t clk = v[1] % 3 ? (clockid_t)(v[1] % 12) : (clockid_t)edge(v[1] >> 2);
			SYS(v[2] % 2 ? clock_gettime(clk, &ts) : clock_getres(clk, &ts));
			break;
		}
		case 2: {
			struct timespec ts = {0, v[2] % 4 ? (long)(v[2] % 3) * 100000 : (long)edge(v[2] >> 2)};
			SYS(clock_nanosleep(v[1] % 2 ? CLOCK_MONOTONIC : CLOCK_BOOTTIME, v[1] % 5 == 0 ? TIMER_ABSTIME : 0, &ts, NULL));
			break;
		}
		case 3: {
			struct rusage ru;
			SYS(getrusage(v[1] % 3 ? (int)(v[1] % 3) - 1 : (int)edge(v[1] >> 2), &ru));
			break;
		}
		case 4:
			SYS(syscall(SYS_membarrier, (int)flags_of(v[1], 0x7f), 0, 0));
			break;
		case 5: {
			struct timex tx = {.modes = 0};
			SYS(syscall(SYS_clock_adjtime, v[1] % 2 ? CLOCK_REALTIME : (clockid_t)edge(v[1] >> 1), &tx));
			break;
		}
		default: {
			struct sysinfo si;
			SYS(sysinfo(&si));
			break;
		}
		}
		break;
	}
}

/* thread_done counts a thread of the program as done; the last wakes
 * the main thread if it waits for them. */
static void thread_done(int t) {
	if (__atomic_add_fetch(&threads_done, 1, __ATOMIC_SEQ_CST) >= running->nthreads && t != 0)
		syscall(SYS_futex, &threads_done, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *thread_main(void *arg) {
	int t = (int)(long)arg;
	for (int i = 0; i < running->ncalls; i++)
		if (running->c[i].thread == t) {
			stats->current[worker_index][t] = i;
			if (tracing)
				printf("fuzz: t%d call %d %s\n", t, i, ops[running->c[i].op].name);
			run_call(&running->c[i]);
			if (tracing)
				printf("fuzz: t%d call %d: last result %ld, errno %d\n", t, i, last_result, last_errno);
		}
	stats->current[worker_index][t] = -1;
	thread_done(t);
	return NULL;
}

/* program_mask is the signal mask a program starts with: the signals
 * programs send themselves stay pending, for signalfd and sigtimedwait
 * (SIGXFSZ, a file size limit, is EFBIG then), and SIGALRM waits until the
 * threads are made. */
static sigset_t program_mask;

/* program_signals sets, once in a worker, the handlers every program of
 * it runs with (fork keeps them), where each program set them anew. */
static void program_signals(void) {
	futexes = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct sigaction sa = {.sa_handler = on_fault, .sa_flags = SA_NODEFER};
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sa.sa_handler = on_alarm;
	sa.sa_flags = 0; /* no SA_RESTART: blocking calls end with EINTR */
	sigaction(SIGALRM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&program_mask);
	sigaddset(&program_mask, SIGUSR1);
	sigaddset(&program_mask, SIGUSR2);
	sigaddset(&program_mask, SIGIO);
	sigaddset(&program_mask, SIGXFSZ);
	sigaddset(&program_mask, SIGALRM);
}

/* run_program is the child process of a worker that runs a program. */
static void run_program(const struct program *prog) {
	static struct program pr;
	pr = *prog;
	running = &pr;
	for (int i = 0; i < SLOTS; i++)
		val[i] = -1;
	memset(futexes, 0, 16 * sizeof *futexes);
	/* The worker set the handlers and blocked SIGALRM and SIGCHLD; the
	 * threads start with SIGALRM blocked still. */
	sigprocmask(SIG_SETMASK, &program_mask, NULL);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (long t = 1; t < pr.nthreads; t++) {
		pthread_t th;
		if (pthread_create(&th, &attr, thread_main, (void *)t) != 0)
			thread_done((int)t);
	}
	sigset_t alarm;
	sigemptyset(&alarm);
	sigaddset(&alarm, SIGALRM);
	sigprocmask(SIG_UNBLOCK, &alarm, NULL);
	struct itimerval it = {{0, 30000}, {0, 30000}};
	setitimer(ITIMER_REAL, &it, NULL);
	thread_main((void *)0);
	/* Give the other threads 20 ms, then end them wherever they are: a
	 * wait the last of them ends (polling cost a system call and a wake-up
	 * a millisecond, a program's worth of calls in all). */
	struct timespec deadline, now;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_nsec += 20000000;
	for (int done; (done = __atomic_load_n(&threads_done, __ATOMIC_SEQ_CST)) < pr.nthreads;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		long left = (deadline.tv_sec - now.tv_sec) * 1000000000 + deadline.tv_nsec - now.tv_nsec;
		if (left <= 0)
			break;
		struct timespec wait = {0, left};
		syscall(SYS_futex, &threads_done, FUTEX_WAIT_PRIVATE, done, &wait, NULL, 0);
	}
	_exit(0);
}

/* Guided mode (a kernel built with make kernel-cover): the programs that
 * raised the number of the kernel's coverage counters that are not zero
 * (/proc/gocover/hit, read after each program) are kept in a corpus the
 * workers share, and three programs in four are derived from it (one in
 * four of those spliced from two), the rest fresh. The counters are the
 * whole kernel's, so a program is credited with what the programs of
 * the other workers reached meanwhile too. */
#define CORPUS 2048
struct corpus {
	int lock, n;
	uint64_t hit;  /* the most counters reached after a program */
	uint64_t kept; /* programs that raised it */
	struct {
		uint64_t p;
		struct program pr;
	} e[CORPUS];
};
static struct corpus *corpus;
static struct parents *lineage; /* given on the command line, nlineage of them */
static int nlineage;

static uint64_t counters_hit(void) {
	char b[32] = {0};
	int f = open("/proc/gocover/hit", O_RDONLY);
	if (f < 0)
		return 0;
	if (read(f, b, sizeof b - 1) < 0)
		b[0] = 0;
	close(f);
	return strtoull(b, NULL, 10);
}

static void corpus_lock(void) {
	while (__atomic_exchange_n(&corpus->lock, 1, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &corpus->lock, FUTEX_WAIT, 1, NULL, NULL, 0);
}

static void corpus_unlock(void) {
	__atomic_store_n(&corpus->lock, 0, __ATOMIC_RELEASE);
	syscall(SYS_futex, &corpus->lock, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* choose makes program p: derived from the corpus (a choice drawn from
 * seed and p, and parents from what the corpus holds then, which the
 * worker prints as "fuzz: wW pP < pA[+pB]"), or fresh. */
static void choose(struct program *pr, uint64_t seed, uint64_t p, int w) {
	seed_state(seed, p ^ 0x94d049bb133111ebull);
	uint64_t r = next(), ra = next(), rb = next();
	corpus_lock();
	int n = corpus->n;
	if (n == 0 || r % 2 == 0) {
		corpus_unlock();
		generate(pr, seed, p);
		printf("fuzz: w%d p%llu\n", w, (unsigned long long)p);
		return;
	}
	static struct program a, b;
	int ia = ra % n, ib = rb % n, splice = r % 8 == 1 && n > 1;
	uint64_t pa = corpus->e[ia].p, pb = corpus->e[ib].p;
	a = corpus->e[ia].pr, b = corpus->e[ib].pr;
	corpus_unlock();
	derive(pr, &a, splice ? &b : NULL, seed, p);
	if (splice)
		printf("fuzz: w%d p%llu < p%llu+p%llu\n", w, (unsigned long long)p, (unsigned long long)pa,
		       (unsigned long long)pb);
	else
		printf("fuzz: w%d p%llu < p%llu\n", w, (unsigned long long)p, (unsigned long long)pa);
}

/* learn keeps program p in the corpus if the counters reached rose. */
static void learn(const struct program *pr, uint64_t p) {
	uint64_t hit = counters_hit();
	corpus_lock();
	if (hit > corpus->hit) {
		corpus->hit = hit;
		corpus->kept++;
		int i = corpus->n < CORPUS ? corpus->n++ : (int)(hit % CORPUS);
		corpus->e[i].p = p;
		corpus->e[i].pr = *pr;
	}
	corpus_unlock();
}

static void print_calls(int w) {
	for (int t = 0; t < THREADS; t++)
		if (stats->current[w][t] >= 0)
			printf(" t%d:%d", t, stats->current[w][t]);
	printf("\n");
}

/* worker runs programs first+w, first+w+workers, ... below first+n. */
static int worker(uint64_t seed, uint64_t first, uint64_t n, int w, int workers) {
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	int failed = 0;
	program_signals();
	sigprocmask(SIG_BLOCK, &chld, NULL); /* for sigtimedwait; each program unblocks it */
	for (uint64_t p = first + w; p < first + n; p += workers) {
		static struct program pr;
		if (corpus)
			choose(&pr, seed, p, w);
		else {
			build(&pr, seed, p, lineage, nlineage);
			printf("fuzz: w%d p%llu\n", w, (unsigned long long)p);
		}
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0) {
			printf("fuzz: fork failed: %s\n", strerror(errno));
			return 1;
		}
		for (int t = 0; t < THREADS; t++)
			stats->current[w][t] = -1;
		if (pid == 0) {
			worker_index = w;
			setpgid(0, 0);
			run_program(&pr);
		}
		setpgid(pid, pid);
		struct timespec start, now, tick = {0, 100 * 1000000};
		clock_gettime(CLOCK_MONOTONIC, &start);
		int status = 0, killed = 0;
		while (waitpid(pid, &status, WNOHANG) == 0) {
			sigtimedwait(&chld, NULL, &tick);
			clock_gettime(CLOCK_MONOTONIC, &now);
			long ms = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
			if (!killed && ms > 3000) {
				printf("fuzz: seed %llu program %llu still running after 3 s: killed; in calls",
				       (unsigned long long)seed, (unsigned long long)p);
				print_calls(w);
				print_program(&pr, seed, p);
				kill(-pid, SIGKILL);
				__atomic_fetch_add(&stats->slow, 1, __ATOMIC_RELAXED);
				killed = 1;
			} else if (killed && ms > 13000) {
				printf("fuzz: seed %llu program %llu: SIGKILL did not end it in 10 s (a kernel hang)\n",
				       (unsigned long long)seed, (unsigned long long)p);
				__atomic_fetch_add(&stats->unkillable, 1, __ATOMIC_RELAXED);
				failed = 1;
				break;
			}
		}
		kill(-pid, SIGKILL); /* what the program forked */
		if (!killed && WIFSIGNALED(status)) {
			__atomic_fetch_add(&stats->signaled, 1, __ATOMIC_RELAXED);
			if (WTERMSIG(status) != SIGKILL)
				printf("fuzz: seed %llu program %llu ended by signal %d (%s)\n", (unsigned long long)seed,
				       (unsigned long long)p, WTERMSIG(status), strsignal(WTERMSIG(status)));
		}
		if (!killed && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
			/* the kernel's answer to a handler bug, or the OOM killer */
			printf("fuzz: seed %llu program %llu was killed by SIGKILL in calls", (unsigned long long)seed,
			       (unsigned long long)p);
			print_calls(w);
			print_program(&pr, seed, p);
		}
		remove_ipc(w);
		if (corpus)
			learn(&pr, p);
		__atomic_fetch_add(&stats->programs, 1, __ATOMIC_RELAXED);
	}
	return failed;
}

/* print_file writes a file on the console in base64, between "fuzz:
 * gocover NAME SIZE" and "fuzz: gocover end", for the test to decode. */
static void print_file(const char *name, const char *path) {
	static char data[16 << 20];
	static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	long size = 0, r;
	int f = open(path, O_RDONLY);
	while (f >= 0 && size < (long)sizeof data && (r = read(f, data + size, sizeof data - size)) > 0)
		size += r;
	close(f);
	printf("fuzz: gocover %s %ld\n", name, size);
	char line[77];
	int k = 0;
	for (long i = 0; i < size; i += 3) {
		uint32_t v = (uint8_t)data[i] << 16 | (i + 1 < size ? (uint8_t)data[i + 1] << 8 : 0) |
			     (i + 2 < size ? (uint8_t)data[i + 2] : 0);
		line[k++] = digits[v >> 18 & 63];
		line[k++] = digits[v >> 12 & 63];
		line[k++] = i + 1 < size ? digits[v >> 6 & 63] : '=';
		line[k++] = i + 2 < size ? digits[v & 63] : '=';
		if (k == 76 || i + 3 >= size) {
			line[k] = 0;
			puts(line);
			k = 0;
		}
	}
	printf("fuzz: gocover end\n");
}

/* parse_lineage reads the words P=A or P=A+B of argv. */
static void parse_lineage(int argc, char **argv) {
	lineage = calloc(argc, sizeof *lineage);
	for (int i = 0; i < argc; i++) {
		char *end;
		struct parents l = {.p = strtoull(argv[i], &end, 10)};
		if (*end != '=')
			continue;
		l.a = strtoull(end + 1, &end, 10);
		l.b = *end == '+' ? strtoull(end + 1, NULL, 10) : l.p;
		lineage[nlineage++] = l;
	}
}

int main(int argc, char **argv) {
	if (argc >= 4 && strcmp(argv[1], "print") == 0) {
		struct program pr;
		uint64_t seed = strtoull(argv[2], NULL, 0), p = strtoull(argv[3], NULL, 0);
		parse_lineage(argc - 4, argv + 4);
		build(&pr, seed, p, lineage, nlineage);
		print_program(&pr, seed, p);
		return 0;
	}
	if (argc < 4) {
		fprintf(stderr, "usage: fuzz SEED PROGRAMS WORKERS [FIRST [trace] [cover] [guided] [P=A[+B]]...] | "
				"fuzz print SEED PROGRAM [P=A[+B]]...\n");
		return 2;
	}
	uint64_t seed = strtoull(argv[1], NULL, 0), n = strtoull(argv[2], NULL, 0);
	int workers = atoi(argv[3]);
	uint64_t first = argc > 4 ? strtoull(argv[4], NULL, 0) : 0;
	int cover = 0;
	for (int i = 5; i < argc; i++) {
		tracing |= strcmp(argv[i], "trace") == 0;
		cover |= strcmp(argv[i], "cover") == 0;
		if (strcmp(argv[i], "guided") == 0)
			corpus = mmap(NULL, sizeof *corpus, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	}
	parse_lineage(argc > 5 ? argc - 5 : 0, argv + 5);
	if (workers < 1)
		workers = 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	stats = mmap(NULL, sizeof *stats, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (getpid() == 1) {
		mkdir("/tmp", 0777);
		mount("tmpfs", "/tmp", "tmpfs", 0, NULL);
	}
	struct timespec start, end;
	clock_gettime(CLOCK_MONOTONIC, &start);
	pid_t pids[64];
	workers = workers > 64 ? 64 : workers;
	for (int w = 0; w < workers; w++) {
		pids[w] = fork();
		if (pids[w] == 0)
			_exit(worker(seed, first, n, w, workers));
	}
	/* As init, reap the workers and every orphan of the programs. */
	int left = workers, failed = 0, status;
	while (left > 0) {
		pid_t pid = wait(&status);
		if (pid < 0)
			break;
		for (int w = 0; w < workers; w++)
			if (pid == pids[w]) {
				left--;
				if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
					failed = 1;
			}
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	printf("fuzz: seed %llu: %llu programs, %llu calls, %llu system calls by %d workers in %.1f s (%llu ended by a "
	       "signal, %llu killed after 3 s, %llu not ended by SIGKILL)\n",
	       (unsigned long long)seed, (unsigned long long)stats->programs, (unsigned long long)stats->calls,
	       (unsigned long long)stats->syscalls, workers,
	       (double)(end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9,
	       (unsigned long long)stats->signaled, (unsigned long long)stats->slow,
	       (unsigned long long)stats->unkillable);
	if (cover)
		printf("fuzz: seed %llu: %llu coverage counters hit, %llu programs raised it and were kept\n",
		       (unsigned long long)seed, (unsigned long long)counters_hit(),
		       (unsigned long long)(corpus ? corpus->kept : 0));
	if (cover) {
		print_file("meta", "/proc/gocover/meta");
		print_file("counters", "/proc/gocover/counters");
	}
	return failed;
}
