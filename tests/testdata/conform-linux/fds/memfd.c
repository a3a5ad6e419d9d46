/* memfd_create: names and flags, the file it makes, and its seals
 * (F_ADD_SEALS, F_GET_SEALS) against write, ftruncate, fallocate, mmap and
 * mprotect; a second open through /proc/self/fd shares them. Checked
 * against Linux: qemu-user's fcntl may not pass the seal commands. */
#define _GNU_SOURCE
#include "../../conform/conform.h"
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>

#ifndef MFD_EXEC
#define MFD_NOEXEC_SEAL 0x0008U
#define MFD_EXEC 0x0010U
#endif

int main(void) {
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	char longname[300];
	memset(longname, 'm', sizeof longname);
	longname[249] = 0;
	RET("name.249", close(memfd_create(longname, 0)));
	longname[249] = 'm';
	longname[250] = 0;
	RET("name.250", memfd_create(longname, 0));
	RET("name.bad", memfd_create(BAD, 0));
	RET("flags.bad", memfd_create("x", 0x100));
	RET("flags.exec.noexec", memfd_create("x", MFD_EXEC | MFD_NOEXEC_SEAL));
	RET("name.empty", close(memfd_create("", 0)));

	int fd = memfd_create("plain", MFD_CLOEXEC);
	RET("cloexec", fcntl(fd, F_GETFD));
	RET("getfl.accmode", fcntl(fd, F_GETFL) & O_ACCMODE);
	struct stat st;
	fstat(fd, &st);
	SHOW("stat", "type %o perm %o size %ld nlink %lu", st.st_mode & S_IFMT, st.st_mode & 07777, (long)st.st_size,
	     (unsigned long)st.st_nlink);
	char link[128] = "", path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	readlink(path, link, sizeof link - 1);
	SHOW("readlink", "%s", link);
	RET("seals.unsealable", fcntl(fd, F_GET_SEALS));
	RET("add.unsealable", fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE));
	close(fd);

	fd = memfd_create("sealed", MFD_ALLOW_SEALING);
	RET("write", write(fd, "0123456789", 10));
	RET("seals.none", fcntl(fd, F_GET_SEALS));
	RET("add.bad", fcntl(fd, F_ADD_SEALS, 0x100));
	RET("add.shrink", fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK));
	RET("truncate.shrink", ftruncate(fd, 5));
	RET("truncate.grow", ftruncate(fd, 8192));
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	RET("reopen.trunc.shrink.sealed", open(path, O_RDWR | O_TRUNC));
	RET("add.grow", fcntl(fd, F_ADD_SEALS, F_SEAL_GROW));
	RET("truncate.grow.sealed", ftruncate(fd, 16384));
	RET("pwrite.past.end", pwrite(fd, "x", 1, 8192));
	RET("pwrite.inside", pwrite(fd, "x", 1, 100));
	RET("fallocate.grow", fallocate(fd, 0, 0, 20000));
	RET("fallocate.inside", fallocate(fd, 0, 0, 4096));

	/* A writable shared mapping keeps F_SEAL_WRITE off. */
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	RET("add.write.mapped", fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE));
	munmap(p, 4096);
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	int fd2 = open(path, O_RDWR);
	RET("reopen", fd2 >= 0);
	RET("add.write.other.open", fcntl(fd2, F_ADD_SEALS, F_SEAL_WRITE));
	RET("seals.shared", fcntl(fd, F_GET_SEALS));
	RET("write.sealed", write(fd, "x", 1));
	RET("punch.sealed", fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 10));
	RET("mmap.shared.write.sealed", mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED ? -1 : 0);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	RET("mmap.shared.read", p == MAP_FAILED ? -1 : 0);
	RET("mprotect.write", mprotect(p, 4096, PROT_READ | PROT_WRITE));
	munmap(p, 4096);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	RET("mmap.private.write", p == MAP_FAILED ? -1 : 0);
	char c;
	RET("read.sealed", pread(fd, &c, 1, 100));
	SHOW("content", "%c", c);
	RET("add.seal", fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL));
	RET("add.after.seal", fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK));
	int ro = open(path, O_RDONLY);
	RET("add.readonly", fcntl(ro, F_ADD_SEALS, F_SEAL_SHRINK));
	RET("get.readonly", fcntl(ro, F_GET_SEALS));

	int other = open("/init", O_RDONLY);
	RET("seals.regular.file", fcntl(other, F_GET_SEALS));

	/* Punching a hole reads as zeros. */
	fd = memfd_create("hole", 0);
	write(fd, "abcdefgh", 8);
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	close(open(path, O_RDWR | O_TRUNC));
	RET("reopen.trunc", (fstat(fd, &st), (long)st.st_size));
	write(fd, "abcdefgh", 8);
	RET("punch", fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 2, 3));
	char buf[9] = "";
	pread(fd, buf, 8, 0);
	SHOW("after.punch", "%c%c%c%c%c%c%c%c", buf[0], buf[1] ? buf[1] : '0', buf[2] ? buf[2] : '0',
	     buf[3] ? buf[3] : '0', buf[4] ? buf[4] : '0', buf[5], buf[6], buf[7]);
	RET("fallocate.badmode", fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 1));
	RET("fallocate.zero.len", fallocate(fd, 0, 0, 0));
	fstat(fd, &st);
	RET("keep.size", (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 100000), fstat(fd, &st), (long)st.st_size));
	return 0;
}
