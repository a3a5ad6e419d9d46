/* Memory locks: mlock, mlock2, munlock, mlockall, munlockall and
 * MAP_LOCKED, counted against RLIMIT_MEMLOCK as Linux counts them, and
 * what /proc shows (VmLck, smaps' Rss and Locked). Linux is the oracle:
 * under qemu-user the host's limits and capabilities would answer. */
#include "../../conform/conform.h"
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static long status_kb(const char *field) {
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, field, strlen(field)) == 0)
			v = atol(line + strlen(field) + 1);
	if (f)
		fclose(f);
	return v;
}

/* smaps_kb reads a field of the mapping that starts at addr. */
static long smaps_kb(void *addr, const char *field) {
	char line[256];
	long v = -1;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");
	while (f && fgets(line, sizeof line, f)) {
		unsigned long start, end;
		if (sscanf(line, "%lx-%lx", &start, &end) == 2) {
			in = start == (unsigned long)addr;
			continue;
		}
		if (in && strncmp(line, field, strlen(field)) == 0 && line[strlen(field)] == ':')
			v = atol(line + strlen(field) + 1);
	}
	if (f)
		fclose(f);
	return v;
}

static void unprivileged(void) {
	struct rlimit rl = {64 * 1024, 64 * 1024};
	RET("user.rlimit", setrlimit(RLIMIT_MEMLOCK, &rl));
	RET("user.setuid", setuid(65534));
	char *p = mmap(NULL, 32 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	RET("user.lock16", mlock(p, 16 * 4096));
	RET("user.lock16.again", mlock(p, 16 * 4096));
	RET("user.lock17", mlock(p, 17 * 4096));
	RET("user.lock.other", mlock(p + 16 * 4096, 4096));
	SHOW("user.vmlck", "%ld", status_kb("VmLck"));
	RET("user.unlock", munlock(p, 8 * 4096));
	RET("user.lock.after", mlock(p + 16 * 4096, 8 * 4096));
	RET("user.map.locked", (long)mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED, -1, 0) == -1 ? -1 : 0);
	RET("user.mlockall", mlockall(MCL_CURRENT));
	RET("user.mlockall.future", mlockall(MCL_FUTURE));
	RET("user.map.future", (long)mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == -1 ? -1 : 0);
	RET("user.munlockall", munlockall());
	SHOW("user.vmlck.none", "%ld", status_kb("VmLck"));
	rl.rlim_cur = rl.rlim_max = 0;
	RET("user.rlimit0", setrlimit(RLIMIT_MEMLOCK, &rl));
	RET("user.lock.zero", mlock(p, 4096));
	RET("user.mlockall.zero", mlockall(MCL_CURRENT));
	RET("user.map.locked.zero", (long)mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED, -1, 0) == -1 ? -1 : 0);
	RET("user.munlock.zero", munlock(p, 4096));
}

int main(void) {
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	SHOW("vmlck.start", "%ld", status_kb("VmLck"));
	char *p = mmap(NULL, 64 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	RET("lock.unaligned", mlock(p + 100, 4096));
	SHOW("vmlck.2pages", "%ld", status_kb("VmLck"));
	SHOW("smaps.rss", "%ld", smaps_kb(p, "Rss"));
	SHOW("smaps.locked", "%ld", smaps_kb(p, "Locked"));
	SHOW("smaps.size", "%ld", smaps_kb(p, "Size"));
	unsigned char vec[64];
	mincore(p, 64 * 4096, vec);
	int resident = 0;
	for (int i = 0; i < 64; i++)
		resident += vec[i] & 1;
	SHOW("resident", "%d", resident);
	RET("unlock.all", munlock(p, 64 * 4096));
	SHOW("vmlck.none", "%ld", status_kb("VmLck"));
	RET("lock2.onfault", syscall(SYS_mlock2, p + 8 * 4096, 4 * 4096, MLOCK_ONFAULT));
	mincore(p, 64 * 4096, vec);
	SHOW("onfault.resident", "%d", vec[8] & 1);
	SHOW("vmlck.onfault", "%ld", status_kb("VmLck"));
	RET("lock2.badflag", syscall(SYS_mlock2, p, 4096, 2));
	RET("lock.zero", mlock(p, 0));
	RET("munmap.locked", munmap(p + 8 * 4096, 2 * 4096));
	SHOW("vmlck.unmapped", "%ld", status_kb("VmLck"));
	RET("lock.hole", mlock(p + 6 * 4096, 8 * 4096));
	SHOW("vmlck.hole", "%ld", status_kb("VmLck"));
	RET("unlock.hole", munlock(p + 6 * 4096, 8 * 4096));
	RET("lock.unmapped", mlock((void *)0x10000, 4096));
	RET("lock.wrap", mlock(p, ~0UL));
	RET("munlockall", munlockall());

	char *m = mmap(NULL, 256 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED, -1, 0);
	SHOW("map.locked.vmlck", "%ld", status_kb("VmLck"));
	SHOW("map.locked.rss", "%ld", smaps_kb(m, "Rss"));
	munmap(m, 256 * 4096);
	SHOW("map.unmapped.vmlck", "%ld", status_kb("VmLck"));
	char *s = mmap(NULL, 8 * 4096, PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	RET("lock.shared.writeonly", mlock(s, 8 * 4096));
	mincore(s, 8 * 4096, vec);
	SHOW("shared.resident", "%d", vec[0] & vec[7] & 1);
	munmap(s, 8 * 4096);

	RET("mlockall.bad", mlockall(0));
	RET("mlockall.onfault", mlockall(MCL_ONFAULT));
	RET("mlockall.badbits", mlockall(8));
	RET("mlockall.future", mlockall(MCL_FUTURE));
	char *f = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	SHOW("future.locked", "%ld", smaps_kb(f, "Locked"));
	pid_t c = fork();
	if (c == 0) {
		SHOW("child.vmlck", "%ld", status_kb("VmLck"));
		fflush(stdout);
		_exit(0);
	}
	waitpid(c, NULL, 0);
	RET("munlockall.2", munlockall());
	char *g = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	SHOW("after.munlockall.locked", "%ld", smaps_kb(g, "Locked"));

	c = fork();
	if (c == 0) {
		unprivileged();
		fflush(stdout);
		_exit(0);
	}
	int st;
	waitpid(c, &st, 0);
	SHOW("user.status", "%d", st);
	return 0;
}
