/* Many VMAs: 12000 pages of alternating protection are 12000 mappings;
 * unmapping them one by one must be quick (issue 7: seconds, when each
 * unmap rebuilt a list) and leave exactly what remains. */
#include "../conform.h"
#include <sys/mman.h>

#define PG 4096UL
#define N 12000

int main(void) {
	char *p = mmap(NULL, N * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	SHOW("mmap", "%d", p != MAP_FAILED);
	int fails = 0;
	for (int i = 0; i < N; i++)
		p[i * PG] = (char)i;
	for (int i = 1; i < N; i += 2)
		fails += mprotect(p + i * PG, PG, PROT_READ) != 0;
	SHOW("mprotect.alternate.fails", "%d", fails);
	int wrong = 0;
	for (int i = 0; i < N; i++)
		wrong += p[i * PG] != (char)i;
	SHOW("contents.wrong", "%d", wrong);
	fails = 0;
	for (int i = 0; i < N; i += 3)
		fails += munmap(p + i * PG, PG) != 0;
	SHOW("munmap.every.third.fails", "%d", fails);
	int mapped = 0;
	wrong = 0;
	for (int i = 0; i < N; i++) {
		int m = msync(p + i * PG, PG, MS_ASYNC) == 0;
		mapped += m;
		if (m && p[i * PG] != (char)i)
			wrong++;
	}
	SHOW("mapped.after", "%d wrong %d", mapped, wrong);
	fails = 0;
	for (int i = 0; i < N; i++)
		fails += munmap(p + i * PG, PG) != 0;
	SHOW("munmap.all.fails", "%d", fails);
	RET("msync.after.all", msync(p, N * PG, MS_ASYNC));
	return 0;
}
