/* madvise's advice checked against the kind of mapping, as LTP's
 * madvise02: MADV_FREE, MADV_WIPEONFORK and MADV_REMOVE on shared, file
 * and anonymous mappings, advice refused on locked memory, MADV_WILLNEED
 * over a hole, an unaligned start, and msync's flags, range and locked
 * mappings. qemu-riscv64 answers 0 to every advice, so Linux is the
 * oracle. */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>

#define PAGES 16

int main(void) {
	long page = sysconf(_SC_PAGESIZE);
	size_t size = PAGES * page;
	int fd = open("madvise_kinds.data", O_RDWR | O_CREAT | O_TRUNC, 0600);
	char *buf = calloc(1, size);
	write(fd, buf, size);
	char *shared = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	char *holed = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	char *private = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	char *shared_anon = mmap(NULL, page, PROT_READ, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char *anon = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(holed + size - page, page);

	RET("normal.unaligned", madvise(shared + 100, size, MADV_NORMAL));
	RET("unknown", madvise(shared, size, 1212));
	RET("dontneed.shared-file", madvise(shared, size, MADV_DONTNEED));
	RET("dontneed.anon", madvise(anon, size, MADV_DONTNEED));
	RET("normal.hole", madvise(holed, size, MADV_NORMAL));
	RET("willneed.hole", madvise(holed, size, MADV_WILLNEED));
	RET("willneed.anon", madvise(anon, size, MADV_WILLNEED));
	RET("willneed.file", madvise(shared, size, MADV_WILLNEED));
	RET("free.shared-file", madvise(shared, size, MADV_FREE));
	RET("free.private-file", madvise(private, size, MADV_FREE));
	RET("free.anon", madvise(anon, size, MADV_FREE));
	RET("free.shared-anon", madvise(shared_anon, page, MADV_FREE));
	RET("wipeonfork.shared-file", madvise(shared, size, MADV_WIPEONFORK));
	RET("wipeonfork.shared-anon", madvise(shared_anon, page, MADV_WIPEONFORK));
	RET("wipeonfork.private-file", madvise(private, size, MADV_WIPEONFORK));
	RET("wipeonfork.anon", madvise(anon, size, MADV_WIPEONFORK));
	RET("keeponfork.anon", madvise(anon, size, MADV_KEEPONFORK));
	RET("keeponfork.shared-file", madvise(shared, size, MADV_KEEPONFORK));
	RET("dontfork.anon", madvise(anon, size, MADV_DONTFORK));
	RET("dofork.anon", madvise(anon, size, MADV_DOFORK));
	RET("remove.anon", madvise(anon, size, MADV_REMOVE));
	RET("remove.private-file", madvise(private, size, MADV_REMOVE));
	RET("dontdump.anon", madvise(anon, size, MADV_DONTDUMP));
	RET("dodump.anon", madvise(anon, size, MADV_DODUMP));
	RET("cold.anon", madvise(anon, size, MADV_COLD));
	RET("pageout.anon", madvise(anon, size, MADV_PAGEOUT));
	RET("populate-read.anon", madvise(anon, size, MADV_POPULATE_READ));
	RET("populate-write.anon", madvise(anon, size, MADV_POPULATE_WRITE));
	RET("populate-write.readonly-file", madvise(private, size, MADV_POPULATE_WRITE));
	RET("mlock", mlock(anon, size));
	RET("dontneed.locked", madvise(anon, size, MADV_DONTNEED));
	RET("free.locked", madvise(anon, size, MADV_FREE));
	RET("cold.locked", madvise(anon, size, MADV_COLD));
	RET("pageout.locked", madvise(anon, size, MADV_PAGEOUT));
	RET("willneed.locked", madvise(anon, size, MADV_WILLNEED));
	RET("wipeonfork.locked", madvise(anon, size, MADV_WIPEONFORK));
	munlock(anon, size);
	RET("length-0", madvise(anon, 0, MADV_NORMAL));
	RET("length-0.unaligned", madvise(anon + 1, 0, MADV_NORMAL));

	RET("msync.sync", msync(shared, size, MS_SYNC));
	RET("msync.async", msync(shared, size, MS_ASYNC));
	RET("msync.both", msync(shared, size, MS_SYNC | MS_ASYNC));
	RET("msync.unaligned", msync(shared + 1, size, MS_SYNC));
	RET("msync.hole", msync(holed, size, MS_SYNC));
	RET("msync.invalidate", msync(shared, size, MS_INVALIDATE));
	RET("msync.bad-flag", msync(shared, size, 0x10));
	RET("msync.anon", msync(anon, size, MS_SYNC));
	RET("msync.unmapped", msync((char *)0x10000, page, MS_SYNC));
	RET("msync.hole.async", msync(holed, size, MS_ASYNC));
	RET("msync.hole.invalidate", msync(holed, size, MS_SYNC | MS_INVALIDATE));
	RET("msync.wraps", msync((char *)-4096L, 2 * page, MS_SYNC));
	char *locked = mmap(NULL, size, PROT_READ, MAP_SHARED | MAP_LOCKED, fd, 0);
	RET("msync.locked.invalidate", msync(locked, size, MS_INVALIDATE));
	RET("msync.locked.sync", msync(locked, size, MS_SYNC));
	munlock(locked, page);
	RET("msync.first-unlocked.invalidate", msync(locked, size, MS_INVALIDATE));
	unlink("madvise_kinds.data");
	return 0;
}
