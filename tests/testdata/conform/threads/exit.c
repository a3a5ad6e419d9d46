/* How threads end: exit(2) ends one thread, exit_group all of them (even
 * one spinning in user mode), from the main thread or another one; a fatal
 * signal ends the group; the process ends with its last thread. */
#include "../conform.h"
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static void *spin(void *arg) {
	for (;;)
		__asm__ volatile("" ::: "memory");
	return NULL;
}

static void *block(void *arg) {
	static int never;
	for (;;)
		syscall(SYS_futex, &never, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	return NULL;
}

static void sleep_forever(void) {
	for (;;)
		sleep(1000);
}

static void *exit_group_4(void *arg) {
	exit(4);
}

static void *crash(void *arg) {
	*(volatile int *)0 = 1;
	return NULL;
}

static void *last(void *arg) {
	usleep(50 * 1000);
	printf("last thread still runs after main's exit\n");
	fflush(stdout);
	return NULL;
}

static void report(const char *name, pid_t pid) {
	int st = 0;
	waitpid(pid, &st, 0);
	if (WIFSIGNALED(st))
		SHOW(name, "signal %s", sigabbrev_np(WTERMSIG(st)));
	else
		SHOW(name, "exit %d", WEXITSTATUS(st));
}

int main(void) {
	pthread_t th;
	pid_t pid = fork();
	if (pid == 0) {
		pthread_create(&th, NULL, spin, NULL);
		pthread_create(&th, NULL, block, NULL);
		pthread_create(&th, NULL, (void *(*)(void *))sleep_forever, NULL);
		usleep(20 * 1000);
		_exit(5); /* exit_group */
	}
	report("main.exit_group.ends.spinning.blocked.sleeping", pid);

	pid = fork();
	if (pid == 0) {
		pthread_create(&th, NULL, spin, NULL);
		pthread_create(&th, NULL, exit_group_4, NULL);
		sleep_forever();
	}
	report("thread.exit_group", pid);

	pid = fork();
	if (pid == 0) {
		pthread_create(&th, NULL, block, NULL);
		pthread_create(&th, NULL, crash, NULL);
		sleep_forever();
	}
	report("thread.sigsegv.ends.group", pid);

	pid = fork();
	if (pid == 0) {
		pthread_create(&th, NULL, last, NULL);
		pthread_exit(NULL); /* exit(2) of the main thread only */
	}
	report("main.pthread_exit.then.last.thread", pid);

	pid = fork();
	if (pid == 0) {
		/* The main thread leaves with exit(2) and no other thread: the
		 * process ends with it. */
		syscall(SYS_exit, 6);
	}
	report("only.thread.exit", pid);
	return 0;
}
