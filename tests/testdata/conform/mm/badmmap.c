/* mmap's checks of its flags and offset as Linux makes them: a file
 * mapping whose end would pass the largest file offset fails with
 * EOVERFLOW, MAP_LOCKED is accepted (and the memory usable), and flags
 * mmap does not know are ignored when MAP_SHARED_VALIDATE does not ask
 * for them to be checked (conform-linux/memory/mapvalidate.c: qemu-user
 * does not know it). */
#include "../conform.h"
#include <fcntl.h>
#include <sys/mman.h>

#define PG 4096

/* MMAP prints 0 for a mapping made, or -1 and the errno. */
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
	int fd = open("badmmap.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	char page[PG];
	memset(page, 'a', sizeof page);
	write(fd, page, sizeof page);

	MMAP("offset end overflows", mmap(0, PG, PROT_READ, MAP_PRIVATE, fd, 0x7ffffffffffff000));
	MMAP("offset end overflows, shared", mmap(0, PG, PROT_READ, MAP_SHARED, fd, 0x7ffffffffffff000));
	MMAP("offset end overflows, two pages", mmap(0, 2 * PG, PROT_READ, MAP_PRIVATE, fd, 0x7fffffffffffe000));
	MMAP("offset end just fits", mmap(0, PG, PROT_READ, MAP_PRIVATE, fd, 0x7fffffffffffe000));
	MMAP("negative offset", mmap(0, PG, PROT_READ, MAP_PRIVATE, fd, -PG));

	char *locked = mmap(0, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED, -1, 0);
	SHOW("MAP_LOCKED anonymous", "%s", locked == MAP_FAILED ? strerrorname_np(errno) : "mapped");
	if (locked != MAP_FAILED) {
		locked[PG] = 7;
		SHOW("MAP_LOCKED reads back", "%d %d", locked[0], locked[PG]);
	}
	MMAP("MAP_LOCKED file", mmap(0, PG, PROT_READ, MAP_PRIVATE | MAP_LOCKED, fd, 0));

	MMAP("MAP_SHARED unknown flag ignored", mmap(0, PG, PROT_READ, MAP_SHARED | 0x800000, fd, 0));
	MMAP("MAP_PRIVATE unknown flag ignored", mmap(0, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | 0x800000, -1, 0));
	MMAP("no mapping type", mmap(0, PG, PROT_READ, MAP_ANONYMOUS, -1, 0));
	MMAP("no mapping type, file", mmap(0, PG, PROT_READ, 0, fd, 0));
	return 0;
}
