/* remap_file_pages(2), which qemu-riscv64 does not implement: a shared
 * anonymous mapping, a file's shared mapping and a System V segment's
 * mapping shown again from other pages; its refusals (protection, private
 * memory, a hole); and a segment removed while mapped: its mappings
 * count as attachments, and the remap of the last one ends the segment
 * (EINVAL, the range left unmapped). */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>

static sigjmp_buf jump;

static void on_segv(int sig) {
	(void)sig;
	siglongjmp(jump, 1);
}

/* readable reports whether the byte at p can be read. */
static int readable(volatile char *p) {
	if (sigsetjmp(jump, 1))
		return 0;
	(void)*p;
	return 1;
}

static void pages(const char *name, const char *p, int n) {
	printf("%s:", name);
	for (int i = 0; i < n; i++)
		printf(" %c", p[i * 4096]);
	printf("\n");
	fflush(stdout);
}

int main(void) {
	signal(SIGSEGV, on_segv);
	char *a = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	for (int i = 0; i < 4; i++)
		a[i * 4096] = 'a' + i;
	RET("anonymous: first page shows page 3", remap_file_pages(a, 4096, 0, 3, 0));
	RET("anonymous: pages 2-3 show 0-1", remap_file_pages(a + 2 * 4096, 2 * 4096, 0, 0, 0));
	pages("anonymous", a, 4);
	a[0] = 'X';
	pages("anonymous after a write through page 0", a, 4);
	RET("protection", remap_file_pages(a, 4096, PROT_READ, 1, 0));
	char *priv = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	RET("private", remap_file_pages(priv, 4096, 0, 0, 0));
	munmap(priv, 4096);
	RET("hole", remap_file_pages(priv, 4096, 0, 0, 0));

	int fd = open("remap-file", O_RDWR | O_CREAT | O_TRUNC, 0600);
	for (int i = 0; i < 3; i++) {
		char page[4096];
		memset(page, '0' + i, sizeof page);
		write(fd, page, sizeof page);
	}
	char *f = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	RET("file: page 0 shows page 2", remap_file_pages(f, 4096, 0, 2, 0));
	pages("file", f, 3);
	f[0] = 'Z';
	char c;
	pread(fd, &c, 1, 2 * 4096);
	SHOW("file page 2 after a write through page 0", "%c", c);

	int id = shmget(IPC_PRIVATE, 2 * 4096, 0600);
	char *s = shmat(id, NULL, 0);
	s[0] = 's';
	s[4096] = 't';
	RET("segment: page 0 shows page 1", remap_file_pages(s, 4096, 0, 1, 0));
	pages("segment", s, 2);
	struct shmid_ds ds;
	shmctl(id, IPC_STAT, &ds);
	SHOW("segment nattch", "%lu", ds.shm_nattch);
	RET("IPC_RMID", shmctl(id, IPC_RMID, NULL));
	RET("segment removed: page 0", remap_file_pages(s, 4096, 0, 0, 0));
	SHOW("page 0 mapped after", "%d", readable(s));
	SHOW("page 1 mapped after", "%d", readable(s + 4096));
	RET("segment still there", shmctl(id, IPC_STAT, &ds));
	RET("segment removed: page 1", remap_file_pages(s + 4096, 4096, 0, 0, 0));
	SHOW("page 1 mapped after", "%d", readable(s + 4096));
	RET("segment still there", shmctl(id, IPC_STAT, &ds));

	/* A segment's one mapping, removed: the remap ends the segment. */
	id = shmget(IPC_PRIVATE, 4096, 0600);
	s = shmat(id, NULL, 0);
	RET("IPC_RMID", shmctl(id, IPC_RMID, NULL));
	RET("only mapping of a removed segment", remap_file_pages(s, 4096, 0, 0, 0));
	SHOW("mapped after", "%d", readable(s));
	RET("segment gone", shmctl(id, IPC_STAT, &ds));
	return 0;
}
