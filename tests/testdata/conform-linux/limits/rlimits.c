/* The resource limits init starts with (Linux's INIT_RLIMITS), which shells
 * show with ulimit: qemu-riscv64 reports the host's, so Linux itself is the
 * oracle. Not printed: RLIMIT_NOFILE (the kernel's descriptor table holds
 * 1024, Linux's hard limit is 4096) and RLIMIT_NPROC and RLIMIT_SIGPENDING,
 * which Linux sizes from memory. */
#include "../../conform/conform.h"
#include <sys/resource.h>

static void show(const char *name, int resource) {
	struct rlimit r;
	if (getrlimit(resource, &r) != 0) {
		SHOW(name, "-1 %s", strerrorname_np(errno));
		return;
	}
	char cur[32], max[32];
	if (r.rlim_cur == RLIM_INFINITY)
		strcpy(cur, "unlimited");
	else
		snprintf(cur, sizeof cur, "%lu", (unsigned long)r.rlim_cur);
	if (r.rlim_max == RLIM_INFINITY)
		strcpy(max, "unlimited");
	else
		snprintf(max, sizeof max, "%lu", (unsigned long)r.rlim_max);
	SHOW(name, "%s %s", cur, max);
}

int main(void) {
	show("cpu", RLIMIT_CPU);
	show("fsize", RLIMIT_FSIZE);
	show("data", RLIMIT_DATA);
	show("stack", RLIMIT_STACK);
	show("core", RLIMIT_CORE);
	show("rss", RLIMIT_RSS);
	show("memlock", RLIMIT_MEMLOCK);
	show("as", RLIMIT_AS);
	show("locks", RLIMIT_LOCKS);
	show("msgqueue", RLIMIT_MSGQUEUE);
	show("nice", RLIMIT_NICE);
	show("rtprio", RLIMIT_RTPRIO);
	show("rttime", RLIMIT_RTTIME);
	struct rlimit r;
	RET("getrlimit(RLIM_NLIMITS)", getrlimit(RLIM_NLIMITS, &r));
	RET("prlimit(bad pid)", prlimit(999999, RLIMIT_CORE, NULL, &r));
	return 0;
}
