/* /proc/self/maps marks MAP_SHARED mappings 's' and private ones 'p'
 * (LTP mmap04), for anonymous memory and a file. */
#define _GNU_SOURCE
#include "../conform.h"
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

static void perms_of(const char *name, void *addr) {
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && lo <= (uintptr_t)addr && (uintptr_t)addr < hi) {
			SHOW(name, "%s", perms);
			fclose(f);
			return;
		}
	}
	fclose(f);
	SHOW(name, "%s", "missing");
}

int main(void) {
	perms_of("anon.shared.rw", mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	perms_of("anon.shared.none", mmap(NULL, 4096, PROT_NONE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	perms_of("anon.private.r", mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	int fd = open("maps.f", O_CREAT | O_RDWR, 0644);
	ftruncate(fd, 4096);
	perms_of("file.shared.r", mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0));
	perms_of("file.private.rw", mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
	return 0;
}
