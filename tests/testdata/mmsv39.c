/* Memory calls whose Linux answers qemu-user cannot give (its address space
 * is not Sv39's, it aborts on ranges that end at 2^64, it ignores madvise
 * and MAP_FIXED_NOREPLACE): tests/mm_test.go states Linux's answers. */
#include "conform/conform.h"
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

#define PG 4096UL

int main(void) {
	char *p = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(p, 'a', 4 * PG);
	RET("munmap.lastpage", munmap((void *)-PG, PG));
	RET("munmap.wraps", munmap(p, -(uintptr_t)p));
	RET("munmap.alias", munmap(p + (1UL << 39), PG));
	RET("munmap.tasksize", munmap((void *)(1UL << 38), PG));
	SHOW("munmap.kept", "%c%c", p[0], p[4 * PG - 1]);
	RET("mmap.1tib", (long)mmap(NULL, 1UL << 40, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	RET("mmap.fixed.tasksize", (long)mmap((void *)(1UL << 38), PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	RET("mmap.noreplace", (long)mmap(p, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0));
	RET("madvise.badadvice", madvise(p, PG, 999));
	RET("madvise.unmapped", madvise(p + 4 * PG, PG, MADV_NORMAL));
	RET("mprotect.zero.badprot", mprotect(p, 0, 0x40));
	RET("mremap.newlen0", (long)mremap(p, PG, 0, 0));
	long cur = syscall(SYS_brk, 0);
	SHOW("brk.tasksize", "%d", syscall(SYS_brk, 1L << 38) == cur);
	RET("munmap.last", munmap(p + 3 * PG, PG));
	RET("mprotect.hole", mprotect(p, 4 * PG, PROT_READ));
	SHOW("mprotect.hole.prefix.writable", "%d %d",
	     syscall(SYS_clock_gettime, CLOCK_MONOTONIC, (struct timespec *)(p + 64)) == 0,
	     syscall(SYS_clock_gettime, CLOCK_MONOTONIC, (struct timespec *)(p + 2 * PG + 64)) == 0);
	return 0;
}
