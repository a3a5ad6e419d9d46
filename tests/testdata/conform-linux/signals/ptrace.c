/* ptrace(2): PTRACE_TRACEME and signal-delivery-stops reported to the
 * tracer's wait, resumed by CONT, KILL and DETACH with or without the
 * signal; ATTACH and its errors; requests on a tracee not stopped or not
 * traced; PEEK and POKE of data and of read-only text, and of bad
 * addresses; GETSIGINFO; GETREGSET; the SIGTRAP after execve; the exit
 * reported to the tracer; tracees let go when their tracer exits. */
#include "../../conform/conform.h"
#include <elf.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

static long value = 0x1122334455667788;
static const volatile long ro = 5;
static volatile int handled;

static void on_usr1(int sig) { handled = sig; }

/* show_status prints how a wait for pid ended. */
static void show_status(const char *name, pid_t pid) {
	int st;
	pid_t r = waitpid(pid, &st, 0);
	if (r < 0 || (pid > 0 && r != pid))
		printf("%s: waitpid %d %s\n", name, (int)r, strerrorname_np(errno));
	else if (WIFSTOPPED(st))
		printf("%s: stopped %s\n", name, sigabbrev_np(WSTOPSIG(st)));
	else if (WIFSIGNALED(st))
		printf("%s: killed %s\n", name, sigabbrev_np(WTERMSIG(st)));
	else
		printf("%s: exited %d\n", name, WEXITSTATUS(st));
	fflush(stdout);
}

/* traced_child forks a child that asks to be traced, then runs fn. */
static pid_t traced_child(void (*fn)(void)) {
	pid_t pid = fork();
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
			_exit(99);
		fn();
		_exit(0);
	}
	return pid;
}

static void signals_child(void) {
	signal(SIGUSR2, SIG_IGN);
	raise(SIGUSR2); /* ignored, still reported */
	raise(SIGUSR1); /* cancelled by the tracer */
	raise(SIGTERM); /* delivered by the tracer: fatal */
	_exit(1);
}

static void handler_child(void) {
	signal(SIGUSR1, on_usr1);
	raise(SIGCHLD);
	_exit(handled);
}

static void stop_child(void) {
	raise(SIGSTOP);
	_exit(3);
}

static void memory_child(void) {
	syscall(SYS_kill, getpid(), SIGUSR1);
	_exit(value == 42 && ro == 6 ? 0 : 1);
}

static void breakpoint_child(void) {
	__asm__ volatile("ebreak");
	_exit(4);
}

static void segv_child(void) {
	*(volatile int *)BAD = 1;
	_exit(4);
}

static void exec_child(void) {
	execl("/init", "/init", "exec", (char *)NULL);
	_exit(98);
}

static void pause_child(void) {
	for (;;)
		pause();
}

