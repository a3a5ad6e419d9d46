/* musl: a program dynamically linked against Debian's riscv64 musl, run as
 * init by tests/musl_test.go and compared with the same binary under
 * qemu-riscv64. musl makes its own choices of system calls where glibc's
 * are tested elsewhere: its dynamic loader maps libc.so itself, mallocng
 * grows with brk and mmap, threads are clone with its own flags and TLS,
 * posix_spawn is clone(CLONE_VM|CLONE_VFORK), realpath reads
 * /proc/self/fd, and stdio buffers through readv/writev. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static __thread int tls_value = 7;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long counter;
static int ready;
static volatile sig_atomic_t got_signal;

static void *worker(void *arg) {
	long id = (long)arg;
	tls_value += (int)id;
	for (int i = 0; i < 10000; i++) {
		pthread_mutex_lock(&mu);
		counter++;
		pthread_mutex_unlock(&mu);
	}
	pthread_mutex_lock(&mu);
	while (!ready)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return (void *)(long)tls_value;
}

static void on_usr1(int sig) { got_signal = sig; }

static int by_value(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static int child(void) {
	printf("child: argv ok, env JIEGE=%s\n", getenv("JIEGE") ? getenv("JIEGE") : "(unset)");
	return 3;
}

int main(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "child") == 0)
		return child();
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("hello from musl\n");

	/* mallocng: many sizes, realloc across its size classes, and a large
	 * block that it maps on its own. */
	unsigned long sum = 0;
	char *blocks[200];
	for (int i = 0; i < 200; i++) {
		blocks[i] = malloc(16 + i * 97);
		memset(blocks[i], i, 16 + i * 97);
	}
	for (int i = 0; i < 200; i += 2) {
		blocks[i] = realloc(blocks[i], 5000 + i);
		sum += (unsigned char)blocks[i][3];
	}
	for (int i = 0; i < 200; i++)
		free(blocks[i]);
	char *big = malloc(8 << 20);
	big[(8 << 20) - 1] = 1;
	free(big);
	printf("malloc: sum %lu\n", sum);

	/* Threads: a mutex, a condition variable, TLS per thread. */
	pthread_t th[4];
	for (long i = 0; i < 4; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i) != 0)
			printf("pthread_create failed\n");
	pthread_mutex_lock(&mu);
	ready = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	long tls_sum = 0;
	for (int i = 0; i < 4; i++) {
		void *r;
		pthread_join(th[i], &r);
		tls_sum += (long)r;
	}
	printf("threads: counter %ld, tls %ld, main tls %d\n", counter, tls_sum, tls_value);

	/* posix_spawn of this program, with an environment of its own. */
	pid_t pid;
	char *cargs[] = {argv[0], "child", NULL};
	/* The children get the environment plus JIEGE (under qemu-riscv64
	 * that keeps QEMU_LD_PREFIX, where binfmt_misc's QEMU finds musl). */
	int nenv = 0;
	while (environ[nenv])
		nenv++;
	char **cenv = calloc(nenv + 2, sizeof *cenv);
	memcpy(cenv, environ, nenv * sizeof *cenv);
	cenv[nenv] = "JIEGE=spawned";
	int err = posix_spawn(&pid, argv[0], NULL, NULL, cargs, cenv);
	int status = 0;
	if (err == 0 && waitpid(pid, &status, 0) == pid)
		printf("posix_spawn: exited %d\n", WEXITSTATUS(status));
	else
		printf("posix_spawn: %s\n", strerror(err));

	/* fork, a pipe, dup2. */
	int p[2];
	pipe(p);
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		cenv[nenv] = "JIEGE=forked";
		execve(argv[0], cargs, cenv);
		_exit(127);
	}
	close(p[1]);
	char buf[256];
	ssize_t n = read(p[0], buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = 0;
	waitpid(pid, &status, 0);
	printf("fork+exec: read \"%.*s\", exited %d\n", (int)strcspn(buf, "\n"), buf, WEXITSTATUS(status));

	/* Signals through musl's sigaction and raise. */
	struct sigaction sa = {.sa_handler = on_usr1};
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	printf("signal: handler saw %d\n", got_signal);

	/* Files in the working directory: a listing, stat, realpath. */
	mkdir("musl.d", 0755);
	const char *names[] = {"c", "a", "b"};
	for (int i = 0; i < 3; i++) {
		char path[64];
		snprintf(path, sizeof path, "musl.d/%s", names[i]);
		FILE *f = fopen(path, "w");
		fprintf(f, "%s%s%s\n", names[i], names[i], names[i]);
		fclose(f);
	}
	DIR *d = opendir("musl.d");
	int count = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		count += e->d_name[0] != '.';
	closedir(d);
	struct stat st;
	stat("musl.d/b", &st);
	char real[4096];
	const char *rp = realpath("musl.d/../musl.d/./a", real);
	size_t rl = rp ? strlen(rp) : 0;
	printf("files: %d entries, b is %lld bytes, realpath %s\n", count, (long long)st.st_size,
	       !rp ? strerror(errno) : rp[0] == '/' && rl >= 9 && strcmp(rp + rl - 9, "/musl.d/a") == 0 ? "absolute, .../musl.d/a" : rp);

	/* mmap and mprotect; qsort; strtod; the monotonic clock. */
	int *m = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (int i = 0; i < 1000; i++)
		m[i] = (i * 7919) % 1000;
	qsort(m, 1000, sizeof *m, by_value);
	printf("mmap+qsort: %d %d %d, mprotect %d\n", m[0], m[500], m[999], mprotect(m, 1 << 16, PROT_READ));
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("strtod %.3f, clock %s\n", strtod("2.71828", NULL),
	       b.tv_sec > a.tv_sec || (b.tv_sec == a.tv_sec && b.tv_nsec >= a.tv_nsec) ? "monotonic" : "went back");

	/* The dynamic loader's symbol lookup. */
	size_t (*len)(const char *) = (size_t (*)(const char *))dlsym(RTLD_DEFAULT, "strlen");
	printf("dlsym: strlen(\"musl\") = %zu\n", len ? len("musl") : 0);
	return 0;
}
