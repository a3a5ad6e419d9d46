/* Native AIO (io_setup, io_submit, io_getevents, io_pgetevents,
 * io_cancel, io_destroy) on files, pipes and eventfds, with its errors,
 * and glibc's POSIX AIO (aio_read, aio_write, aio_suspend, lio_listio)
 * over it all. qemu-user has no native AIO (ENOSYS), so Linux itself is
 * the oracle. The ring's magic is not printed: ours does not keep
 * completions in the ring (see syscall/sys_aio.go). */
#include "../../conform/conform.h"
#include <aio.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static long io_setup(unsigned nr, aio_context_t *ctx) { return syscall(SYS_io_setup, nr, ctx); }
static long io_destroy(aio_context_t ctx) { return syscall(SYS_io_destroy, ctx); }
static long io_submit(aio_context_t ctx, long nr, struct iocb **cbs) { return syscall(SYS_io_submit, ctx, nr, cbs); }
static long io_getevents(aio_context_t ctx, long min, long nr, struct io_event *ev, struct timespec *ts) {
	return syscall(SYS_io_getevents, ctx, min, nr, ev, ts);
}
static long io_cancel(aio_context_t ctx, struct iocb *cb, struct io_event *ev) { return syscall(SYS_io_cancel, ctx, cb, ev); }

static void prep(struct iocb *cb, int op, int fd, void *buf, size_t n, long long off, uint64_t data) {
	memset(cb, 0, sizeof *cb);
	cb->aio_lio_opcode = op;
	cb->aio_fildes = fd;
	cb->aio_buf = (uintptr_t)buf;
	cb->aio_nbytes = n;
	cb->aio_offset = off;
	cb->aio_data = data;
}

/* submit1 submits one iocb and reaps its completion, printing both. */
static void submit1(const char *name, aio_context_t ctx, struct iocb *cb) {
	char label[96];
	struct iocb *cbs[] = {cb};
	snprintf(label, sizeof label, "%s.submit", name);
	long r;
	RET(label, r = io_submit(ctx, 1, cbs));
	if (r != 1)
		return;
	struct io_event ev;
	struct timespec ts = {5, 0};
	snprintf(label, sizeof label, "%s.getevents", name);
	RET(label, io_getevents(ctx, 1, 1, &ev, &ts));
	printf("%s.event: data %llu obj %s res %lld res2 %lld\n", name, (unsigned long long)ev.data,
	       ev.obj == (uintptr_t)cb ? "is the iocb" : "differs", (long long)ev.res, (long long)ev.res2);
}

/* aio_nr is /proc/sys/fs/aio-nr: the events every context asked for. */
static long aio_nr(void) {
	FILE *f = fopen("/proc/sys/fs/aio-nr", "r");
	long n = -1;
	if (f) {
		fscanf(f, "%ld", &n);
		fclose(f);
	}
	return n;
}

