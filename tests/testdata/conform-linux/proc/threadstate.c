/* The state letter of /proc/PID/stat and of each thread's
 * /proc/PID/task/TID/{stat,status}, as LTP's futex_wait03 waits for it: a
 * process's state is its main thread's, a thread blocked in a futex wait
 * is S while another thread of the process runs, and a main thread that
 * called pthread_exit leaves the process Z while the others run.
 * (qemu-riscv64 answers /proc/self/stat itself with R, so Linux is the
 * oracle.) */
#include "../../conform/conform.h"
#include <dirent.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

static int word;
static pid_t pid, main_tid;

static long futex(int op, int val) { return syscall(SYS_futex, &word, op, val, NULL, NULL, 0); }

/* field reads a whole /proc file. */
static void field(const char *path, char *buf, size_t size) {
	buf[0] = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	size_t n = fread(buf, 1, size - 1, f);
	buf[n] = 0;
	fclose(f);
}

/* state is the letter after the command's ")" in a stat file. */
static char state(const char *path) {
	char buf[1024];
	field(path, buf, sizeof buf);
	char *p = strrchr(buf, ')');
	return p && p[1] ? p[2] : '?';
}

/* awaited polls path's state for up to five seconds until it is want. */
static char awaited(const char *path, char want) {
	char s = '?';
	for (int i = 0; i < 500 && (s = state(path)) != want; i++)
		usleep(10000);
	return s;
}

static const char *task(pid_t tid, const char *file) {
	static char path[4][64];
	static int next;
	char *p = path[next++ % 4];
	snprintf(p, 64, "/proc/%d/task/%d/%s", pid, tid, file);
	return p;
}

/* statusLine returns the value of a status file's line named key. */
static const char *statusLine(const char *path, const char *key) {
	static char buf[2048];
	field(path, buf, sizeof buf);
	char *p = strstr(buf, key);
	if (!p)
		return "(none)";
	p += strlen(key);
	while (*p == '\t' || *p == ' ')
		p++;
	*strchrnul(p, '\n') = 0;
	return p;
}

static void *reader(void *arg) {
	(void)arg;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	SHOW("process while main waits in futex", "%c", awaited(path, 'S'));
	pid_t self = gettid();
	SHOW("main thread's task stat", "%c", state(task(main_tid, "stat")));
	SHOW("own task stat", "%c", state(task(self, "stat")));
	char buf[1024];
	field(task(self, "stat"), buf, sizeof buf);
	SHOW("own task stat pid field is the tid", "%d", atoi(buf) == self);
	SHOW("own task status State", "%s", statusLine(task(self, "status"), "State:"));
	SHOW("own task status Pid is the tid", "%d", atoi(statusLine(task(self, "status"), "\nPid:")) == self);
	SHOW("own task status Tgid is the pid", "%d", atoi(statusLine(task(self, "status"), "Tgid:")) == pid);
	SHOW("main task status State", "%s", statusLine(task(main_tid, "status"), "State:"));
	SHOW("process status State", "%s", statusLine("/proc/self/status", "State:"));
	DIR *d = opendir("/proc/self/task");
	int n = 0, found = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		n++;
		found += atoi(e->d_name) == self || atoi(e->d_name) == main_tid;
	}
	if (d)
		closedir(d);
	SHOW("task entries", "%d %d", n, found);
	struct stat st;
	RET("task dir of another process's thread", stat(task(99999, "stat"), &st));
	__atomic_store_n(&word, 1, __ATOMIC_SEQ_CST);
	RET("futex wake", futex(FUTEX_WAKE_PRIVATE, 1));
	return NULL;
}

static volatile int stop;

static void *sleeper(void *arg) {
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_SEQ_CST))
		futex(FUTEX_WAIT_PRIVATE, 0);
	return NULL;
}

static void *survivor(void *arg) {
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	SHOW("process after main's pthread_exit", "%c", awaited(path, 'Z'));
	SHOW("survivor's own task", "%c", state(task(gettid(), "stat")));
	exit(0);
	return arg;
}

int main(void) {
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	pid = getpid();
	main_tid = gettid();
	pthread_t t;
	pthread_create(&t, NULL, reader, NULL);
	while (!__atomic_load_n(&word, __ATOMIC_SEQ_CST))
		futex(FUTEX_WAIT_PRIVATE, 0);
	pthread_join(t, NULL);

	/* The main thread runs while another sleeps in a futex wait. */
	word = 0;
	pthread_create(&t, NULL, sleeper, NULL);
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, pid);
	pid_t sleeper_tid = 0;
	DIR *d = opendir("/proc/self/task");
	for (struct dirent *e; d && (e = readdir(d));)
		if (e->d_name[0] != '.' && atoi(e->d_name) != main_tid)
			sleeper_tid = atoi(e->d_name);
	closedir(d);
	SHOW("sleeping thread's task", "%c", awaited(task(sleeper_tid, "stat"), 'S'));
	SHOW("process while main runs", "%c", state("/proc/self/stat"));
	stop = 1;
	word = 1;
	futex(FUTEX_WAKE_PRIVATE, 1);
	pthread_join(t, NULL);

	pthread_create(&t, NULL, survivor, NULL);
	pthread_exit(NULL);
}
