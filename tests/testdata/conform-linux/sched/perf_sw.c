/* perf_event_open(2) with software events, as Linux 6.12 answers it: the
 * checks of the attributes, pid, cpu, group and flags with their errnos,
 * the descriptor's read, ioctls and groups, the clocks against the
 * thread's CPU time, page faults and context switches, enable_on_exec,
 * inherit, a measured child's exit, and perf_event_paranoid for an
 * unprivileged user. Counts vary from run to run, so only their bounds
 * are printed. Hardware and raw events are left out: Linux in QEMU has
 * the SBI PMU's counters (EINVAL for the attributes here), the kernel has
 * no PMU (ENOENT). */
#include "../../conform/conform.h"
#include <linux/perf_event.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

static long peo(struct perf_event_attr *a, pid_t pid, int cpu, int group, unsigned long flags) {
	return syscall(SYS_perf_event_open, a, pid, cpu, group, flags);
}

/* sw is a disabled software counter of config, as LTP's
 * perf_event_open01 asks for it. */
static struct perf_event_attr sw(uint64_t config) {
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof a;
	a.config = config;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return a;
}

static uint64_t rd(int fd) {
	uint64_t v = ~0ull;
	if (read(fd, &v, sizeof v) != sizeof v)
		return ~0ull;
	return v;
}

static volatile unsigned long sink;
static void spin(long loops) {
	for (long i = 0; i < loops; i++)
		sink += i;
}

