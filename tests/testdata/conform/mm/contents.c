/* What memory holds through the memory calls: mprotect keeps pages,
 * munmap of part of a mapping keeps the rest, mremap moves and resizes
 * with the contents, MADV_DONTNEED zeroes private memory, a private file
 * mapping at an offset shows the file and keeps its writes to itself. */
#include "../conform.h"
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

#define PG 4096UL
#define RW (PROT_READ | PROT_WRITE)
#define ANON (MAP_PRIVATE | MAP_ANONYMOUS)

/* writable reports whether the kernel may write in the page at p (EFAULT
 * if not); it writes 16 bytes at offset 128, which nothing prints. The
 * system call itself: glibc's clock_gettime reads the vDSO, in user mode,
 * and would fault instead. */
static int writable(char *p) {
	return syscall(SYS_clock_gettime, CLOCK_MONOTONIC, (struct timespec *)(p + 128)) == 0;
}

/* mapped reports whether the page at p is mapped (msync: ENOMEM if not). */
static int mapped(void *p) { return msync(p, PG, MS_ASYNC) == 0; }

static char *fill(int pages, char first) {
	char *p = mmap(NULL, pages * PG, RW, ANON, -1, 0);
	for (int i = 0; i < pages; i++)
		memset(p + i * PG, first + i, PG);
	return p;
}

