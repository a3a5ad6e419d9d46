/* process_vm_readv and process_vm_writev: between a parent and its child,
 * the checks in Linux's order (flags, local iovecs, remote iovecs, then
 * the pid and the permission), partial transfers that stop at a page
 * that faults on either side, and a process of another user. qemu-user
 * answers ENOSYS, so Linux itself is the oracle. */
#include "../../conform/conform.h"
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>

#define PAGE 4096

static char *shared; /* the child's buffer: a page before a PROT_NONE one */
static char ro[PAGE] __attribute__((aligned(PAGE))) = "read-only";

int main(void)
{
	shared = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(shared, 'c', PAGE);
	mprotect(shared + PAGE, PAGE, PROT_NONE);
	mprotect(ro, PAGE, PROT_READ);
	int go[2], done[2];
	pipe(go);
	pipe(done);
	pid_t child = fork();
	if (child == 0) {
		/* The child changes its copy, lets the parent work on it, and
		 * prints what the parent wrote into it. */
		memcpy(shared, "child's data", 12);
		write(go[1], "x", 1);
		char c;
		read(done[0], &c, 1);
		SHOW("child.sees", "%.12s", shared);
		_exit(0);
	}
	char c;
	read(go[0], &c, 1);

	char buf[2 * PAGE];
	memset(buf, '.', sizeof buf);
	struct iovec l = {buf, 12}, r = {shared, 12};
	RET("readv", process_vm_readv(child, &l, 1, &r, 1, 0));
	SHOW("readv.data", "%.12s", buf);

	/* Scattered on both sides. */
	memset(buf, '.', sizeof buf);
	struct iovec ls[] = {{buf, 3}, {buf + 10, 0}, {buf + 20, 9}};
	struct iovec rs[] = {{shared, 5}, {NULL, 0}, {shared + 6, 6}};
	RET("readv.scatter", process_vm_readv(child, ls, 3, rs, 3, 0));
	SHOW("readv.scatter.data", "%.3s|%.9s", buf, buf + 20);
	struct iovec lshort = {buf, 4};
	RET("readv.local.shorter", process_vm_readv(child, &lshort, 1, &r, 1, 0));
	struct iovec rshort = {shared, 4};
	RET("readv.remote.shorter", process_vm_readv(child, &l, 1, &rshort, 1, 0));

	/* Errors, in Linux's order. */
	RET("flags", process_vm_readv(child, &l, 1, &r, 1, 1));
	RET("flags.bad.pid", process_vm_readv(-1, &l, 1, &r, 1, 1));
	struct iovec lneg = {buf, -1UL}, rneg = {shared, -1UL};
	RET("local.len.negative", process_vm_readv(child, &lneg, 1, &r, 1, 0));
	RET("remote.len.negative", process_vm_readv(child, &l, 1, &rneg, 1, 0));
	RET("local.iovecs.bad", process_vm_readv(child, BAD, 1, &r, 1, 0));
	RET("remote.iovecs.bad", process_vm_readv(child, &l, 1, BAD, 1, 0));
	RET("local.count.1025", process_vm_readv(child, &l, 1025, &r, 1, 0));
	RET("remote.count.1025", process_vm_readv(child, &l, 1, &r, 1025, 0));
	struct iovec lfar = {(void *)(1UL << 62), 8};
	RET("local.beyond.user", process_vm_readv(child, &lfar, 1, &r, 1, 0));
	struct iovec lzero = {buf, 0}, rzero = {shared, 0};
	RET("local.empty.bad.pid", process_vm_readv(-1, &lzero, 1, &r, 1, 0));
	RET("local.none.remote.bad", process_vm_readv(-1, &l, 0, BAD, 1, 0));
	RET("remote.empty.bad.pid", process_vm_readv(-1, &l, 1, &rzero, 1, 0));
	RET("pid.bad", process_vm_readv(-1, &l, 1, &r, 1, 0));
	struct iovec rbad = {BAD, 12};
	RET("remote.address.bad", process_vm_readv(child, &l, 1, &rbad, 1, 0));
	struct iovec lbad = {BAD, 12};
	RET("local.address.bad", process_vm_readv(child, &lbad, 1, &r, 1, 0));
	struct iovec rnone = {shared + PAGE, 12};
	RET("remote.prot.none", process_vm_readv(child, &l, 1, &rnone, 1, 0));

	/* Partial transfers: up to the remote page that faults, or the local
	 * byte. */
	struct iovec rspan = {shared + PAGE - 100, 200};
	struct iovec lbig = {buf, 200};
	RET("remote.partial", process_vm_readv(child, &lbig, 1, &rspan, 1, 0));
	struct iovec rtwo[] = {{shared, 10}, {BAD, 10}, {shared, 10}};
	RET("remote.second.bad", process_vm_readv(child, &lbig, 1, rtwo, 3, 0));
	char *mine = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mprotect(mine + PAGE, PAGE, PROT_NONE);
	struct iovec lspan = {mine + PAGE - 30, 100};
	struct iovec rbig = {shared, 100};
	RET("local.partial", process_vm_readv(child, &lspan, 1, &rbig, 1, 0));
	struct iovec ltwo[] = {{buf, 10}, {BAD, 10}, {buf, 10}};
	RET("local.second.bad", process_vm_readv(child, ltwo, 3, &rbig, 1, 0));
	SHOW("local.partial.data", "%.5s", mine + PAGE - 30);

	/* Writes: into the child's private copy, never into a read-only
	 * page (no FOLL_FORCE), and from a local buffer that faults. */
	struct iovec wl = {"parent wrote", 12}, wr = {shared, 12};
	RET("writev", process_vm_writev(child, &wl, 1, &wr, 1, 0));
	struct iovec rro = {ro, 4};
	RET("writev.read.only", process_vm_writev(child, &wl, 1, &rro, 1, 0));
	RET("readv.read.only", process_vm_readv(child, &l, 1, &rro, 1, 0));
	struct iovec wspan = {shared + PAGE - 8, 16};
	RET("writev.remote.partial", process_vm_writev(child, &wl, 1, &wspan, 1, 0));
	/* Where in a local buffer that faults a write stops is Linux's riscv
	 * copy routine's (a word or a 64-byte block before the fault, or
	 * nothing): only a fault at a buffer's start is compared. */
	RET("writev.local.second.bad", process_vm_writev(child, ltwo, 3, &rbig, 1, 0));
	RET("writev.flags", process_vm_writev(child, &wl, 1, &wr, 1, 2));
	RET("writev.self", process_vm_writev(getpid(), &wl, 1, &(struct iovec){buf, 12}, 1, 0));
	SHOW("writev.self.data", "%.12s", buf);

	write(done[1], "x", 1);
	int status;
	waitpid(child, &status, 0);
	RET("reaped", process_vm_readv(child, &l, 1, &r, 1, 0));

	/* A process of another user may not read root's memory. */
	pid_t parent = getpid();
	if (fork() == 0) {
		setuid(65534);
		RET("other.user", process_vm_readv(parent, &l, 1, &r, 1, 0));
		RET("other.user.self", process_vm_readv(getpid(), &l, 1, &r, 1, 0));
		_exit(0);
	}
	wait(NULL);
	return 0;
}