static int64_t cpu_ns(clockid_t clock) {
	struct timespec ts;
	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* near reports whether v is within 30% of want: QEMU's clocks jitter. */
static int near(double v, double want) { return v >= want * 0.7 && v <= want * 1.3; }

/* OPENS prints whether a call made a descriptor, or its errno. */
#define OPENS(name, call)                                                      \
	do {                                                                   \
		errno = 0;                                                     \
		long fd_ = (call);                                             \
		if (fd_ >= 0) {                                                \
			printf("%s: opens\n", name);                           \
			close(fd_);                                            \
		} else                                                         \
			printf("%s: -1 %s\n", name, strerrorname_np(errno));   \
		fflush(stdout);                                                \
	} while (0)

#define SPIN 20000000

static void clocks(void) {
	uint64_t configs[] = {PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_TASK_CLOCK};
	const char *names[] = {"cpu_clock", "task_clock"};
	for (int i = 0; i < 2; i++) {
		char name[64];
		struct perf_event_attr a = sw(configs[i]);
		int fd = peo(&a, 0, -1, -1, 0);
		snprintf(name, sizeof name, "%s.open", names[i]);
		SHOW(name, "%d", fd >= 0);
		spin(SPIN / 4);
		snprintf(name, sizeof name, "%s.disabled reads 0", names[i]);
		SHOW(name, "%d", rd(fd) == 0);
		RET("reset", ioctl(fd, PERF_EVENT_IOC_RESET, 0));
		int64_t t0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
		RET("enable", ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
		spin(SPIN);
		RET("disable", ioctl(fd, PERF_EVENT_IOC_DISABLE, 0));
		int64_t t1 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
		uint64_t v = rd(fd);
		snprintf(name, sizeof name, "%s.near thread cputime", names[i]);
		SHOW(name, "%d", near(v, t1 - t0));
		spin(SPIN / 4);
		snprintf(name, sizeof name, "%s.stays after disable", names[i]);
		SHOW(name, "%d", rd(fd) == v);
		RET("reset", ioctl(fd, PERF_EVENT_IOC_RESET, 0));
		snprintf(name, sizeof name, "%s.reset reads 0", names[i]);
		SHOW(name, "%d", rd(fd) == 0);
		uint32_t small;
		RET("read 4 bytes", read(fd, &small, sizeof small));
		char big[64];
		RET("read 64 bytes", read(fd, big, sizeof big));
		close(fd);
	}

	/* exclude_kernel and exclude_user against the whole time, over a
	 * loop of system calls. */
	struct perf_event_attr all = sw(PERF_COUNT_SW_TASK_CLOCK), user = all, kern = all;
	all.exclude_kernel = 0;
	kern.exclude_kernel = 0;
	kern.exclude_user = 1;
	int fa = peo(&all, 0, -1, -1, 0), fu = peo(&user, 0, -1, -1, 0), fk = peo(&kern, 0, -1, -1, 0);
	prctl(PR_TASK_PERF_EVENTS_ENABLE);
	for (int i = 0; i < 20000; i++)
		syscall(SYS_getppid);
	prctl(PR_TASK_PERF_EVENTS_DISABLE);
	uint64_t va = rd(fa), vu = rd(fu), vk = rd(fk);
	SHOW("exclude_kernel counts the whole time", "%d", near(vu, va));
	SHOW("exclude_user counts the whole time", "%d", near(vk, va));
	close(fa);
	close(fu);
	close(fk);

	/* The enabled and running times of a software event are the task's
	 * time while it is enabled. */
	struct perf_event_attr t = sw(PERF_COUNT_SW_TASK_CLOCK);
	t.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	int fd = peo(&t, 0, -1, -1, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	spin(SPIN);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	uint64_t times[4] = {0};
	RET("times.read", read(fd, times, sizeof times));
	SHOW("times.enabled is running", "%d", times[1] == times[2]);
	SHOW("times.enabled near count", "%d", near(times[1], times[0]));
	RET("times.read 16", read(fd, times, 16));
	close(fd);
}

static void counters(void) {
	struct perf_event_attr a = sw(PERF_COUNT_SW_PAGE_FAULTS), amin = sw(PERF_COUNT_SW_PAGE_FAULTS_MIN),
	                       amaj = sw(PERF_COUNT_SW_PAGE_FAULTS_MAJ), cs = sw(PERF_COUNT_SW_CONTEXT_SWITCHES), csu = cs,
	                       dummy = sw(PERF_COUNT_SW_DUMMY), align = sw(PERF_COUNT_SW_ALIGNMENT_FAULTS),
	                       emu = sw(PERF_COUNT_SW_EMULATION_FAULTS);
	int f = peo(&a, 0, -1, -1, 0), fmin = peo(&amin, 0, -1, -1, 0), fmaj = peo(&amaj, 0, -1, -1, 0);
	cs.exclude_kernel = 0;
	int fcs = peo(&cs, 0, -1, -1, 0), fcsu = peo(&csu, 0, -1, -1, 0), fd = peo(&dummy, 0, -1, -1, 0), fal = peo(&align, 0, -1, -1, 0),
	    fem = peo(&emu, 0, -1, -1, 0);
	SHOW("counters.open", "%d %d %d %d %d %d %d", f >= 0, fmin >= 0, fmaj >= 0, fcs >= 0, fd >= 0, fal >= 0,
	     fem >= 0);
	enum { pages = 64 };
	char *m = mmap(NULL, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	madvise(m, pages * 4096, MADV_NOHUGEPAGE);
	prctl(PR_TASK_PERF_EVENTS_ENABLE);
	for (int i = 0; i < pages; i++)
		m[i * 4096] = 1;
	prctl(PR_TASK_PERF_EVENTS_DISABLE);
	uint64_t v = rd(f), vmin = rd(fmin);
	SHOW("page_faults.touched pages", "%d", v >= pages && v <= pages + 16);
	SHOW("page_faults_min.touched pages", "%d", vmin >= pages && vmin <= pages + 16);
	SHOW("page_faults_maj", "%llu", (unsigned long long)rd(fmaj));
	ioctl(f, PERF_EVENT_IOC_RESET, 0);
	ioctl(fcs, PERF_EVENT_IOC_RESET, 0);
	ioctl(fcs, PERF_EVENT_IOC_ENABLE, 0);
	ioctl(fcsu, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 10; i++)
		usleep(2000);
	ioctl(fcs, PERF_EVENT_IOC_DISABLE, 0);
	ioctl(fcsu, PERF_EVENT_IOC_DISABLE, 0);
	uint64_t vcs = rd(fcs);
	SHOW("context_switches.ten sleeps", "%d", vcs >= 5 && vcs <= 50);
	SHOW("context_switches.user mode only", "%llu", (unsigned long long)rd(fcsu));
	struct perf_event_attr same = sw(PERF_COUNT_SW_PAGE_FAULTS);
	RET("page_faults.ioctl MODIFY_ATTRIBUTES", ioctl(f, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &same));
	close(fcsu);
	SHOW("dummy", "%llu", (unsigned long long)rd(fd));
	SHOW("alignment_faults", "%llu", (unsigned long long)rd(fal));
	SHOW("emulation_faults", "%llu", (unsigned long long)rd(fem));
	close(f);
	close(fmin);
	close(fmaj);
	close(fcs);
	close(fd);
	close(fal);
	close(fem);
	munmap(m, pages * 4096);
}

static void attr_checks(void) {
	struct perf_event_attr a = sw(PERF_COUNT_SW_TASK_CLOCK);
	RET("flags unknown", peo(&a, 0, -1, -1, 1 << 4));
	RET("attr NULL", peo(NULL, 0, -1, -1, 0));
	RET("attr bad", peo(BAD, 0, -1, -1, 0));
	a.size = 1;
	RET("size 1", peo(&a, 0, -1, -1, 0));
	SHOW("size 1.size written", "%u", a.size);
	a.size = 4097;
	RET("size 4097", peo(&a, 0, -1, -1, 0));
	SHOW("size 4097.size written", "%u", a.size);
	struct {
		struct perf_event_attr a;
		char tail[64];
	} big;
	memset(&big, 0, sizeof big);
	big.a = sw(PERF_COUNT_SW_TASK_CLOCK);
	big.a.size = sizeof big;
	long fd = peo(&big.a, 0, -1, -1, 0);
	SHOW("size big zero tail", "%d", fd >= 0);
	close(fd);
	big.a.size = sizeof big;
	big.tail[60] = 1;
	RET("size big nonzero tail", peo(&big.a, 0, -1, -1, 0));
	SHOW("size big nonzero tail.size written", "%u", big.a.size);
	a = sw(PERF_COUNT_SW_TASK_CLOCK);
	a.size = 0;
	fd = peo(&a, 0, -1, -1, 0);
	SHOW("size 0 is the first version", "%d", fd >= 0);
	close(fd);
	a.size = PERF_ATTR_SIZE_VER0 + 4;
	RET("size 68", peo(&a, 0, -1, -1, 0) >= 0);
	a.size = PERF_ATTR_SIZE_VER1;
	RET("size 72", peo(&a, 0, -1, -1, 0) >= 0);

	a = sw(PERF_COUNT_SW_TASK_CLOCK);
	a.__reserved_1 = 1;
	RET("reserved_1", peo(&a, 0, -1, -1, 0));
	a = sw(PERF_COUNT_SW_TASK_CLOCK);
	a.__reserved_2 = 1;
	RET("reserved_2", peo(&a, 0, -1, -1, 0));
	a = sw(PERF_COUNT_SW_TASK_CLOCK);
	a.__reserved_3 = 1;
	RET("reserved_3", peo(&a, 0, -1, -1, 0));
	a = sw(PERF_COUNT_SW_TASK_CLOCK);
	a.read_format = PERF_FORMAT_MAX;
	RET("read_format unknown", peo(&a, 0, -1, -1, 0));
	a = sw(PERF_COUNT_SW_TASK_CLOCK);
	a.sample_type = 1ull << 40;
	RET("sample_type unknown", peo(&a, 0, -1, -1, 0));
	a = sw(PERF_COUNT_SW_TASK_CLOCK);
	a.sample_period = 1ull << 63;
	RET("sample_period top bit", peo(&a, 0, -1, -1, 0));
	a = sw(PERF_COUNT_SW_TASK_CLOCK);
	a.freq = 1;
	a.sample_freq = 1000000000;
	RET("sample_freq above max", peo(&a, 0, -1, -1, 0));
	a = sw(PERF_COUNT_SW_TASK_CLOCK);
	a.inherit_thread = 1;
	RET("inherit_thread without inherit", peo(&a, 0, -1, -1, 0));
	a = sw(PERF_COUNT_SW_TASK_CLOCK);
	a.remove_on_exec = 1;
	a.enable_on_exec = 1;
	RET("remove_on_exec with enable_on_exec", peo(&a, 0, -1, -1, 0));
	a = sw(PERF_COUNT_SW_TASK_CLOCK);
	a.sigtrap = 1;
	RET("sigtrap without remove_on_exec", peo(&a, 0, -1, -1, 0));

	a = sw(PERF_COUNT_SW_TASK_CLOCK);
	a.inherit = 1;
	a.sample_type = PERF_SAMPLE_READ;
	RET("inherit with sample read", peo(&a, 0, -1, -1, 0));
	a.sample_type = PERF_SAMPLE_READ | PERF_SAMPLE_TID;
	OPENS("inherit with sample read and tid", peo(&a, 0, -1, -1, 0));
	a = sw(PERF_COUNT_SW_TASK_CLOCK);
	a.aux_output = 1;
	RET("aux_output", peo(&a, 0, -1, -1, 0));
	for (int bit = 0; bit < 4; bit++) {
		char name[32];
		a = sw(PERF_COUNT_SW_TASK_CLOCK);
		memcpy((char *)&a + 116, &(uint32_t){1u << bit}, 4);
		snprintf(name, sizeof name, "aux_action bit %d", bit);
		RET(name, peo(&a, 0, -1, -1, 0));
	}
	a = sw(PERF_COUNT_SW_TASK_CLOCK);
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC_RAW;
	OPENS("clockid monotonic raw", peo(&a, 0, -1, -1, 0));
	a.clockid = CLOCK_PROCESS_CPUTIME_ID;
	RET("clockid process cputime", peo(&a, 0, -1, -1, 0));
	a = sw(PERF_COUNT_SW_TASK_CLOCK);
	a.sample_type = PERF_SAMPLE_BRANCH_STACK;
	RET("branch stack no type", peo(&a, 0, -1, -1, 0));
	a.branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
	RET("branch stack", peo(&a, 0, -1, -1, 0));
	a = sw(PERF_COUNT_SW_TASK_CLOCK);
	a.sample_type = PERF_SAMPLE_REGS_USER;
	RET("regs user none", peo(&a, 0, -1, -1, 0));
	a = sw(PERF_COUNT_SW_TASK_CLOCK);
	a.sigtrap = 1;
	a.remove_on_exec = 1;
	OPENS("sigtrap counting", peo(&a, 0, -1, -1, 0));
	RET("sigtrap cpu-wide", peo(&a, -1, 0, -1, 0));
	uint64_t known[] = {PERF_COUNT_SW_PAGE_FAULTS_MAJ, PERF_COUNT_SW_DUMMY, PERF_COUNT_SW_BPF_OUTPUT, PERF_COUNT_SW_CGROUP_SWITCHES};
	for (unsigned i = 0; i < sizeof known / sizeof *known; i++) {
		char name[32];
		a = sw(known[i]);
		snprintf(name, sizeof name, "software config %llu", (unsigned long long)known[i]);
		OPENS(name, peo(&a, 0, -1, -1, 0));
	}
	a = sw(PERF_COUNT_SW_TASK_CLOCK);
	a.type = 1000;
	RET("type unknown", peo(&a, 0, -1, -1, 0));
	a = sw(PERF_COUNT_SW_CGROUP_SWITCHES + 1);
	RET("software config unknown", peo(&a, 0, -1, -1, 0));
	a = sw(PERF_COUNT_SW_TASK_CLOCK);
	a.type = PERF_TYPE_BREAKPOINT;
	RET("breakpoint", peo(&a, 0, -1, -1, 0));
	a.type = PERF_TYPE_HW_CACHE;
	a.config = 0;
	RET("hardware cache", peo(&a, 0, -1, -1, 0));

	a = sw(PERF_COUNT_SW_TASK_CLOCK);
	RET("pid -1 cpu -1", peo(&a, -1, -1, -1, 0));
	RET("cpu 1000", peo(&a, 0, 1000, -1, 0));
	RET("cpu -2", peo(&a, 0, -2, -1, 0));
	RET("pid none", peo(&a, 999999, -1, -1, 0));
	RET("cgroup pid -1", peo(&a, -1, 0, -1, PERF_FLAG_PID_CGROUP));
	RET("cgroup cpu -1", peo(&a, 0, -1, -1, PERF_FLAG_PID_CGROUP));
	RET("cgroup not a cgroup", peo(&a, 0, 0, -1, PERF_FLAG_PID_CGROUP));
	RET("group_fd bad", peo(&a, 0, -1, 1000, 0));
	int p[2];
	pipe(p);
	RET("group_fd pipe", peo(&a, 0, -1, p[0], 0));

	fd = peo(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	SHOW("cloexec", "%d", fcntl(fd, F_GETFD) == FD_CLOEXEC);
	SHOW("flags", "0%o", fcntl(fd, F_GETFL));
	char path[64], link[64] = {0};
	snprintf(path, sizeof path, "/proc/self/fd/%ld", fd);
	readlink(path, link, sizeof link - 1);
	SHOW("fd link", "%s", link);
	struct stat st;
	fstat(fd, &st);
	SHOW("fstat mode", "0%o", st.st_mode);
	RET("write", write(fd, "x", 1));
	RET("lseek", lseek(fd, 0, SEEK_SET));
	struct pollfd pfd = {.fd = fd, .events = POLLIN | POLLOUT};
	RET("poll", poll(&pfd, 1, 0));
	SHOW("poll revents", "%#x", pfd.revents);
	RET("ioctl unknown", ioctl(fd, 0x2450, 0));
	RET("ioctl FIONREAD", ioctl(fd, FIONREAD, &st));
	uint64_t id1 = 0, id2 = 0, period = 100;
	RET("ioctl ID", ioctl(fd, PERF_EVENT_IOC_ID, &id1));
	RET("ioctl ID bad", ioctl(fd, PERF_EVENT_IOC_ID, BAD));
	RET("ioctl REFRESH", ioctl(fd, PERF_EVENT_IOC_REFRESH, 1));
	RET("ioctl PERIOD", ioctl(fd, PERF_EVENT_IOC_PERIOD, &period));
	RET("ioctl PERIOD bad", ioctl(fd, PERF_EVENT_IOC_PERIOD, BAD));
	RET("ioctl SET_OUTPUT -1", ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, -1));
	RET("ioctl SET_OUTPUT pipe", ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, p[0]));
	RET("ioctl SET_OUTPUT self", ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, fd));
	RET("ioctl SET_FILTER", ioctl(fd, PERF_EVENT_IOC_SET_FILTER, "x"));
	RET("ioctl SET_FILTER bad", ioctl(fd, PERF_EVENT_IOC_SET_FILTER, BAD));
	RET("ioctl SET_BPF", ioctl(fd, PERF_EVENT_IOC_SET_BPF, p[0]));
	RET("ioctl PAUSE_OUTPUT", ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1));
	struct perf_event_attr same = sw(PERF_COUNT_SW_TASK_CLOCK);
	RET("ioctl MODIFY_ATTRIBUTES", ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &same));
	same.type = PERF_TYPE_HARDWARE;
	RET("ioctl MODIFY_ATTRIBUTES type", ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &same));
	RET("ioctl MODIFY_ATTRIBUTES bad", ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, BAD));
	long fd2 = peo(&a, 0, -1, -1, 0);
	RET("ioctl SET_OUTPUT other", ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, fd2));
	ioctl(fd2, PERF_EVENT_IOC_ID, &id2);
	SHOW("ids distinct", "%d", id1 != 0 && id2 != 0 && id1 != id2);
	RET("flag FD_OUTPUT", peo(&a, 0, -1, fd, PERF_FLAG_FD_OUTPUT));
	RET("flag FD_OUTPUT no group", peo(&a, 0, -1, -1, PERF_FLAG_FD_OUTPUT) >= 0);
	close(fd);
	close(fd2);
	close(p[0]);
	close(p[1]);
}

