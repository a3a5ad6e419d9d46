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
 * the kernel killed (a handler bug, or the OOM killer) is printed too. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <netinet/in.h>
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
#include <sys/sendfile.h>
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
	K_SAME, /* an output of the kind of the first input */
};
#define B(k) (1u << (k))
#define UNIXS (B(K_UNIX_STREAM) | B(K_UNIX_DGRAM) | B(K_UNIX_SEQ))
#define SOCKS (UNIXS | B(K_TCP) | B(K_UDP))
#define FILES (B(K_MEMFD) | B(K_FILE))
#define FDS                                                                                                  \
	(B(K_PIPE_R) | B(K_PIPE_W) | SOCKS | B(K_TCP_LISTEN) | B(K_EVENTFD) | B(K_TIMERFD) | B(K_EPOLL) |        \
	 B(K_INOTIFY) | FILES | B(K_PIDFD) | B(K_RECVD))
#define READABLE (B(K_PIPE_R) | SOCKS | B(K_EVENTFD) | B(K_TIMERFD) | B(K_INOTIFY) | FILES | B(K_RECVD))
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
static uint32_t *futexes; /* 16 words shared with the program's children */
static const struct program *running;
static int threads_done, worker_index;

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
		size_t len = 4096 * (1 + v[0] % 16);
		int prot = v[1] % 4 ? PROT_READ | PROT_WRITE : PROT_READ;
		int flags = (v[2] % 2 ? MAP_SHARED : MAP_PRIVATE) | (c->op == O_MMAP_ANON ? MAP_ANONYMOUS : 0);
		void *a = (void *)SYS(syscall(SYS_mmap, NULL, len, prot, flags, c->op == O_MMAP_ANON ? -1 : fd(c, 0), 0));
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
			for (long off = v[0] % 4096; off < len; off += 4096) {
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
	}
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
	__atomic_fetch_add(&threads_done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* run_program is the child process of a worker that runs a program. */
static void run_program(const struct program *prog) {
	static struct program pr;
	pr = *prog;
	running = &pr;
	for (int i = 0; i < SLOTS; i++)
		val[i] = -1;
	futexes = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct sigaction sa = {.sa_handler = on_fault, .sa_flags = SA_NODEFER};
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sa.sa_handler = on_alarm;
	sa.sa_flags = 0; /* no SA_RESTART: blocking calls end with EINTR */
	sigaction(SIGALRM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigset_t alarm;
	sigemptyset(&alarm);
	sigaddset(&alarm, SIGALRM);
	sigprocmask(SIG_BLOCK, &alarm, NULL);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (long t = 1; t < pr.nthreads; t++) {
		pthread_t th;
		if (pthread_create(&th, &attr, thread_main, (void *)t) != 0)
			__atomic_fetch_add(&threads_done, 1, __ATOMIC_SEQ_CST);
	}
	sigprocmask(SIG_UNBLOCK, &alarm, NULL);
	struct itimerval it = {{0, 30000}, {0, 30000}};
	setitimer(ITIMER_REAL, &it, NULL);
	thread_main((void *)0);
	/* Give the other threads 20 ms, then end them wherever they are. */
	for (int i = 0; i < 20 && __atomic_load_n(&threads_done, __ATOMIC_SEQ_CST) < pr.nthreads; i++) {
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
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
	for (uint64_t p = first + w; p < first + n; p += workers) {
		static struct program pr;
		if (corpus)
			choose(&pr, seed, p, w);
		else {
			build(&pr, seed, p, lineage, nlineage);
			printf("fuzz: w%d p%llu\n", w, (unsigned long long)p);
		}
		fflush(stdout);
		sigprocmask(SIG_BLOCK, &chld, NULL);
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
			sigprocmask(SIG_UNBLOCK, &chld, NULL);
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
		sigprocmask(SIG_UNBLOCK, &chld, NULL);
		kill(-pid, SIGKILL); /* what the program forked */
		if (!killed && WIFSIGNALED(status))
			__atomic_fetch_add(&stats->signaled, 1, __ATOMIC_RELAXED);
		if (!killed && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
			/* the kernel's answer to a handler bug, or the OOM killer */
			printf("fuzz: seed %llu program %llu was killed by SIGKILL in calls", (unsigned long long)seed,
			       (unsigned long long)p);
			print_calls(w);
			print_program(&pr, seed, p);
		}
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
	stats = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
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