int main(void) {
	/* mprotect */
	char *p = fill(3, 'a');
	RET("mprotect.none", mprotect(p, PG, PROT_NONE));
	RET("mprotect.rw", mprotect(p, PG, RW));
	SHOW("mprotect.none.kept", "%c%c", p[0], p[PG - 1]);
	RET("mprotect.read.middle", mprotect(p + PG, PG, PROT_READ));
	SHOW("mprotect.read.writable", "%d %d %d", writable(p), writable(p + PG), writable(p + 2 * PG));
	SHOW("mprotect.read.kept", "%c%c%c", p[0], p[PG], p[2 * PG]);
	RET("mprotect.all.rw", mprotect(p, 3 * PG, RW));
	p[PG] = 'B';
	SHOW("mprotect.rw.again", "%c %d", p[PG], writable(p + PG));
	char *h = fill(3, 'h');
	RET("munmap.last", munmap(h + 2 * PG, PG));
	/* Linux changes the mapped prefix; qemu-user does not, so it is not checked */
	RET("mprotect.hole", mprotect(h, 3 * PG, PROT_READ));
	RET("mprotect.hole.start", mprotect(h + 2 * PG, PG, PROT_READ));
	RET("mprotect.none.untouched", mprotect(p, 2 * PG, PROT_NONE));
	RET("mprotect.back", mprotect(p, 2 * PG, PROT_READ));
	SHOW("mprotect.back.kept", "%c%c", p[0], p[PG]);

	/* munmap parts of a mapping */
	char *u = fill(5, 'k');
	RET("munmap.middle", munmap(u + 2 * PG, PG));
	SHOW("munmap.middle.mapped", "%d %d %d %d %d", mapped(u), mapped(u + PG), mapped(u + 2 * PG), mapped(u + 3 * PG), mapped(u + 4 * PG));
	SHOW("munmap.middle.kept", "%c%c%c%c", u[0], u[PG], u[3 * PG], u[4 * PG]);
	RET("munmap.span", munmap(u + PG, 3 * PG));
	SHOW("munmap.span.mapped", "%d %d %d", mapped(u), mapped(u + 3 * PG), mapped(u + 4 * PG));
	SHOW("munmap.span.kept", "%c%c", u[0], u[4 * PG]);
	RET("msync.across.hole", msync(u, 5 * PG, MS_ASYNC));

	/* mincore */
	char *m = mmap(NULL, 4 * PG, RW, ANON, -1, 0);
	m[0] = 1;
	m[2 * PG] = 1;
	unsigned char vec[4];
	RET("mincore", mincore(m, 4 * PG, vec));
	SHOW("mincore.vec", "%d%d%d%d", vec[0] & 1, vec[1] & 1, vec[2] & 1, vec[3] & 1);

	/* madvise */
	char *d = fill(2, 'd');
	RET("madvise.dontneed", madvise(d, PG, MADV_DONTNEED));
	SHOW("madvise.dontneed.zero", "%d %c", d[0], d[PG]);
	char *s = mmap(NULL, PG, RW, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	s[0] = 's';
	RET("madvise.dontneed.shared", madvise(s, PG, MADV_DONTNEED));
	SHOW("madvise.dontneed.shared.kept", "%c", s[0]);

	/* mremap */
	char *r = fill(2, 'x');
	char *r2 = mremap(r, 2 * PG, 4 * PG, MREMAP_MAYMOVE);
	SHOW("mremap.grow", "%d", r2 != MAP_FAILED);
	SHOW("mremap.grow.kept", "%c%c %d %d", r2[0], r2[PG], r2[2 * PG], r2[4 * PG - 1]);
	r2[3 * PG] = 'w';
	SHOW("mremap.grow.writable", "%c", r2[3 * PG]);
	RET("mremap.shrink", mremap(r2, 4 * PG, PG, 0) == r2);
	SHOW("mremap.shrink.mapped", "%d %d %c", mapped(r2), mapped(r2 + PG), r2[0]);
	char *g = fill(3, 'g');
	RET("munmap.for.grow", munmap(g + PG, PG));
	RET("mremap.inplace", mremap(g, PG, 2 * PG, 0) == g);
	SHOW("mremap.inplace.kept", "%c %d %c", g[0], g[PG], g[2 * PG]);
	RET("mremap.blocked", (long)mremap(g, 2 * PG, 3 * PG, 0));
	RET("mremap.fixed.nomove", (long)mremap(g, PG, PG, MREMAP_FIXED, r2 + 8 * PG));
	RET("mremap.badflags", (long)mremap(g, PG, PG, 0x100));
	RET("mremap.unaligned", (long)mremap(g + 1, PG, PG, 0));
	RET("mremap.unmapped", (long)mremap(u + PG, PG, 2 * PG, MREMAP_MAYMOVE));
	RET("mprotect.for.spans", mprotect(g + 2 * PG, PG, PROT_READ));
	RET("mremap.spans", (long)mremap(g, 3 * PG, 4 * PG, MREMAP_MAYMOVE));
	char *t = fill(2, 't');
	char *f2 = mremap(g, 2 * PG, 2 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, t);
	SHOW("mremap.fixed", "%d", f2 == t);
	SHOW("mremap.fixed.kept", "%c %d", t[0], t[PG]);
	SHOW("mremap.fixed.old", "%d %d %c", mapped(g), mapped(g + PG), g[2 * PG]);
	RET("mremap.fixed.overlap", (long)mremap(t, 2 * PG, 2 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, t + PG));
	char *n = fill(1, 'n');
	mprotect(n, PG, PROT_NONE);
	char *n2 = mremap(n, PG, 2 * PG, MREMAP_MAYMOVE);
	RET("mremap.none.protect", mprotect(n2, 2 * PG, PROT_READ));
	SHOW("mremap.none.kept", "%c %d", n2[0], n2[PG]);

	/* a private file mapping at an offset */
	int fd = open("mapfile", O_CREAT | O_RDWR | O_TRUNC, 0644);
	char page[PG];
	for (int i = 0; i < 3; i++) {
		memset(page, 'A' + i, PG);
		RET("file.write", write(fd, page, PG));
	}
	RET("file.write.tail", write(fd, "tail", 4));
	char *fm = mmap(NULL, 3 * PG, RW, MAP_PRIVATE, fd, PG);
	SHOW("file.mmap", "%d", fm != MAP_FAILED);
	SHOW("file.mmap.contents", "%c%c %c %s %d", fm[0], fm[PG - 1], fm[PG], fm + 2 * PG, fm[2 * PG + 5]);
	fm[0] = 'z';
	char back = 0;
	RET("file.pread", pread(fd, &back, 1, PG));
	SHOW("file.private.write", "%c %c", fm[0], back);
	RET("file.dontneed", madvise(fm, PG, MADV_DONTNEED));
	SHOW("file.dontneed.refilled", "%c", fm[0]);
	RET("file.shared.write.rdonly", (long)mmap(NULL, PG, RW, MAP_SHARED, open("mapfile", O_RDONLY), 0));
	char *ro = mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, 2 * PG);
	SHOW("file.shared.read", "%c", ro[0]);
	return 0;
}