int main(void) {
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	aio_context_t ctx = 0, bad = 1;
	RET("setup.null", io_setup(8, NULL));
	RET("setup.nonzero", io_setup(8, &bad));
	RET("setup.zero", io_setup(0, &ctx));
	RET("setup.minus1", io_setup(-1, &ctx));
	RET("setup.over.max", io_setup(65537, &ctx));
	SHOW("aio-nr.before", "%ld", aio_nr());
	RET("setup", io_setup(8, &ctx));
	SHOW("aio-nr.after", "%ld", aio_nr());
	struct aio_ring_header {
		unsigned id, nr, head, tail, magic, compat, incompat, len;
	} *ring = (void *)ctx;
	SHOW("ring", "id %u nr %u head %u tail %u compat %u incompat %u len %u", ring->id, ring->nr, ring->head,
	     ring->tail, ring->compat, ring->incompat, ring->len);

	int fd = open("aio.file", O_RDWR | O_CREAT | O_TRUNC, 0644);
	struct iocb cb;
	char text[] = "hello aio world";
	prep(&cb, IOCB_CMD_PWRITE, fd, text, 15, 0, 11);
	submit1("pwrite", ctx, &cb);
	SHOW("pwrite.key", "%u", cb.aio_key);
	char buf[64] = {0};
	prep(&cb, IOCB_CMD_PREAD, fd, buf, 3, 6, 12);
	submit1("pread", ctx, &cb);
	SHOW("pread.data", "%.3s", buf);
	prep(&cb, IOCB_CMD_PREAD, fd, buf, 64, 100, 13);
	submit1("pread.past.end", ctx, &cb);

	char a[4] = "AAAA", b[6] = "BBBBBB", r1[5] = {0}, r2[20] = {0};
	struct iovec wv[] = {{a, 4}, {b, 6}}, rv[] = {{r1, 4}, {r2, 20}};
	prep(&cb, IOCB_CMD_PWRITEV, fd, wv, 2, 4, 14);
	submit1("pwritev", ctx, &cb);
	prep(&cb, IOCB_CMD_PREADV, fd, rv, 2, 0, 15);
	submit1("preadv", ctx, &cb);
	SHOW("preadv.data", "%s|%s", r1, r2);
	prep(&cb, IOCB_CMD_PREAD, fd, BAD, 8, 0, 16);
	submit1("pread.bad.buffer", ctx, &cb);
	prep(&cb, IOCB_CMD_FSYNC, fd, NULL, 0, 0, 17);
	submit1("fsync", ctx, &cb);
	prep(&cb, IOCB_CMD_FDSYNC, fd, buf, 0, 0, 18);
	submit1("fdsync.with.buf", ctx, &cb);

	/* Three at once, reaped together in order. */
	struct iocb c3[3];
	struct iocb *p3[] = {&c3[0], &c3[1], &c3[2]};
	char d3[3][4];
	for (int i = 0; i < 3; i++)
		prep(&c3[i], IOCB_CMD_PREAD, fd, d3[i], 4, 4 * i, 100 + i);
	RET("three.submit", io_submit(ctx, 3, p3));
	struct io_event ev[4];
	struct timespec ts = {5, 0};
	RET("three.getevents", io_getevents(ctx, 3, 4, ev, &ts));
	SHOW("three.events", "%llu:%lld %llu:%lld %llu:%lld %.4s%.4s%.4s", (unsigned long long)ev[0].data,
	     (long long)ev[0].res, (unsigned long long)ev[1].data, (long long)ev[1].res, (unsigned long long)ev[2].data,
	     (long long)ev[2].res, d3[0], d3[1], d3[2]);

	/* Errors of io_submit itself. */
	int rdonly = open("aio.file", O_RDONLY);
	prep(&cb, IOCB_CMD_PWRITE, rdonly, text, 3, 0, 0);
	submit1("pwrite.rdonly", ctx, &cb);
	prep(&cb, IOCB_CMD_PREAD, 1000, buf, 3, 0, 0);
	submit1("bad.fd", ctx, &cb);
	prep(&cb, 99, fd, buf, 3, 0, 0);
	submit1("bad.opcode", ctx, &cb);
	prep(&cb, IOCB_CMD_NOOP, fd, buf, 3, 0, 0);
	submit1("noop", ctx, &cb);
	prep(&cb, IOCB_CMD_PREAD, fd, buf, 3, 0, 0);
	cb.aio_reserved2 = 1;
	submit1("reserved2", ctx, &cb);
	prep(&cb, IOCB_CMD_PREAD, fd, buf, 3, -1, 0);
	submit1("negative.offset", ctx, &cb);
	prep(&cb, IOCB_CMD_PREAD, fd, buf, 3, 0, 0);
	cb.aio_rw_flags = 0x40000000;
	submit1("bad.rw.flags", ctx, &cb);
	struct iocb *nullcb[] = {NULL};
	RET("null.iocb", io_submit(ctx, 1, nullcb));
	RET("bad.array", io_submit(ctx, 1, BAD));
	RET("nr.negative", io_submit(ctx, -1, p3));
	RET("nr.zero", io_submit(ctx, 0, p3));
	RET("bad.ctx", io_submit(12345, 1, p3));
	/* The first iocb goes, the second is refused: 1. */
	prep(&c3[0], IOCB_CMD_PREAD, fd, d3[0], 4, 0, 200);
	prep(&c3[1], IOCB_CMD_PREAD, 1000, d3[1], 4, 0, 201);
	RET("partial.submit", io_submit(ctx, 2, p3));
	RET("partial.getevents", io_getevents(ctx, 1, 4, ev, &ts));

	/* Pipes: data there, then RWF_NOWAIT on an empty one, fsync refused. */
	int pfd[2];
	pipe(pfd);
	write(pfd[1], "piped", 5);
	prep(&cb, IOCB_CMD_PREAD, pfd[0], buf, 64, 0, 30);
	submit1("pipe.read", ctx, &cb);
	SHOW("pipe.read.data", "%.5s", buf);
	prep(&cb, IOCB_CMD_PREAD, pfd[0], buf, 64, 0, 31);
	cb.aio_rw_flags = RWF_NOWAIT;
	submit1("pipe.read.nowait.empty", ctx, &cb);
	prep(&cb, IOCB_CMD_PWRITE, pfd[1], text, 5, 0, 32);
	submit1("pipe.write", ctx, &cb);
	prep(&cb, IOCB_CMD_FSYNC, pfd[1], NULL, 0, 0, 33);
	submit1("pipe.fsync", ctx, &cb);

	/* Completions counted on an eventfd. */
	int efd = eventfd(0, 0);
	for (int i = 0; i < 2; i++) {
		prep(&cb, IOCB_CMD_PREAD, fd, buf, 2, 0, 40 + i);
		cb.aio_flags = IOCB_FLAG_RESFD;
		cb.aio_resfd = efd;
		submit1("resfd", ctx, &cb);
	}
	uint64_t count = 0;
	RET("resfd.read", read(efd, &count, 8));
	SHOW("resfd.count", "%llu", (unsigned long long)count);
	prep(&cb, IOCB_CMD_PREAD, fd, buf, 2, 0, 0);
	cb.aio_flags = IOCB_FLAG_RESFD;
	cb.aio_resfd = fd;
	submit1("resfd.not.eventfd", ctx, &cb);

	/* io_getevents: nothing waiting, its argument checks, a timeout. */
	struct timespec zero = {0, 0}, short_wait = {0, 50000000};
	RET("getevents.none.nowait", io_getevents(ctx, 1, 4, ev, &zero));
	RET("getevents.none.timeout", io_getevents(ctx, 1, 4, ev, &short_wait));
	RET("getevents.min.over.nr", io_getevents(ctx, 2, 1, ev, &zero));
	RET("getevents.min.negative", io_getevents(ctx, -1, 1, ev, &zero));
	RET("getevents.bad.ctx", io_getevents(0, 0, 0, NULL, NULL));
	prep(&cb, IOCB_CMD_PREAD, fd, buf, 2, 0, 50);
	struct iocb *one[] = {&cb};
	io_submit(ctx, 1, one);
	RET("getevents.bad.events", io_getevents(ctx, 1, 1, BAD, &zero));
	RET("getevents.kept", io_getevents(ctx, 1, 1, ev, &zero));
	SHOW("getevents.kept.data", "%llu", (unsigned long long)ev[0].data);
	sigset_t mask;
	sigemptyset(&mask);
	struct {
		const sigset_t *mask;
		size_t size;
	} usig = {&mask, 8};
	RET("pgetevents.none", syscall(SYS_io_pgetevents, ctx, 1, 1, ev, &short_wait, &usig));
	usig.size = 4;
	RET("pgetevents.bad.size", syscall(SYS_io_pgetevents, ctx, 1, 1, ev, &short_wait, &usig));

	/* io_cancel: nothing is in flight. */
	RET("cancel.null", io_cancel(ctx, NULL, ev));
	RET("cancel.done", io_cancel(ctx, &cb, ev));
	cb.aio_key = 7;
	RET("cancel.bad.key", io_cancel(ctx, &cb, ev));

	/* A child has none of its parent's contexts. */
	pid_t pid = fork();
	if (pid == 0) {
		prep(&cb, IOCB_CMD_PREAD, fd, buf, 2, 0, 0);
		errno = 0;
		long r = io_submit(ctx, 1, one);
		printf("child.submit: %ld %s\n", r, r < 0 ? strerrorname_np(errno) : "");
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, NULL, 0);

	/* Many requests never reaped: io_submit refuses some with EAGAIN. */
	aio_context_t small = 0;
	RET("small.setup", io_setup(1, &small));
	int refused = 0, taken = 0;
	for (int i = 0; i < 2000 && !refused; i++) {
		prep(&cb, IOCB_CMD_PREAD, fd, buf, 1, 0, i);
		long r = io_submit(small, 1, one);
		if (r == 1)
			taken++;
		else if (r < 0 && errno == EAGAIN)
			refused = 1;
	}
	SHOW("small.refused", "%s, after more than 100: %s", refused ? "EAGAIN" : "never", taken > 100 ? "yes" : "no");
	RET("small.destroy", io_destroy(small));

	RET("destroy", io_destroy(ctx));
	SHOW("aio-nr.destroyed", "%ld", aio_nr());
	RET("destroy.again", io_destroy(ctx));
	RET("getevents.destroyed", io_getevents(ctx, 0, 1, ev, &zero));
	RET("destroy.bad", io_destroy(~0ULL));

	/* glibc's POSIX AIO. */
	struct aiocb w = {.aio_fildes = fd, .aio_buf = "posix", .aio_nbytes = 5, .aio_offset = 20};
	RET("aio_write", aio_write(&w));
	const struct aiocb *list[] = {&w};
	RET("aio_suspend", aio_suspend(list, 1, NULL));
	RET("aio_error", aio_error(&w));
	RET("aio_return", aio_return(&w));
	char pb[8] = {0};
	struct aiocb rd = {.aio_fildes = fd, .aio_buf = pb, .aio_nbytes = 5, .aio_offset = 20};
	RET("aio_read", aio_read(&rd));
	list[0] = &rd;
	aio_suspend(list, 1, NULL);
	RET("aio_read.return", aio_return(&rd));
	SHOW("aio_read.data", "%s", pb);
	char l1[4] = {0}, l2[4] = {0};
	struct aiocb lw = {.aio_fildes = fd, .aio_buf = "LIO!", .aio_nbytes = 4, .aio_offset = 30, .aio_lio_opcode = LIO_WRITE};
	struct aiocb lr1 = {.aio_fildes = fd, .aio_buf = l1, .aio_nbytes = 3, .aio_offset = 0, .aio_lio_opcode = LIO_READ};
	struct aiocb lr2 = {.aio_fildes = fd, .aio_buf = l2, .aio_nbytes = 3, .aio_offset = 20, .aio_lio_opcode = LIO_READ};
	struct aiocb *lio[] = {&lw, &lr1, &lr2};
	RET("lio_listio", lio_listio(LIO_WAIT, lio, 3, NULL));
	SHOW("lio_listio.results", "%zd %zd %zd %s %s", aio_return(&lw), aio_return(&lr1), aio_return(&lr2), l1, l2);
	struct aiocb badfd = {.aio_fildes = 1000, .aio_buf = pb, .aio_nbytes = 1};
	aio_read(&badfd);
	list[0] = &badfd;
	aio_suspend(list, 1, NULL);
	SHOW("aio_read.badfd", "%s", strerrorname_np(aio_error(&badfd)));
	return 0;
}
