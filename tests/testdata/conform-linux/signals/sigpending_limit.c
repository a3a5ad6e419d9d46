/* RLIMIT_SIGPENDING: each queued signal counts among its receiving
 * user's pending signals. Past the limit a real-time signal sent with
 * information of its own (sigqueue, tgkill) fails with EAGAIN, kill's is
 * made pending without its information, and so is a standard signal;
 * taking a signal, and the exit of the process that holds it, give the
 * count back (LTP's tgkill02). */
#include "../../conform/conform.h"
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static void limit(rlim_t n) {
	struct rlimit r = {n, n};
	setrlimit(RLIMIT_SIGPENDING, &r);
}

static int queue(int sig, int v) {
	union sigval value = {.sival_int = v};
	return sigqueue(getpid(), sig, value);
}

/* take collects one pending sig and shows its code and value. */
static void take(const char *name, int sig) {
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	struct timespec zero = {0, 0};
	siginfo_t si;
	int r = sigtimedwait(&set, &si, &zero);
	if (r < 0)
		printf("%s: -1 %s\n", name, strerrorname_np(errno));
	else
		printf("%s: code %d value %d\n", name, si.si_code, si.si_value.sival_int);
	fflush(stdout);
}

static pid_t tid;
static pthread_barrier_t ready, done;

static void *blocked_thread(void *arg) {
	tid = syscall(SYS_gettid);
	pthread_barrier_wait(&ready);
	pthread_barrier_wait(&done);
	return arg;
}

int main(void) {
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	sigaddset(&set, SIGRTMIN + 1);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);

	/* Limit 0: tgkill of a real-time signal is refused. */
	pthread_t th;
	pthread_barrier_init(&ready, NULL, 2);
	pthread_barrier_init(&done, NULL, 2);
	pthread_create(&th, NULL, blocked_thread, NULL);
	pthread_barrier_wait(&ready);
	limit(0);
	RET("limit0.tgkill.rt", syscall(SYS_tgkill, getpid(), tid, SIGRTMIN));
	RET("limit0.kill.rt", kill(getpid(), SIGRTMIN));
	take("limit0.kill.rt.taken", SIGRTMIN);
	RET("limit0.sigqueue.usr1", queue(SIGUSR1, 5));
	take("limit0.sigqueue.usr1.taken", SIGUSR1);
	pthread_barrier_wait(&done);
	pthread_join(th, NULL);

	/* Limit 3: three entries, then EAGAIN; kill's signal is merged. */
	limit(3);
	for (int i = 1; i <= 4; i++) {
		char name[32];
		snprintf(name, sizeof name, "limit3.sigqueue.%d", i);
		RET(name, queue(SIGRTMIN, i));
	}
	RET("limit3.kill", kill(getpid(), SIGRTMIN));
	RET("limit3.other_signal", queue(SIGRTMIN + 1, 9));
	for (int i = 1; i <= 4; i++) {
		char name[32];
		snprintf(name, sizeof name, "limit3.take.%d", i);
		take(name, SIGRTMIN);
	}
	RET("limit3.after_taking", queue(SIGRTMIN + 1, 10));
	take("limit3.rt1.a", SIGRTMIN + 1);
	take("limit3.rt1.b", SIGRTMIN + 1);

	/* Limit 1, per user: a child that holds one queued signal uses the
	 * user's count up, and gives it back when it exits. */
	limit(1);
	int p[2];
	pipe(p);
	pid_t child = fork();
	if (child == 0) {
		queue(SIGRTMIN, 1);
		write(p[1], "x", 1);
		pause();
		_exit(0);
	}
	char c;
	read(p[0], &c, 1);
	RET("peruser.while_child_holds", queue(SIGRTMIN, 2));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	RET("peruser.after_child_exit", queue(SIGRTMIN, 3));
	take("peruser.taken", SIGRTMIN);
	return 0;
}
