/* Scheduling policies, priorities, nice values and affinity as Linux
 * checks them: the calls change the machine's scheduling (and qemu-user
 * would change the host's), so Linux itself is the oracle. Runs as root,
 * then as an unprivileged user in a child. */
#include "../../conform/conform.h"
#include <sched.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>

struct attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
	uint32_t util_min, util_max;
};

static void show_sched(const char *name) {
	struct sched_param p = {-1};
	int policy = sched_getscheduler(0);
	sched_getparam(0, &p);
	SHOW(name, "policy %d priority %d nice %d", policy, p.sched_priority, getpriority(PRIO_PROCESS, 0));
}

static void unprivileged(void) {
	struct sched_param p = {1};
	RET("user.fifo", sched_setscheduler(0, SCHED_FIFO, &p));
	p.sched_priority = 0;
	RET("user.batch", sched_setscheduler(0, SCHED_BATCH, &p));
	RET("user.nice5", setpriority(PRIO_PROCESS, 0, 5));
	RET("user.nice3", setpriority(PRIO_PROCESS, 0, 3));
	RET("user.init", setpriority(PRIO_PROCESS, 1, 10));
	RET("user.initsched", sched_setscheduler(1, SCHED_OTHER, &p));
	RET("user.idle", sched_setscheduler(0, SCHED_IDLE, &p));
	RET("user.fromidle", sched_setscheduler(0, SCHED_OTHER, &p));
	show_sched("user.now");
	struct rlimit rl = {40, 40};
	RET("user.rlimit", setrlimit(RLIMIT_NICE, &rl));
	RET("user.nice-5", setpriority(PRIO_PROCESS, 0, -5));
	struct attr a = {.size = sizeof a, .policy = SCHED_DEADLINE, .runtime = 10000000, .deadline = 30000000, .period = 30000000};
	RET("user.deadline", syscall(SYS_sched_setattr, 0, &a, 0));
	uint64_t mask = 1;
	RET("user.affinity.init", sched_setaffinity(1, sizeof mask, (cpu_set_t *)&mask));
	RET("user.sethostname", sethostname("x", 1));
	RET("user.setdomainname", setdomainname("x", 1));
}

