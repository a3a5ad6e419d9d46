/* needs: binfmt (Linux runs the exec'd riscv64 image through qemu-user).
 * execve from a thread other than the main one, while other threads
 * spin, sleep in a futex wait and block in a read: every other thread
 * ends (Linux's de_thread), the new image runs as the only thread with
 * the process's id as its thread id, and its parent sees one process. */
#include "../conform.h"
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static char self[256];
static int pipefd[2];
static volatile int spinning;

static void *spin(void *arg) {
	(void)arg;
	for (;;)
		spinning = 1;
	return NULL;
}

static void *reader(void *arg) {
	(void)arg;
	char c;
	read(pipefd[0], &c, 1);
	return NULL;
}

static void *sleeper(void *arg) {
	(void)arg;
	int word = 0;
	syscall(SYS_futex, &word, 0 /* FUTEX_WAIT */, 0, NULL, NULL, 0);
	return NULL;
}

static void *execer(void *arg) {
	(void)arg;
	while (!spinning)
		;
	usleep(50000);
	char pid[32];
	snprintf(pid, sizeof pid, "%d", getpid());
	char *args[] = {self, "after", pid, NULL};
	execv(self, args);
	printf("execv failed: %s\n", strerrorname_np(errno));
	fflush(stdout);
	exit(1);
}

int main(int argc, char **argv) {
	if (argc == 3 && strcmp(argv[1], "after") == 0) {
		SHOW("after exec: same pid", "%d", getpid() == atoi(argv[2]));
		SHOW("after exec: tid is pid", "%d", (int)syscall(SYS_gettid) == getpid());
		exit(7);
	}
	long n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n < 0)
		return 1;
	self[n] = 0;
	pid_t child = fork();
	if (child == 0) {
		pipe(pipefd);
		pthread_t th;
		pthread_create(&th, NULL, spin, NULL);
		pthread_create(&th, NULL, reader, NULL);
		pthread_create(&th, NULL, sleeper, NULL);
		pthread_create(&th, NULL, execer, NULL);
		for (;;)
			pause();
	}
	int status;
	RET("wait", waitpid(child, &status, 0) == child);
	SHOW("exit status", "%d", WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status));
	RET("no other child", wait(NULL));
	return 0;
}
