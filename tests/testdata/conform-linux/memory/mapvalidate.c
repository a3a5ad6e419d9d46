/* MAP_SHARED_VALIDATE (Linux 4.15): a shared file mapping whose flags are
 * checked, EOPNOTSUPP for one Linux does not know, else a MAP_SHARED
 * mapping; an anonymous one is EINVAL. qemu-user 7.2 refuses the type
 * altogether, so Linux itself is the oracle. */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <sys/mman.h>

#define PG 4096

#define MMAP(name, call)                                                       \
	do {                                                                   \
		errno = 0;                                                     \
		void *p_ = (call);                                             \
		if (p_ == MAP_FAILED)                                          \
			printf("%s: -1 %s\n", name, strerrorname_np(errno));   \
		else                                                           \
			printf("%s: 0\n", name);                               \
		fflush(stdout);                                                \
	} while (0)

int main(void)
{
	int fd = open("/mapvalidate.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	char page[PG];
	memset(page, 'a', sizeof page);
	write(fd, page, sizeof page);
	int rd = open("/mapvalidate.dat", O_RDONLY);

	MMAP("unknown flag", mmap(0, PG, PROT_READ, MAP_SHARED_VALIDATE | 0x800000, fd, 0));
	MMAP("MAP_SYNC on a file without DAX", mmap(0, PG, PROT_READ, MAP_SHARED_VALIDATE | MAP_SYNC, fd, 0));
	MMAP("unknown flag, anonymous", mmap(0, PG, PROT_READ, MAP_SHARED_VALIDATE | MAP_ANONYMOUS | 0x800000, -1, 0));
	MMAP("anonymous", mmap(0, PG, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE | MAP_ANONYMOUS, -1, 0));
	MMAP("known flags", mmap(0, PG, PROT_READ, MAP_SHARED_VALIDATE | MAP_POPULATE | MAP_LOCKED | MAP_NORESERVE, fd, 0));
	MMAP("writable on a read-only descriptor", mmap(0, PG, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE, rd, 0));
	MMAP("readable on a read-only descriptor", mmap(0, PG, PROT_READ, MAP_SHARED_VALIDATE, rd, 0));
	MMAP("unknown flag on a read-only descriptor", mmap(0, PG, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE | 0x800000, rd, 0));

	char *v = mmap(0, PG, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE, fd, 0);
	SHOW("writable", "%s", v == MAP_FAILED ? strerrorname_np(errno) : "mapped");
	if (v != MAP_FAILED) {
		v[1] = 'z';
		char got[2];
		pread(fd, got, 2, 0);
		SHOW("a store reaches the file", "%c%c", got[0], got[1]);
		pwrite(fd, "q", 1, 2);
		SHOW("a write reaches the mapping", "%c", v[2]);
	}
	return 0;
}
