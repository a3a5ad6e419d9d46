/* needs: binfmt (Linux runs the exec'd riscv64 image through qemu-user).
 * /proc/PID read by one process while another replaces its image again
 * and again: every read finds the old image or the new one, and the
 * chain of execs ends with its status. (execve once swapped the address
 * space under a reader that held its lock, and the kernel died.) */
#include "../conform.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>

static char self[256];
static char text[65536];

int main(int argc, char **argv) {
	long n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return 1;
	self[n] = 0;
	if (argc > 2 && strcmp(argv[1], "again") == 0) {
		int left = atoi(argv[2]);
		if (left == 0)
			return 7;
		char next[16];
		snprintf(next, sizeof next, "%d", left - 1);
		char *args[] = {self, "again", next, NULL};
		execv(self, args);
		return 127;
	}
	pid_t pid = fork();
	if (pid == 0) {
		char *args[] = {self, "again", "100", NULL};
		execv(self, args);
		_exit(127);
	}
	const char *files[] = {"maps", "cmdline", "stat", "status", "exe"};
	char path[64];
	int reads = 0, status = 0;
	while (waitpid(pid, &status, WNOHANG) != pid) {
		snprintf(path, sizeof path, "/proc/%d/%s", pid, files[reads % 5]);
		int fd = open(path, O_RDONLY);
		if (fd >= 0) {
			while (read(fd, text, sizeof text) > 0)
				;
			close(fd);
		}
		reads++;
	}
	SHOW("chain.status", "%d", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	SHOW("reader.read", "%d", reads > 0);
	return 0;
}