static void groups(void) {
	struct perf_event_attr l = sw(PERF_COUNT_SW_TASK_CLOCK), s = sw(PERF_COUNT_SW_TASK_CLOCK);
	l.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	s.disabled = 0;
	int lfd = peo(&l, 0, -1, -1, 0), sfd = peo(&s, 0, -1, lfd, 0);
	SHOW("group.open", "%d %d", lfd >= 0, sfd >= 0);
	spin(SPIN / 2);
	SHOW("group.sibling waits for its leader", "%d", rd(sfd) == 0);
	uint64_t buf[16] = {0};
	RET("group.read 8", read(lfd, buf, 8));
	RET("group.read", read(lfd, buf, sizeof buf));
	uint64_t lid = 0, sid = 0;
	ioctl(lfd, PERF_EVENT_IOC_ID, &lid);
	ioctl(sfd, PERF_EVENT_IOC_ID, &sid);
	SHOW("group.nr and ids", "%llu %d %d", (unsigned long long)buf[0], buf[4] == lid, buf[6] == sid);
	RET("group.enable", ioctl(lfd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP));
	spin(SPIN);
	RET("group.disable", ioctl(sfd, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP));
	memset(buf, 0, sizeof buf);
	read(lfd, buf, sizeof buf);
	SHOW("group.both counted", "%d %d", buf[3] > 0, buf[5] > 0);
	SHOW("group.members near", "%d", near(buf[3], buf[5]));
	SHOW("group.leader near its time", "%d", near(buf[3], buf[1]));
	RET("group.reset", ioctl(lfd, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP));
	SHOW("group.reset zeroes both", "%d %d", rd(lfd) == ~0ull, rd(sfd) == 0);
	memset(buf, 0, sizeof buf);
	read(lfd, buf, sizeof buf);
	SHOW("group.after reset", "%llu %llu", (unsigned long long)buf[3], (unsigned long long)buf[5]);

	RET("group.of a sibling", peo(&s, 0, -1, sfd, 0));
	struct perf_event_attr pinned = s;
	pinned.pinned = 1;
	RET("group.pinned sibling", peo(&pinned, 0, -1, lfd, 0));
	struct perf_event_attr exclusive = s;
	exclusive.exclusive = 1;
	RET("group.exclusive sibling", peo(&exclusive, 0, -1, lfd, 0));
	struct perf_event_attr inh = s;
	inh.inherit = 1;
	RET("group.inherit differs", peo(&inh, 0, -1, lfd, 0));
	RET("group.other cpu", peo(&s, 0, 0, lfd, 0));
	int cpufd = peo(&s, -1, 0, -1, 0);
	SHOW("cpu-wide.open", "%d", cpufd >= 0);
	RET("group.task under cpu-wide", peo(&s, 0, -1, cpufd, 0));
	RET("group.cpu-wide under cpu-wide", peo(&s, -1, 0, cpufd, 0) >= 0);
	close(cpufd);
	pid_t c = fork();
	if (c == 0) {
		pause();
		_exit(0);
	}
	RET("group.other task", peo(&s, c, -1, lfd, 0));
	int cfd = peo(&s, c, -1, -1, 0);
	OPENS("group.in the other task", peo(&s, c, -1, cfd, 0));
	RET("group.of the other task", peo(&s, 0, -1, cfd, 0));
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	RET("group.read after its task is killed", read(cfd, buf, 8));
	close(cfd);
	c = fork();
	if (c == 0)
		_exit(0);
	usleep(100000);
	RET("zombie", peo(&s, c, -1, -1, 0));
	waitpid(c, NULL, 0);
	int nofd = peo(&s, 0, -1, lfd, PERF_FLAG_FD_NO_GROUP);
	SHOW("group.no group flag", "%d", nofd >= 0);
	struct perf_event_attr g = sw(PERF_COUNT_SW_DUMMY);
	g.read_format = PERF_FORMAT_GROUP;
	int gfd = peo(&g, 0, -1, -1, 0);
	memset(buf, 0, sizeof buf);
	RET("group.alone read", read(gfd, buf, sizeof buf));
	SHOW("group.alone nr", "%llu", (unsigned long long)buf[0]);
	g.inherit = 1;
	OPENS("group.inherit with group format", peo(&g, 0, -1, -1, 0));
	close(gfd);
	close(nofd);
	close(sfd);
	/* A group whose leader is closed: the sibling goes on alone. */
	spin(1);
	close(lfd);
}

