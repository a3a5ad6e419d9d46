/* memfd_create(MFD_HUGETLB): a file of huge pages. Its sizes (ENODEV for
 * one not offered), what fstat says of it, write (EINVAL: hugetlbfs has
 * none), ftruncate (whole pages only), read, and its mappings: shared ones
 * promise the file's pages and see one another, private ones promise
 * their own that start as the file's, a writable one grows the file, a
 * touch past the end is a bus error, and the pool's counts follow. Linux
 * in QEMU is the oracle (qemu-riscv64 would ask the host's pool). */
#include "../../conform/conform.h"
#include <setjmp.h>
#include <signal.h>
#include <linux/memfd.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#define HPS (2UL << 20)

static int memfd(const char *name, unsigned flags) { return syscall(SYS_memfd_create, name, flags); }

static void stat_fd(const char *name, int fd) {
	struct stat st;
	if (fstat(fd, &st) != 0) {
		SHOW(name, "%s", strerrorname_np(errno));
		return;
	}
	SHOW(name, "mode %o nlink %lu size %ld blksize %ld blocks %ld", st.st_mode, (unsigned long)st.st_nlink,
	     (long)st.st_size, (long)st.st_blksize, (long)st.st_blocks);
}

static sigjmp_buf jump;
static void onsig(int sig) { siglongjmp(jump, sig); }

/* peek reads the byte at p and says what it held or which signal it
 * raised. */
static void peek(const char *name, volatile char *p) {
	struct sigaction sa = {.sa_handler = onsig};
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	int sig = sigsetjmp(jump, 1);
	if (sig == 0)
		SHOW(name, "%d", *p);
	else
		SHOW(name, "%s", sig == SIGBUS ? "SIGBUS" : "SIGSEGV");
}

static const char *mapped(void *p) { return p == MAP_FAILED ? strerrorname_np(errno) : "mapped"; }

int main(void) {
	mkdir("/proc", 0755);
	mount("proc", "/proc", "proc", 0, NULL);

	RET("64 KiB pages", memfd("h", MFD_HUGETLB | MFD_HUGE_64KB));
	RET("16 MiB pages", memfd("h", MFD_HUGETLB | MFD_HUGE_16MB));
	RET("a size without MFD_HUGETLB", memfd("h", MFD_HUGE_2MB));
	RET("16 GiB pages (bit 31 set)", memfd("h", MFD_HUGETLB | MFD_HUGE_16GB));
	int gig = memfd("h", MFD_HUGETLB | MFD_HUGE_1GB);
	SHOW("1 GiB pages", "%s", gig >= 0 ? "made" : strerrorname_np(errno));
	stat_fd("1 GiB file", gig);
	close(gig);
	int fd = memfd("h", MFD_HUGETLB | MFD_HUGE_2MB | MFD_CLOEXEC);
	SHOW("2 MiB pages", "%s", fd >= 0 ? "made" : strerrorname_np(errno));
	if (fd < 0)
		return 1;
	char link[64] = {0}, path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	readlink(path, link, sizeof link - 1);
	SHOW("fd link", "%s", link);
	stat_fd("new file", fd);
	RET("write", write(fd, "x", 1));
	RET("pwrite", pwrite(fd, "x", 1, 0));
	RET("ftruncate to a base page", ftruncate(fd, 4096));
	RET("ftruncate to a huge page", ftruncate(fd, HPS));
	stat_fd("one page long", fd);
	char buf[8] = {1, 1, 1, 1, 1, 1, 1, 1};
	RET("read a hole", read(fd, buf, sizeof buf));
	SHOW("hole", "%d", buf[0]);
	RET("lseek end", lseek(fd, 0, SEEK_END));

	put_file("nr_hugepages=4", "/proc/sys/vm/nr_hugepages", "4");
	show_hugepages("pool of 4");
	char *s = mmap(NULL, HPS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	SHOW("shared", "%s", mapped(s));
	if (s == MAP_FAILED)
		return 1;
	show_hugepages("file page promised");
	SHOW("unaligned offset", "%s", mapped(mmap(NULL, HPS, PROT_READ, MAP_SHARED, fd, 4096)));
	strcpy(s + 10, "shared");
	show_hugepages("file page taken");
	stat_fd("one page taken", fd);
	memset(buf, 0, sizeof buf);
	RET("pread", pread(fd, buf, 6, 10));
	SHOW("pread got", "%s", buf);
	char *s2 = mmap(NULL, HPS, PROT_READ, MAP_SHARED, fd, 0);
	SHOW("second shared", "%s", mapped(s2));
	SHOW("second sees", "%s", s2 + 10);
	show_hugepages("nothing more promised");

	char *p = mmap(NULL, HPS, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	SHOW("private", "%s", mapped(p));
	show_hugepages("private promised");
	SHOW("private sees", "%s", p + 10);
	strcpy(p + 10, "privat");
	SHOW("file keeps", "%s", s + 10);
	show_hugepages("private taken");
	RET("munmap private", munmap(p, HPS));
	show_hugepages("private gone");

	/* A writable mapping past the end grows the file; a read-only one
	 * does not, and a touch past the end is a bus error. */
	char *r = mmap(NULL, 2 * HPS, PROT_READ, MAP_SHARED, fd, 0);
	SHOW("read-only past the end", "%s", mapped(r));
	stat_fd("not grown", fd);
	peek("inside", r + 10);
	peek("past the end", r + HPS);
	show_hugepages("past-the-end page promised");
	munmap(r, 2 * HPS);
	char *g = mmap(NULL, 2 * HPS, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	SHOW("writable past the end", "%s", mapped(g));
	stat_fd("grown", fd);
	munmap(g, 2 * HPS);
	show_hugepages("private promises back");

	/* Promising more than is free fails; MAP_NORESERVE promises none. */
	int other = memfd("other", MFD_HUGETLB);
	SHOW("too many", "%s", mapped(mmap(NULL, 4 * HPS, PROT_READ, MAP_PRIVATE, other, 0)));
	char *nr = mmap(NULL, 4 * HPS, PROT_READ, MAP_SHARED | MAP_NORESERVE, other, 0);
	SHOW("too many, no reserve", "%s", mapped(nr));
	show_hugepages("after no reserve");
	munmap(nr, 4 * HPS);
	close(other);

	char *keep = mmap(NULL, HPS, PROT_READ, MAP_PRIVATE, fd, 0);
	SHOW("private kept", "%s", mapped(keep));
	munmap(s2, HPS);
	munmap(s, HPS);
	show_hugepages("shared mappings gone, file holds its page");
	close(fd);
	show_hugepages("file closed, a private mapping left");
	SHOW("private after close", "%s", keep + 10);
	munmap(keep, HPS);
	show_hugepages("all gone");
	put_file("nr_hugepages=0", "/proc/sys/vm/nr_hugepages", "0");
	return 0;
}
