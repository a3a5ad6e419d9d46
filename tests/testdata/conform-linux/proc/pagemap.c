/* /proc/self/pagemap: an entry of 8 bytes per page, at the page number
 * times 8; bit 63 present (a page the page table maps), bit 61 a file's
 * or shared memory's page; offsets and sizes not a multiple of 8 are
 * EINVAL; the file shows size 0 and is its owner's (LTP's mmap12). */
#include "../../conform/conform.h"
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

static int pm;

static void show(const char *name, char *addr, int pages) {
	uint64_t e[16];
	long page = sysconf(_SC_PAGESIZE);
	pread(pm, e, pages * 8, (uintptr_t)addr / page * 8);
	char bits[64] = {0};
	for (int i = 0; i < pages; i++) {
		bits[2 * i] = '0' + (int)(e[i] >> 63);
		bits[2 * i + 1] = (e[i] >> 61 & 1) ? 'f' : '-';
	}
	SHOW(name, "%s", bits);
}

int main(void) {
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	pm = open("/proc/self/pagemap", O_RDONLY);
	SHOW("open", "%d", pm >= 0);
	struct stat st;
	fstat(pm, &st);
	SHOW("stat", "size %ld mode %o", (long)st.st_size, st.st_mode & 0777);

	char *anon = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	show("anon.untouched", anon, 4);
	anon[0] = 1;
	anon[2 * 4096] = 1;
	show("anon.touched", anon, 4);
	char *shared = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	shared[0] = 1;
	show("shared", shared, 2);
	mkdir("/mnt", 0755);
	mount("tmpfs", "/mnt", "tmpfs", 0, NULL);
	int fd = open("/mnt/f", O_CREAT | O_RDWR, 0600);
	ftruncate(fd, 3 * 4096);
	char *file = mmap(NULL, 3 * 4096, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	show("file.populated", file, 3);
	munmap(anon + 4096, 4096);
	show("anon.hole", anon, 4);

	uint64_t e;
	RET("misaligned", pread(pm, &e, 8, 4));
	RET("short", pread(pm, &e, 4, 0));
	RET("whole", pread(pm, &e, 8, 0));
	RET("write", write(open("/proc/self/pagemap", O_WRONLY), &e, 8));
	pid_t pid = fork();
	if (pid == 0) {
		setuid(65534);
		RET("nobody.open_init", open("/proc/1/pagemap", O_RDONLY));
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	return 0;
}
