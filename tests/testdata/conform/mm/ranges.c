/* Address ranges of the memory calls: alignment, zero and huge lengths,
 * ranges that wrap or leave user space, hints near the top, offsets. The
 * examples of issue 7 are here; none may touch memory it does not name.
 * Left out where qemu-user is not Linux: ranges whose end wraps to 0
 * (qemu-user aborts), madvise's EINVAL and ENOMEM and MAP_FIXED_NOREPLACE
 * (qemu-user ignores them), mprotect(addr, 0, bad prot) (Linux: 0); mm's
 * and syscall's unit tests check those. */
#include "../conform.h"
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define PG 4096UL
#define TOP ((void *)0xfffffffffff00000UL)

int main(void) {
	char *p = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	SHOW("mmap.anon", "%d", p != MAP_FAILED);
	memset(p, 'a', 4 * PG);

	RET("munmap.top", munmap(TOP, PG));
	RET("munmap.unaligned", munmap(p + 1, PG));
	RET("munmap.zero", munmap(p, 0));
	RET("munmap.sizemax", munmap(p, SIZE_MAX));
	munmap(p + (1UL << 39), PG); /* Linux on Sv39: EINVAL; qemu-user's space is larger */
	SHOW("munmap.kept", "%c%c", p[0], p[4 * PG - 1]);
	char *gone = mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	RET("munmap.fresh", munmap(gone, PG));
	RET("munmap.again", munmap(gone, PG));

	RET("mprotect.unaligned", mprotect(p + 1, PG, PROT_READ));
	RET("mprotect.badprot", mprotect(p, PG, 0x40));
	RET("mprotect.top", mprotect(TOP, PG, PROT_READ));
	RET("mprotect.sizemax", mprotect(p, SIZE_MAX, PROT_READ));
	RET("mprotect.unmapped", mprotect(gone, PG, PROT_READ));
	RET("mprotect.sem", mprotect(p, PG, PROT_READ | PROT_WRITE | 0x8 /* PROT_SEM */));

	RET("madvise.unaligned", madvise(p + 1, PG, MADV_NORMAL));
	RET("madvise.zero", madvise(p, 0, MADV_DONTNEED));
	RET("madvise.wraps", madvise(TOP, 2 * 1024 * 1024, MADV_NORMAL));
	RET("madvise.willneed", madvise(p, 4 * PG, MADV_WILLNEED));

	RET("msync.unaligned", msync(p + 1, PG, MS_ASYNC));
	RET("msync.badflags", msync(p, PG, MS_ASYNC | MS_SYNC));
	RET("msync.ok", msync(p, 4 * PG, MS_SYNC));
	RET("msync.unmapped", msync(gone, PG, MS_ASYNC));

	unsigned char vec[4];
	RET("mincore.unaligned", mincore(p + 1, PG, vec));
	RET("mincore.unmapped", mincore(gone, PG, vec));
	RET("mincore.badvec", mincore(p, PG, (unsigned char *)8));

	RET("mmap.len0", (long)mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	RET("mmap.sizemax", (long)mmap(NULL, SIZE_MAX, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	RET("mmap.notype", (long)mmap(NULL, PG, PROT_READ, MAP_ANONYMOUS, -1, 0));
	RET("mmap.fixed.unaligned", (long)mmap(p + 1, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	RET("mmap.fixed.top", (long)mmap(TOP, 2 * 1024 * 1024, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	char *hint = mmap((void *)-PG, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	SHOW("mmap.hint.top", "mapped %d, at hint %d", hint != MAP_FAILED, hint == (void *)-PG);
	hint[0] = 1;
	SHOW("mmap.hint.top.usable", "%d", hint[0]);
	char *hint2 = mmap(TOP, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	SHOW("mmap.hint.near.top", "mapped %d, at hint %d", hint2 != MAP_FAILED, hint2 == TOP);

	int fd = open("rangefile", O_CREAT | O_RDWR | O_TRUNC, 0644);
	char page[PG];
	memset(page, 'f', PG);
	write(fd, page, PG);
	RET("mmap.file.offset.unaligned", (long)mmap(NULL, PG, PROT_READ, MAP_PRIVATE, fd, 100));
	RET("mmap.file.offset.negative", (long)mmap(NULL, PG, PROT_READ, MAP_PRIVATE, fd, -4096));
	RET("mmap.file.badfd", (long)mmap(NULL, PG, PROT_READ, MAP_PRIVATE, 99, 0));
	RET("mmap.anon.offset.unaligned", (long)mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 100));

	long cur = syscall(SYS_brk, 0);
	SHOW("brk.grow", "%d", syscall(SYS_brk, cur + 3 * PG) == cur + 3 * PG);
	memset((char *)cur, 'b', 3 * PG);
	SHOW("brk.minus1", "%d", syscall(SYS_brk, -1L) == cur + 3 * PG);
	SHOW("brk.top", "%d", syscall(SYS_brk, 0xfffffffffff00000L) == cur + 3 * PG);
	SHOW("brk.minus1.kept", "%c%c", ((char *)cur)[0], ((char *)cur)[3 * PG - 1]);
	SHOW("brk.below.start", "%d", syscall(SYS_brk, 4096L) == cur + 3 * PG);
	SHOW("brk.unaligned", "%d", syscall(SYS_brk, cur + PG + 5) == cur + PG + 5);
	SHOW("brk.shrunk.kept", "%c", ((char *)cur)[PG + 4]);
	SHOW("brk.regrow", "%d", syscall(SYS_brk, cur + 3 * PG) == cur + 3 * PG);
	SHOW("brk.regrow.zero", "%d %d", ((char *)cur)[PG + 4], ((char *)cur)[2 * PG + 10]);
	SHOW("brk.back", "%d", syscall(SYS_brk, cur) == cur);
	return 0;
}