static void spinner(void) { spin(SPIN); }

/* reap waits for child c and returns the CPU time it used, in ns. */
static double reap(pid_t c) {
	struct rusage before, after;
	getrusage(RUSAGE_CHILDREN, &before);
	waitpid(c, NULL, 0);
	getrusage(RUSAGE_CHILDREN, &after);
	return (after.ru_utime.tv_sec - before.ru_utime.tv_sec + after.ru_stime.tv_sec - before.ru_stime.tv_sec) * 1e9 +
	       (after.ru_utime.tv_usec - before.ru_utime.tv_usec + after.ru_stime.tv_usec - before.ru_stime.tv_usec) * 1e3;
}

static void children(void) {
	/* A child measured from outside: counting stops at its exit. */
	int go[2];
	pipe(go);
	pid_t c = fork();
	if (c == 0) {
		char b;
		read(go[0], &b, 1);
		spin(SPIN);
		_exit(0);
	}
	struct perf_event_attr a = sw(PERF_COUNT_SW_TASK_CLOCK);
	a.disabled = 0;
	int fd = peo(&a, c, -1, -1, 0);
	write(go[1], "x", 1);
	double child = reap(c);
	uint64_t v = rd(fd);
	SHOW("exited child.counted its time", "%d", v > child * 0.7 && v < child * 1.1);
	SHOW("exited child.stays", "%d", rd(fd) == v);
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	RET("exited child.poll", poll(&pfd, 1, 0));
	SHOW("exited child.revents", "%#x", pfd.revents);
	RET("exited child.enable", ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	close(fd);

	/* enable_on_exec: the exec of a disabled event's task enables it. */
	for (int on = 0; on < 2; on++) {
		c = fork();
		if (c == 0) {
			char b;
			read(go[0], &b, 1);
			execl("/init", "init", "spin", (char *)NULL);
			_exit(1);
		}
		a = sw(PERF_COUNT_SW_TASK_CLOCK);
		a.enable_on_exec = on;
		fd = peo(&a, c, -1, -1, 0);
		write(go[1], "x", 1);
		waitpid(c, NULL, 0);
		SHOW(on ? "enable_on_exec.counted" : "no enable_on_exec.counted", "%d", rd(fd) > 0);
		close(fd);
	}

	/* remove_on_exec: the event stops counting at the exec. */
	c = fork();
	if (c == 0) {
		char b;
		read(go[0], &b, 1);
		spin(SPIN / 10);
		execl("/init", "init", "spin", (char *)NULL);
		_exit(1);
	}
	a = sw(PERF_COUNT_SW_TASK_CLOCK);
	a.disabled = 0;
	a.remove_on_exec = 1;
	fd = peo(&a, c, -1, -1, 0);
	a.remove_on_exec = 0;
	int whole = peo(&a, c, -1, -1, 0);
	write(go[1], "x", 1);
	waitpid(c, NULL, 0);
	v = rd(fd);
	uint64_t w = rd(whole);
	SHOW("remove_on_exec.counted until the exec", "%d", v > 0 && v < w / 3);
	close(fd);
	close(whole);

	/* inherit: a child's time adds to the event its parent opened. */
	for (int on = 0; on < 2; on++) {
		a = sw(PERF_COUNT_SW_TASK_CLOCK);
		a.disabled = 0;
		a.inherit = on;
		fd = peo(&a, 0, -1, -1, 0);
		c = fork();
		if (c == 0) {
			spinner();
			_exit(0);
		}
		child = reap(c);
		v = rd(fd);
		SHOW(on ? "inherit.counts the child" : "no inherit.counts the child", "%d", v > child * 0.7);
		close(fd);
	}
	/* An inherited event follows its parent's ioctls. */
	a = sw(PERF_COUNT_SW_TASK_CLOCK);
	a.inherit = 1;
	fd = peo(&a, 0, -1, -1, 0);
	c = fork();
	if (c == 0) {
		char b;
		read(go[0], &b, 1);
		spin(SPIN);
		_exit(0);
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	write(go[1], "x", 1);
	child = reap(c);
	SHOW("inherit.enabled after fork counts the child", "%d", rd(fd) > child * 0.7);
	close(fd);
	close(go[0]);
	close(go[1]);
}

static const char *paranoid = "/proc/sys/kernel/perf_event_paranoid";

static void unprivileged(void) {
	setresgid(65534, 65534, 65534);
	setresuid(65534, 65534, 65534);
	struct perf_event_attr a = sw(PERF_COUNT_SW_TASK_CLOCK), k = a, ns = a, phys = a;
	k.exclude_kernel = 0;
	ns.namespaces = 1;
	phys.sample_type = PERF_SAMPLE_PHYS_ADDR;
	OPENS("user.self", peo(&a, 0, -1, -1, 0));
	OPENS("user.self kernel", peo(&k, 0, -1, -1, 0));
	OPENS("user.cpu-wide", peo(&a, -1, 0, -1, 0));
	OPENS("user.root's process", peo(&a, 1, -1, -1, 0));
	OPENS("user.namespaces", peo(&ns, 0, -1, -1, 0));
	OPENS("user.physical addresses", peo(&phys, 0, -1, -1, 0));
	OPENS("user.no such process", peo(&a, 999999, -1, -1, 0));
	RET("user.bad flags", peo(&a, 0, -1, -1, 1 << 4));
	RET("user.bad attr", peo(BAD, 0, -1, -1, 0));
	put_file("user.write paranoid", paranoid, "2");
}

int main(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "spin") == 0) {
		spin(SPIN);
		return 0;
	}
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	show_file("perf_event_paranoid", paranoid);
	show_file("perf_event_max_sample_rate", "/proc/sys/kernel/perf_event_max_sample_rate");
	clocks();
	counters();
	attr_checks();
	groups();
	children();
	char old[16] = {0};
	int pf = open(paranoid, O_RDONLY);
	read(pf, old, sizeof old - 1);
	close(pf);
	const char *levels[] = {"3", "2", "1", "0", "-1"};
	for (unsigned i = 0; i < sizeof levels / sizeof *levels; i++) {
		put_file("paranoid.set", paranoid, levels[i]);
		show_file("paranoid", paranoid);
		run_child(unprivileged);
	}
	put_file("paranoid.set text", paranoid, "x");
	put_file("paranoid.set 7", paranoid, "7");
	show_file("paranoid", paranoid);
	put_file("paranoid.restore", paranoid, old);
	put_file("max_sample_rate.set 0", "/proc/sys/kernel/perf_event_max_sample_rate", "0");
	return 0;
}
