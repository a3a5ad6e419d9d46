/* io_uring: io_uring_setup's checks and answer, the ring mappings,
 * submissions of each operation offered (no-op, reads and writes at an
 * offset and at the file position, vectored and fixed-buffer ones,
 * fsync, sendmsg/recvmsg, send/recv, close), completions with their
 * errors, links, CQE_SKIP_SUCCESS, a submission that cannot start,
 * io_uring_enter's waits (a timeout through the extended argument) and
 * io_uring_register (buffers, an eventfd, the probe). qemu-user has no
 * io_uring, so Linux itself is the oracle. */
#include "../../conform/conform.h"
#include <linux/io_uring.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>

static long setup(unsigned entries, struct io_uring_params *p) { return syscall(SYS_io_uring_setup, entries, p); }
static long enter(int fd, unsigned submit, unsigned min, unsigned flags, void *arg, size_t sz) {
	return syscall(SYS_io_uring_enter, fd, submit, min, flags, arg, sz);
}
static long reg(int fd, unsigned op, void *arg, unsigned nr) { return syscall(SYS_io_uring_register, fd, op, arg, nr); }

struct ring {
	int fd;
	struct io_uring_params p;
	char *sq, *cq;
	struct io_uring_sqe *sqes;
};

static int ring_init(struct ring *r, unsigned entries, unsigned flags) {
	memset(r, 0, sizeof *r);
	r->p.flags = flags;
	r->fd = setup(entries, &r->p);
	if (r->fd < 0)
		return -1;
	size_t sqsz = r->p.sq_off.array + r->p.sq_entries * 4;
	size_t cqsz = r->p.cq_off.cqes + r->p.cq_entries * sizeof(struct io_uring_cqe);
	r->sq = mmap(0, sqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	r->cq = mmap(0, cqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
	r->sqes = mmap(0, r->p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		       r->fd, IORING_OFF_SQES);
	return r->sq == MAP_FAILED || r->cq == MAP_FAILED || r->sqes == MAP_FAILED ? -1 : 0;
}

#define U32(base, off) ((volatile unsigned *)((base) + (off)))

/* queue puts an entry on the submission ring and returns it to fill. */
static struct io_uring_sqe *queue(struct ring *r, int op, int fd, uint64_t addr, unsigned len, uint64_t off, uint64_t data) {
	unsigned tail = *U32(r->sq, r->p.sq_off.tail), mask = *U32(r->sq, r->p.sq_off.ring_mask);
	struct io_uring_sqe *e = &r->sqes[tail & mask];
	memset(e, 0, sizeof *e);
	e->opcode = op;
	e->fd = fd;
	e->addr = addr;
	e->len = len;
	e->off = off;
	e->user_data = data;
	U32(r->sq, r->p.sq_off.array)[tail & mask] = tail & mask;
	__atomic_store_n(U32(r->sq, r->p.sq_off.tail), tail + 1, __ATOMIC_RELEASE);
	return e;
}

/* reap prints every completion waiting, in order, and consumes them. */
static void reap(const char *name, struct ring *r) {
	unsigned head = *U32(r->cq, r->p.cq_off.head), mask = *U32(r->cq, r->p.cq_off.ring_mask);
	unsigned tail = __atomic_load_n(U32(r->cq, r->p.cq_off.tail), __ATOMIC_ACQUIRE);
	struct io_uring_cqe *cqes = (void *)(r->cq + r->p.cq_off.cqes);
	int n = 0;
	for (; head != tail; head++, n++) {
		struct io_uring_cqe *c = &cqes[head & mask];
		if (c->res < 0)
			printf("%s.cqe: data %llu res -%s\n", name, (unsigned long long)c->user_data, strerrorname_np(-c->res));
		else
			printf("%s.cqe: data %llu res %d\n", name, (unsigned long long)c->user_data, c->res);
	}
	__atomic_store_n(U32(r->cq, r->p.cq_off.head), head, __ATOMIC_RELEASE);
	SHOW(name, "%d completions", n);
}

/* submit submits what is queued, waits for want completions and reaps. */
static void submit(const char *name, struct ring *r, unsigned n, unsigned want) {
	char label[96];
	snprintf(label, sizeof label, "%s.enter", name);
	RET(label, enter(r->fd, n, want, IORING_ENTER_GETEVENTS, NULL, 0));
	reap(name, r);
}

static void setup_checks(void) {
	struct io_uring_params p;
	memset(&p, 0, sizeof p);
	RET("setup.zero", setup(0, &p));
	RET("setup.toomany", setup(40000, &p));
	memset(&p, 0, sizeof p);
	p.flags = IORING_SETUP_CLAMP;
	long fd = setup(40000, &p);
	SHOW("setup.clamp", "%s sq %u cq %u", fd >= 0 ? "ok" : "failed", p.sq_entries, p.cq_entries);
	close(fd);
	memset(&p, 0, sizeof p);
	p.flags = 1u << 30;
	RET("setup.badflag", setup(4, &p));
	memset(&p, 0, sizeof p);
	p.resv[1] = 1;
	RET("setup.resv", setup(4, &p));
	memset(&p, 0, sizeof p);
	p.flags = IORING_SETUP_CQSIZE;
	RET("setup.cqsize0", setup(4, &p));
	p.cq_entries = 2;
	RET("setup.cqsmall", setup(4, &p));
	memset(&p, 0, sizeof p);
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 100;
	fd = setup(4, &p);
	SHOW("setup.cqsize", "%s sq %u cq %u", fd >= 0 ? "ok" : "failed", p.sq_entries, p.cq_entries);
	close(fd);
	RET("setup.fault", setup(4, BAD));
	memset(&p, 0, sizeof p);
	fd = setup(5, &p);
	SHOW("setup.five", "sq %u cq %u", p.sq_entries, p.cq_entries);
	unsigned want = IORING_FEAT_SINGLE_MMAP | IORING_FEAT_SUBMIT_STABLE | IORING_FEAT_RW_CUR_POS | IORING_FEAT_EXT_ARG |
			IORING_FEAT_CQE_SKIP;
	SHOW("setup.features", "%s", (p.features & want) == want ? "all asked" : "some missing");
	RET("mmap.badoffset", mmap(0, 4096, PROT_READ, MAP_SHARED, fd, 0x12345000) == MAP_FAILED ? -1 : 0);
	RET("mmap.toolong", mmap(0, 1 << 20, PROT_READ, MAP_SHARED, fd, IORING_OFF_SQES) == MAP_FAILED ? -1 : 0);
	int flags = fcntl(fd, F_GETFD);
	SHOW("setup.cloexec", "%d", flags & FD_CLOEXEC);
	char buf[8];
	RET("ring.read", read(fd, buf, sizeof buf));
	RET("ring.write", write(fd, buf, sizeof buf));
	close(fd);
	/* Debian's Linux 6.12 has no kernel.io_uring_disabled. */
	RET("io_uring_disabled", access("/proc/sys/kernel/io_uring_disabled", F_OK));
}

static void enter_checks(struct ring *r) {
	RET("enter.badfd", enter(-1, 0, 0, 0, NULL, 0));
	RET("enter.notring", enter(0, 0, 0, 0, NULL, 0));
	RET("enter.badflag", enter(r->fd, 0, 0, 1u << 20, NULL, 0));
	RET("enter.nothing", enter(r->fd, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0));
	RET("enter.registered", enter(3, 0, 0, IORING_ENTER_REGISTERED_RING, NULL, 0));
	struct __kernel_timespec ts = {0, 50 * 1000 * 1000};
	struct io_uring_getevents_arg arg = {.ts = (uint64_t)(uintptr_t)&ts};
	RET("enter.timeout", enter(r->fd, 0, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &arg, sizeof arg));
	RET("enter.argsz", enter(r->fd, 0, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &arg, 8));
	RET("enter.sigsz", enter(r->fd, 0, 0, IORING_ENTER_GETEVENTS, &arg, 4));
	/* Asking more than is queued submits what there is and does not wait. */
	queue(r, IORING_OP_NOP, -1, 0, 0, 0, 1);
	RET("enter.short", enter(r->fd, 4, 1, IORING_ENTER_GETEVENTS, NULL, 0));
	reap("enter.short", r);
}

static void rw_checks(struct ring *r) {
	int fd = open("uring_file", O_RDWR | O_CREAT | O_TRUNC, 0600);
	char out[64] = "abcdefghijklmnopqrstuvwxyz", in[64] = {0};
	queue(r, IORING_OP_WRITE, fd, (uintptr_t)out, 26, 0, 10);
	submit("write", r, 1, 1);
	queue(r, IORING_OP_READ, fd, (uintptr_t)in, 5, 3, 11);
	submit("read.at", r, 1, 1);
	SHOW("read.at.data", "%.5s", in);
	/* Offset -1 is the file position: it moves. */
	lseek(fd, 20, SEEK_SET);
	queue(r, IORING_OP_READ, fd, (uintptr_t)in, 4, -1, 12);
	submit("read.pos", r, 1, 1);
	SHOW("read.pos.data", "%.4s", in);
	SHOW("read.pos.offset", "%ld", (long)lseek(fd, 0, SEEK_CUR));
	struct iovec iov[2] = {{in, 3}, {in + 10, 3}};
	queue(r, IORING_OP_READV, fd, (uintptr_t)iov, 2, 0, 13);
	submit("readv", r, 1, 1);
	SHOW("readv.data", "%.3s %.3s", in, in + 10);
	struct iovec wiov[2] = {{"XY", 2}, {"Z", 1}};
	queue(r, IORING_OP_WRITEV, fd, (uintptr_t)wiov, 2, 1, 14);
	submit("writev", r, 1, 1);
	pread(fd, in, 6, 0);
	SHOW("writev.data", "%.6s", in);
	queue(r, IORING_OP_READ, 999, (uintptr_t)in, 4, 0, 15);
	submit("read.badfd", r, 1, 1);
	queue(r, IORING_OP_READ, fd, (uintptr_t)BAD, 4, 0, 16);
	submit("read.fault", r, 1, 1);
	struct io_uring_sqe *e = queue(r, IORING_OP_READ, fd, (uintptr_t)in, 4, 0, 17);
	e->rw_flags = 0x40000000;
	submit("read.badrwflags", r, 1, 1);
	queue(r, IORING_OP_FSYNC, fd, 0, 0, 0, 18);
	submit("fsync", r, 1, 1);
	e = queue(r, IORING_OP_FSYNC, fd, 0, 0, 0, 19);
	e->fsync_flags = 8;
	submit("fsync.badflags", r, 1, 1);

	/* Fixed buffers: within the registered one, outside it, no such one. */
	static char fixed[256];
	struct iovec fiov = {fixed, sizeof fixed};
	RET("register.buffers", reg(r->fd, IORING_REGISTER_BUFFERS, &fiov, 1));
	RET("register.buffers.again", reg(r->fd, IORING_REGISTER_BUFFERS, &fiov, 1));
	e = queue(r, IORING_OP_READ_FIXED, fd, (uintptr_t)fixed + 8, 6, 0, 20);
	submit("readfixed", r, 1, 1);
	SHOW("readfixed.data", "%.6s", fixed + 8);
	e = queue(r, IORING_OP_READ_FIXED, fd, (uintptr_t)fixed + 250, 16, 0, 21);
	submit("readfixed.outside", r, 1, 1);
	e = queue(r, IORING_OP_WRITE_FIXED, fd, (uintptr_t)fixed, 4, 0, 22);
	e->buf_index = 3;
	submit("writefixed.noindex", r, 1, 1);
	RET("unregister.buffers", reg(r->fd, IORING_UNREGISTER_BUFFERS, NULL, 0));
	RET("unregister.buffers.again", reg(r->fd, IORING_UNREGISTER_BUFFERS, NULL, 0));
	struct iovec bad = {NULL, 16};
	RET("register.buffers.null", reg(r->fd, IORING_REGISTER_BUFFERS, &bad, 1));
	RET("register.buffers.none", reg(r->fd, IORING_REGISTER_BUFFERS, &fiov, 0));
	RET("register.buffers.fault", reg(r->fd, IORING_REGISTER_BUFFERS, BAD, 1));
	close(fd);
	unlink("uring_file");
}

static void socket_checks(struct ring *r) {
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	char in[16] = {0};
	struct iovec iov = {"hello", 5};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	queue(r, IORING_OP_SENDMSG, sv[0], (uintptr_t)&m, 1, 0, 30);
	submit("sendmsg", r, 1, 1);
	struct iovec riov = {in, sizeof in};
	struct msghdr rm = {.msg_iov = &riov, .msg_iovlen = 1};
	queue(r, IORING_OP_RECVMSG, sv[1], (uintptr_t)&rm, 1, 0, 31);
	submit("recvmsg", r, 1, 1);
	SHOW("recvmsg.data", "%.5s", in);
	queue(r, IORING_OP_SEND, sv[1], (uintptr_t)"world", 5, 0, 32);
	submit("send", r, 1, 1);
	queue(r, IORING_OP_RECV, sv[0], (uintptr_t)in, sizeof in, 0, 33);
	submit("recv", r, 1, 1);
	SHOW("recv.data", "%.5s", in);
	struct io_uring_sqe *e = queue(r, IORING_OP_RECV, sv[0], (uintptr_t)in, sizeof in, 0, 34);
	e->msg_flags = MSG_DONTWAIT;
	submit("recv.empty", r, 1, 1);
	/* A send on a closed peer fails without SIGPIPE. */
	close(sv[1]);
	queue(r, IORING_OP_SEND, sv[0], (uintptr_t)"x", 1, 0, 35);
	submit("send.closed", r, 1, 1);
	queue(r, IORING_OP_CLOSE, sv[0], 0, 0, 0, 36);
	submit("close", r, 1, 1);
	RET("close.gone", fcntl(sv[0], F_GETFD));
	queue(r, IORING_OP_CLOSE, r->fd, 0, 0, 0, 37);
	submit("close.ring", r, 1, 1);
}

static void flag_checks(struct ring *r) {
	/* A link: a failed request cancels the ones linked after it. */
	struct io_uring_sqe *e = queue(r, IORING_OP_READ, 999, 0, 4, 0, 40);
	e->flags = IOSQE_IO_LINK;
	e = queue(r, IORING_OP_NOP, -1, 0, 0, 0, 41);
	e->flags = IOSQE_IO_LINK;
	queue(r, IORING_OP_NOP, -1, 0, 0, 0, 42);
	queue(r, IORING_OP_NOP, -1, 0, 0, 0, 43);
	submit("link", r, 4, 4);
	/* A hard link does not break. */
	e = queue(r, IORING_OP_READ, 999, 0, 4, 0, 44);
	e->flags = IOSQE_IO_HARDLINK;
	queue(r, IORING_OP_NOP, -1, 0, 0, 0, 45);
	submit("hardlink", r, 2, 2);
	e = queue(r, IORING_OP_NOP, -1, 0, 0, 0, 46);
	e->flags = IOSQE_CQE_SKIP_SUCCESS;
	queue(r, IORING_OP_NOP, -1, 0, 0, 0, 47);
	submit("skipsuccess", r, 2, 1);
	/* A submission that cannot start completes with its error and ends
	 * the batch: the second stays queued until the next enter. */
	queue(r, 200, -1, 0, 0, 0, 48);
	queue(r, IORING_OP_NOP, -1, 0, 0, 0, 49);
	submit("badop", r, 2, 1);
	submit("badop.rest", r, 1, 1);
	e = queue(r, IORING_OP_NOP, -1, 0, 0, 0, 50);
	e->flags = 0x80;
	submit("badsqeflag", r, 1, 1);
	e = queue(r, IORING_OP_NOP, -1, 0, 0, 0, 51);
	e->flags = IOSQE_FIXED_FILE;
	submit("nop.fixedfile", r, 1, 1);
	e = queue(r, IORING_OP_READ, 0, 0, 4, 0, 52);
	e->flags = IOSQE_FIXED_FILE;
	submit("read.fixedfile", r, 1, 1);
	e = queue(r, IORING_OP_WRITE, 1, 0, 4, 0, 53);
	e->flags = IOSQE_BUFFER_SELECT;
	submit("write.bufselect", r, 1, 1);
	e = queue(r, IORING_OP_NOP, -1, 0, 0, 0, 54);
	e->flags = IOSQE_ASYNC | IOSQE_IO_DRAIN;
	submit("nop.asyncdrain", r, 1, 1);
}

static void register_checks(struct ring *r) {
	int efd = eventfd(0, EFD_NONBLOCK);
	RET("register.eventfd", reg(r->fd, IORING_REGISTER_EVENTFD, &efd, 1));
	RET("register.eventfd.again", reg(r->fd, IORING_REGISTER_EVENTFD, &efd, 1));
	queue(r, IORING_OP_NOP, -1, 0, 0, 0, 60);
	queue(r, IORING_OP_NOP, -1, 0, 0, 0, 61);
	submit("eventfd.nops", r, 2, 2);
	uint64_t v = 0;
	read(efd, &v, sizeof v);
	SHOW("eventfd.count", "%llu", (unsigned long long)v);
	RET("unregister.eventfd", reg(r->fd, IORING_UNREGISTER_EVENTFD, NULL, 0));
	RET("unregister.eventfd.again", reg(r->fd, IORING_UNREGISTER_EVENTFD, NULL, 0));
	int zero = 0;
	RET("register.eventfd.notevent", reg(r->fd, IORING_REGISTER_EVENTFD, &zero, 1));
	RET("register.eventfd.nr", reg(r->fd, IORING_REGISTER_EVENTFD, &efd, 2));
	close(efd);
	RET("register.notring", reg(0, IORING_REGISTER_PROBE, NULL, 0));
	RET("register.badop", reg(r->fd, 9999, NULL, 0));

	size_t sz = sizeof(struct io_uring_probe) + 64 * sizeof(struct io_uring_probe_op);
	struct io_uring_probe *p = calloc(1, sz);
	RET("probe", reg(r->fd, IORING_REGISTER_PROBE, p, 64));
	SHOW("probe.ops_len", "%u", p->ops_len);
	int ops[] = {IORING_OP_NOP, IORING_OP_READV, IORING_OP_READ_FIXED, IORING_OP_SENDMSG, IORING_OP_READ, IORING_OP_RECV};
	for (unsigned i = 0; i < sizeof ops / sizeof ops[0]; i++)
		SHOW("probe.op", "%d %s", ops[i], p->ops[ops[i]].flags & IO_URING_OP_SUPPORTED ? "supported" : "not");
	p->resv = 1;
	RET("probe.dirty", reg(r->fd, IORING_REGISTER_PROBE, p, 64));
	free(p);

	/* poll: the ring is readable while completions wait. */
	struct pollfd pfd = {r->fd, POLLIN | POLLOUT, 0};
	poll(&pfd, 1, 0);
	SHOW("poll.empty", "%#x", pfd.revents);
	queue(r, IORING_OP_NOP, -1, 0, 0, 0, 62);
	RET("poll.submit", enter(r->fd, 1, 0, 0, NULL, 0));
	poll(&pfd, 1, 0);
	SHOW("poll.ready", "%#x", pfd.revents);
	reap("poll", r);
}

int main(void) {
	setup_checks();
	struct ring r;
	if (ring_init(&r, 8, 0) < 0) {
		printf("ring: failed %s\n", strerrorname_np(errno));
		return 0;
	}
	enter_checks(&r);
	rw_checks(&r);
	socket_checks(&r);
	flag_checks(&r);
	register_checks(&r);
	/* The rings outlive the descriptor while they are mapped. */
	close(r.fd);
	SHOW("after.close", "sq entries %u", *U32(r.sq, r.p.sq_off.ring_entries));
	return 0;
}