int main(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "exec") == 0)
		return 42;

	/* Signals: every one stops the tracee; CONT resumes without it,
	 * with it, or with another. */
	pid_t pid = traced_child(signals_child);
	show_status("sig ignored", pid);
	siginfo_t si;
	RET("getsiginfo", ptrace(PTRACE_GETSIGINFO, pid, NULL, &si));
	SHOW("getsiginfo signo", "%s code %d self %d", sigabbrev_np(si.si_signo), si.si_code, si.si_pid == pid);
	RET("cont", ptrace(PTRACE_CONT, pid, NULL, (void *)0));
	show_status("sig usr1", pid);
	RET("cont cancel", ptrace(PTRACE_CONT, pid, NULL, (void *)0));
	show_status("sig term", pid);
	RET("cont bad signal", ptrace(PTRACE_CONT, pid, NULL, (void *)65));
	RET("cont term", ptrace(PTRACE_CONT, pid, NULL, (void *)SIGTERM));
	show_status("term delivered", pid);
	RET("cont reaped", ptrace(PTRACE_CONT, pid, NULL, NULL));

	/* Resumed with another signal: the handler runs. */
	pid = traced_child(handler_child);
	show_status("sigchld", pid);
	RET("cont usr1", ptrace(PTRACE_CONT, pid, NULL, (void *)SIGUSR1));
	show_status("handler ran", pid);

	/* KILL ends a stopped tracee; DETACH lets one go with its signal. */
	pid = traced_child(stop_child);
	show_status("sigstop", pid);
	RET("kill", ptrace(PTRACE_KILL, pid, NULL, NULL));
	show_status("killed", pid);
	pid = traced_child(handler_child);
	show_status("detach sigchld", pid);
	RET("detach usr1", ptrace(PTRACE_DETACH, pid, NULL, (void *)SIGUSR1));
	show_status("detached", pid);

	/* Memory: PEEK and POKE, read-only text written through a private
	 * copy; bad addresses. */
	pid = traced_child(memory_child);
	show_status("memory stop", pid);
	errno = 0;
	long w = ptrace(PTRACE_PEEKDATA, pid, &value, NULL);
	SHOW("peekdata", "%lx %s", w, strerrorname_np(errno));
	errno = 0;
	w = ptrace(PTRACE_PEEKTEXT, pid, (void *)main, NULL);
	SHOW("peektext main", "%d %s", w == *(long *)(void *)main, strerrorname_np(errno));
	RET("pokedata", ptrace(PTRACE_POKEDATA, pid, &value, (void *)42));
	RET("poketext ro", ptrace(PTRACE_POKETEXT, pid, (void *)&ro, (void *)6));
	SHOW("own ro", "%ld", (long)ro);
	RET("peekdata 0", ptrace(PTRACE_PEEKDATA, pid, NULL, NULL));
	RET("peekdata -1", ptrace(PTRACE_PEEKDATA, pid, (void *)-1, NULL));
	RET("pokedata 0", ptrace(PTRACE_POKEDATA, pid, NULL, NULL));
	RET("poketext -8", ptrace(PTRACE_POKETEXT, pid, (void *)-8, NULL));
	RET("peek to bad", syscall(SYS_ptrace, PTRACE_PEEKDATA, pid, &value, BAD));
	RET("peekuser", ptrace(PTRACE_PEEKUSER, pid, NULL, NULL));
	RET("pokeuser", ptrace(PTRACE_POKEUSER, pid, NULL, NULL));
	RET("getsiginfo bad", ptrace(PTRACE_GETSIGINFO, pid, NULL, BAD));
	RET("unknown request", ptrace(12345, pid, NULL, NULL));
	unsigned long regs[40] = {0};
	struct iovec iov = {regs, sizeof regs};
	RET("getregset", ptrace(PTRACE_GETREGSET, pid, (void *)NT_PRSTATUS, &iov));
	SHOW("getregset regs", "len %zu a0 %lu a7 %lu", iov.iov_len, regs[10], regs[17]);
	iov.iov_len = 12;
	RET("getregset odd", ptrace(PTRACE_GETREGSET, pid, (void *)NT_PRSTATUS, &iov));
	RET("cont memory", ptrace(PTRACE_CONT, pid, NULL, NULL));
	show_status("memory checked", pid);

	/* Faults stop the tracee first: a breakpoint, a bad store. */
	pid = traced_child(breakpoint_child);
	show_status("ebreak", pid);
	RET("ebreak siginfo", ptrace(PTRACE_GETSIGINFO, pid, NULL, &si));
	SHOW("ebreak signo", "%s code %d at pc %d", sigabbrev_np(si.si_signo), si.si_code,
	     ptrace(PTRACE_PEEKTEXT, pid, si.si_addr, NULL) == *(long *)si.si_addr);
	RET("kill ebreak", ptrace(PTRACE_KILL, pid, NULL, NULL));
	show_status("ebreak killed", pid);
	pid = traced_child(segv_child);
	show_status("segv", pid);
	RET("segv siginfo", ptrace(PTRACE_GETSIGINFO, pid, NULL, &si));
	SHOW("segv signo", "%s code %d addr %d", sigabbrev_np(si.si_signo), si.si_code, si.si_addr == BAD);
	RET("cont segv", ptrace(PTRACE_CONT, pid, NULL, (void *)SIGSEGV));
	show_status("segv delivered", pid);

	/* execve stops the tracee with SIGTRAP. */
	pid = traced_child(exec_child);
	show_status("exec", pid);
	RET("exec siginfo", ptrace(PTRACE_GETSIGINFO, pid, NULL, &si));
	SHOW("exec signo", "%s code %d self %d", sigabbrev_np(si.si_signo), si.si_code, si.si_pid == pid);
	RET("cont exec", ptrace(PTRACE_CONT, pid, NULL, NULL));
	show_status("exec exited", pid);

	/* Requests on a child not stopped, or not traced. */
	int p[2];
	pipe(p);
	pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		RET("traceme again", ptrace(PTRACE_TRACEME, 0, NULL, NULL));
		write(p[1], "x", 1);
		pause_child();
	}
	char c;
	read(p[0], &c, 1);
	RET("peek running", ptrace(PTRACE_PEEKDATA, pid, &value, NULL));
	RET("cont running", ptrace(PTRACE_CONT, pid, NULL, NULL));
	RET("detach running", ptrace(PTRACE_DETACH, pid, NULL, NULL));
	RET("attach traced", ptrace(PTRACE_ATTACH, pid, NULL, NULL));
	RET("kill running", ptrace(PTRACE_KILL, pid, NULL, NULL));
	show_status("killed running", pid);

	/* ATTACH: SIGSTOP, then DETACH; its errors. */
	RET("attach self", ptrace(PTRACE_ATTACH, getpid(), NULL, NULL));
	RET("attach none", ptrace(PTRACE_ATTACH, 999999, NULL, NULL));
	RET("cont none", ptrace(PTRACE_CONT, 999999, NULL, NULL));
	pid = fork();
	if (pid == 0)
		pause_child();
	RET("cont untraced", ptrace(PTRACE_CONT, pid, NULL, NULL));
	RET("attach", ptrace(PTRACE_ATTACH, pid, NULL, NULL));
	show_status("attach stop", pid);
	RET("attach siginfo", ptrace(PTRACE_GETSIGINFO, pid, NULL, &si));
	SHOW("attach signo", "%s code %d", sigabbrev_np(si.si_signo), si.si_code);
	RET("attach again", ptrace(PTRACE_ATTACH, pid, NULL, NULL));
	RET("detach", ptrace(PTRACE_DETACH, pid, NULL, NULL));
	RET("cont detached", ptrace(PTRACE_CONT, pid, NULL, NULL));
	kill(pid, SIGKILL);
	show_status("attached killed", pid);

	/* Another user may attach to its own dumpable child, not to one
	 * that is not dumpable, without CAP_SYS_PTRACE. */
	pid = fork();
	if (pid == 0) {
		setresgid(65534, 65534, 65534);
		setresuid(65534, 65534, 65534);
		for (int dumpable = 1; dumpable >= 0; dumpable--) {
			int r[2];
			pipe(r);
			pid_t kid = fork();
			if (kid == 0) {
				prctl(PR_SET_DUMPABLE, dumpable);
				write(r[1], "x", 1);
				pause_child();
			}
			read(r[0], &c, 1);
			printf("dumpable %d: ", dumpable);
			RET("user attach", ptrace(PTRACE_ATTACH, kid, NULL, NULL));
			if (dumpable)
				show_status("user attach stop", kid);
			kill(kid, SIGKILL);
			waitpid(kid, NULL, 0);
		}
		_exit(0);
	}
	show_status("user", pid);

	/* A tracer that exits lets its stopped tracee go on without the
	 * signal it stopped on; the tracee, now init's child, is reaped
	 * here. */
	int q[2];
	pipe(q);
	pid = fork();
	if (pid == 0) {
		pid_t kid = fork();
		if (kid == 0) {
			ptrace(PTRACE_TRACEME, 0, NULL, NULL);
			raise(SIGTERM);
			write(q[1], "r", 1);
			_exit(5);
		}
		show_status("tracer sees", kid);
		_exit(0);
	}
	show_status("tracer exited", pid);
	close(q[1]);
	RET("tracee resumed", read(q[0], &c, 1));
	show_status("orphan", -1);
	return 0;
}
