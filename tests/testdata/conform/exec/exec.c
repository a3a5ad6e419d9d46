/* needs: binfmt (Linux runs the exec'd riscv64 image through qemu-user).
 * execve: arguments and environment, close-on-exec, #! scripts, errors
 * that keep the old image, the exit status seen by the parent. */
#include "../conform.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char self[256];

static void child_mode(int argc, char **argv) {
	printf("child argc: %d\n", argc);
	for (int i = 1; i < argc; i++)
		printf("child argv[%d]: %s\n", i, argv[i]);
	printf("child env: %s\n", getenv("CONFORM") ? getenv("CONFORM") : "(none)");
	printf("child fd3: %s\n", fcntl(3, F_GETFD) < 0 ? strerrorname_np(errno) : "open");
	printf("child fd4: %s\n", fcntl(4, F_GETFD) < 0 ? strerrorname_np(errno) : "open");
	fflush(stdout);
	exit(argc);
}

static int run(char *const argv[], char *const envp[]) {
	pid_t pid = fork();
	if (pid == 0) {
		execve(argv[0], argv, envp);
		printf("execve failed: %s\n", strerrorname_np(errno));
		fflush(stdout);
		_exit(127);
	}
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* copy_self writes a copy of this program to path with the 8-byte field
 * at off set to v. */
static void copy_self(const char *path, long off, unsigned long long v) {
	int in = open(self, O_RDONLY), out = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0755);
	static char buf[1 << 16];
	long n, at = 0;
	while ((n = read(in, buf, sizeof buf)) > 0) {
		if (off >= at && off + 8 <= at + n)
			memcpy(buf + (off - at), &v, 8);
		write(out, buf, n);
		at += n;
	}
	close(in);
	close(out);
}

int main(int argc, char **argv) {
	if (argc > 1 && strncmp(argv[1], "child", 5) == 0)
		child_mode(argc, argv);
	long n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return 1;
	self[n] = 0;
	int keep = open("kept", O_CREAT | O_RDWR, 0644); /* fd 3 */
	int gone = open("gone", O_CREAT | O_RDWR | O_CLOEXEC, 0644); /* fd 4 */
	SHOW("fds", "%d %d", keep, gone);

	char *args[] = {self, "child", "a b", "", "last", NULL};
	char *env[] = {"CONFORM=yes", NULL};
	SHOW("exec.status", "%d", run(args, env));

	char *noargs[] = {self, "child", NULL};
	SHOW("exec.noenv.status", "%d", run(noargs, NULL));

	/* A script whose interpreter is this program. */
	FILE *s = fopen("script", "w");
	fprintf(s, "#!%s child  one arg\necho not run\n", self);
	fclose(s);
	chmod("script", 0755);
	char *sargs[] = {"./script", "x", NULL};
	SHOW("script.status", "%d", run(sargs, env));

	/* Section headers past the end of the file: a loader reads only the
	 * program headers (e_shoff is at 40), and the program runs. */
	copy_self("noshdrs", 40, 1ULL << 40);
	char *nsargs[] = {"./noshdrs", "child", NULL};
	SHOW("exec.badshoff.status", "%d", run(nsargs, env));

	/* Failures keep the old image and report the errno. */
	char *missing[] = {"./missing", NULL};
	RET("execve.missing", execve("./missing", missing, NULL));
	s = fopen("noexec", "w");
	fprintf(s, "data\n");
	fclose(s);
	char *noexec[] = {"./noexec", NULL};
	RET("execve.noexec", execve("./noexec", noexec, NULL));
	chmod("noexec", 0755);
	RET("execve.garbage", execve("./noexec", noexec, NULL));
	RET("execve.dir", execve(".", noexec, NULL));
	RET("execve.badptr", execve((char *)BAD, noexec, NULL));
	RET("execve.badargv", execve(self, (char **)BAD, NULL));
	s = fopen("loop", "w");
	fprintf(s, "#!./loop\n");
	fclose(s);
	chmod("loop", 0755);
	char *loop[] = {"./loop", NULL};
	RET("execve.loop", execve("./loop", loop, NULL));
	static char huge[200000];
	memset(huge, 'h', sizeof huge - 1);
	char *big[] = {self, huge, NULL};
	RET("execve.e2big", execve(self, big, NULL));
	SHOW("still.running", "%s", "yes");
	return 0;
}