int main(void) {
	struct sched_param p = {0};
	show_sched("start");
	RET("max.fifo", sched_get_priority_max(SCHED_FIFO));
	RET("min.rr", sched_get_priority_min(SCHED_RR));
	RET("max.other", sched_get_priority_max(SCHED_OTHER));
	RET("min.deadline", sched_get_priority_min(SCHED_DEADLINE));
	RET("max.bad", sched_get_priority_max(4));
	RET("min.bad", sched_get_priority_min(-1));

	RET("set.badpolicy", sched_setscheduler(0, 4, &p));
	RET("set.negpolicy", sched_setscheduler(0, -1, &p));
	RET("set.negpid", sched_setscheduler(-1, SCHED_OTHER, &p));
	RET("set.nullparam", sched_setscheduler(0, SCHED_OTHER, NULL));
	RET("set.badparam", sched_setscheduler(0, SCHED_OTHER, BAD));
	RET("set.nopid", sched_setscheduler(99999, SCHED_OTHER, &p));
	RET("set.fifo0", sched_setscheduler(0, SCHED_FIFO, &p));
	p.sched_priority = 100;
	RET("set.fifo100", sched_setscheduler(0, SCHED_FIFO, &p));
	p.sched_priority = 1;
	RET("set.other1", sched_setscheduler(0, SCHED_OTHER, &p));
	p.sched_priority = 30;
	RET("set.rr30", sched_setscheduler(0, SCHED_RR, &p));
	show_sched("rr30");
	struct timespec ts = {9, 9};
	RET("rr.interval", sched_rr_get_interval(0, &ts));
	SHOW("rr.slice", "%ld.%09ld", (long)ts.tv_sec, ts.tv_nsec);
	RET("rr.interval.neg", sched_rr_get_interval(-1, &ts));
	RET("rr.interval.nopid", sched_rr_get_interval(99999, &ts));
	RET("rr.interval.bad", syscall(SYS_sched_rr_get_interval, 0, BAD));
	p.sched_priority = 40;
	RET("setparam.40", sched_setparam(0, &p));
	show_sched("param40");
	p.sched_priority = 0;
	RET("setparam.0", sched_setparam(0, &p));
	RET("setparam.null", sched_setparam(0, NULL));
	RET("set.fifo.reset", sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &(struct sched_param){5}));
	RET("get.reset", sched_getscheduler(0));
	pid_t child = fork();
	if (child == 0) {
		show_sched("child.reset");
		_exit(0);
	}
	waitpid(child, NULL, 0);
	/* an exited child not yet reaped still answers, as a zombie */
	child = fork();
	if (child == 0)
		_exit(0);
	siginfo_t si;
	waitid(P_PID, child, &si, WEXITED | WNOWAIT);
	RET("zombie.getscheduler", sched_getscheduler(child));
	struct sched_param zp = {-1};
	RET("zombie.getparam", sched_getparam(child, &zp));
	SHOW("zombie.priority", "%d", zp.sched_priority);
	waitpid(child, NULL, 0);
	RET("reaped.getscheduler", sched_getscheduler(child));
	p.sched_priority = 0;
	RET("set.fifo.toother", sched_setscheduler(0, SCHED_OTHER, &p));
	RET("get.other", sched_getscheduler(0));
	RET("get.neg", sched_getscheduler(-1));
	RET("get.nopid", sched_getscheduler(99999));
	RET("getparam.null", sched_getparam(0, NULL));
	RET("getparam.bad", sched_getparam(0, BAD));
	ts.tv_sec = 9;
	RET("other.interval", sched_rr_get_interval(0, &ts));
	SHOW("other.slice", "%ld.%09ld", (long)ts.tv_sec, ts.tv_nsec);

	/* sched_setattr and sched_getattr */
	struct attr a = {.size = sizeof a, .policy = SCHED_DEADLINE, .runtime = 10000000, .deadline = 30000000, .period = 30000000};
	RET("attr.deadline", syscall(SYS_sched_setattr, 0, &a, 0));
	struct attr g;
	memset(&g, 0xff, sizeof g);
	RET("getattr", syscall(SYS_sched_getattr, 0, &g, sizeof g, 0));
	SHOW("getattr.fields", "size %u policy %u flags %lu nice %d prio %u rt %lu dl %lu per %lu", g.size, g.policy,
	     (unsigned long)g.flags, g.nice, g.priority, (unsigned long)g.runtime, (unsigned long)g.deadline,
	     (unsigned long)g.period);
	memset(&g, 0xff, sizeof g);
	RET("getattr.ver0", syscall(SYS_sched_getattr, 0, &g, 48, 0));
	SHOW("getattr.ver0.size", "%u util_min %x", g.size, g.util_min);
	RET("getattr.small", syscall(SYS_sched_getattr, 0, &g, 47, 0));
	RET("getattr.flags", syscall(SYS_sched_getattr, 0, &g, sizeof g, 1));
	RET("getattr.null", syscall(SYS_sched_getattr, 0, NULL, sizeof g, 0));
	RET("getattr.nopid", syscall(SYS_sched_getattr, 99999, &g, sizeof g, 0));
	RET("attr.flags", syscall(SYS_sched_setattr, 0, &a, 1));
	RET("attr.null", syscall(SYS_sched_setattr, 0, NULL, 0));
	RET("attr.nopid", syscall(SYS_sched_setattr, 99999, &a, 0));
	a.runtime = 40000000;
	RET("attr.runtime>deadline", syscall(SYS_sched_setattr, 0, &a, 0));
	a.runtime = 100;
	RET("attr.runtime.small", syscall(SYS_sched_setattr, 0, &a, 0));
	struct attr o = {.size = 0, .policy = SCHED_OTHER, .nice = 3};
	RET("attr.other.size0", syscall(SYS_sched_setattr, 0, &o, 0));
	show_sched("attr.other");
	o.size = 40;
	RET("attr.size40", syscall(SYS_sched_setattr, 0, &o, 0));
	SHOW("attr.size40.back", "%u", o.size);
	char big[80] = {0};
	memcpy(big, &o, sizeof o);
	((struct attr *)big)->size = sizeof big;
	RET("attr.big.zero", syscall(SYS_sched_setattr, 0, big, 0));
	big[70] = 1;
	RET("attr.big.nonzero", syscall(SYS_sched_setattr, 0, big, 0));
	SHOW("attr.big.back", "%u", ((struct attr *)big)->size);
	o.size = sizeof o;
	o.nice = 0;
	o.flags = 0x100;
	RET("attr.badflags", syscall(SYS_sched_setattr, 0, &o, 0));

	/* nice and priority */
	RET("nice.set7", setpriority(PRIO_PROCESS, 0, 7));
	RET("nice.get", getpriority(PRIO_PROCESS, 0));
	RET("nice.raw", syscall(SYS_getpriority, PRIO_PROCESS, 0));
	RET("nice.set100", setpriority(PRIO_PROCESS, 0, 100));
	RET("nice.get100", getpriority(PRIO_PROCESS, 0));
	RET("nice.pgrp", setpriority(PRIO_PGRP, 0, -3));
	RET("nice.user", getpriority(PRIO_USER, 0));
	RET("nice.badwhich", setpriority(3, 0, 0));
	RET("nice.getbadwhich", getpriority(-1, 0));
	RET("nice.nopid", setpriority(PRIO_PROCESS, 99999, 0));
	RET("nice.getnopid", getpriority(PRIO_PROCESS, 99999));
	RET("nice.nouser", getpriority(PRIO_USER, 4242));
	RET("nice.back0", setpriority(PRIO_PROCESS, 0, 0));

	/* affinity */
	uint64_t mask = 0;
	RET("aff.get", sched_getaffinity(0, sizeof mask, (cpu_set_t *)&mask));
	SHOW("aff.mask", "%lx", (unsigned long)mask);
	RET("aff.get.small", syscall(SYS_sched_getaffinity, 0, 4, &mask));
	RET("aff.get.odd", syscall(SYS_sched_getaffinity, 0, 12, &mask));
	RET("aff.get.bad", syscall(SYS_sched_getaffinity, 0, 8, BAD));
	RET("aff.get.nopid", syscall(SYS_sched_getaffinity, 99999, 8, &mask));
	mask = 1;
	RET("aff.set", sched_setaffinity(0, sizeof mask, (cpu_set_t *)&mask));
	mask = 1UL << 40;
	RET("aff.set.none", sched_setaffinity(0, sizeof mask, (cpu_set_t *)&mask));
	RET("aff.set.bad", syscall(SYS_sched_setaffinity, 0, 8, BAD));
	RET("aff.set.nopid", syscall(SYS_sched_setaffinity, 99999, 8, &mask));
	mask = 0;
	RET("aff.get.after", sched_getaffinity(0, sizeof mask, (cpu_set_t *)&mask));
	SHOW("aff.mask.after", "%lx", (unsigned long)mask);

	/* host and domain names */
	struct utsname u;
	RET("sethostname", sethostname("conformhost.example", 11));
	RET("setdomainname", setdomainname("dom", 3));
	uname(&u);
	SHOW("uname", "%s %s", u.nodename, u.domainname);
	char long_name[80];
	memset(long_name, 'a', sizeof long_name);
	RET("sethostname.65", sethostname(long_name, 65));
	RET("sethostname.64", sethostname(long_name, 64));
	uname(&u);
	SHOW("uname.64", "%zu", strlen(u.nodename));
	RET("sethostname.neg", syscall(SYS_sethostname, long_name, -1));
	RET("sethostname.bad", sethostname(BAD, 5));
	RET("setdomainname.65", setdomainname(long_name, 65));
	RET("sethostname.0", sethostname("", 0));
	uname(&u);
	SHOW("uname.empty", "[%s]", u.nodename);

	child = fork();
	if (child == 0) {
		if (setuid(65534) != 0)
			_exit(1);
		unprivileged();
		_exit(0);
	}
	int status;
	waitpid(child, &status, 0);
	SHOW("user.status", "%d", status);
	return 0;
}
