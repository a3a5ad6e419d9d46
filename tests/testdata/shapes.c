/* shapes: init for the synthetic attempts of tests/jiege_shapes_test.go,
 * the shapes real attempts of the benchmark took. It starts nginx (the
 * root filesystem's /init) and then, by its argument:
 *   stop N  kills every process once nginx's access log holds N
 *           requests: a server that stops answering in mid-verify;
 *   chatty  prints, every half second, a routine debug line of the shape
 *           one attempt's kernel printed on every fork (with sepc=), while
 *           nginx goes on serving;
 *   embedded first writes /usr/sbin/nginx from /nginx.x (its bytes
 *           XORed with 0xa5), so that the only whole nginx ELF in the
 *           files QEMU loads is the copy in the kernel image's section.
 * init itself never exits (that would end the machine). */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int requests_logged(void) {
	int fd = open("/var/log/nginx/access.log", O_RDONLY);
	if (fd < 0)
		return 0;
	char buf[4096];
	int lines = 0;
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		for (ssize_t i = 0; i < n; i++)
			lines += buf[i] == '\n';
	close(fd);
	return lines;
}

static void nap(long ms) {
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

/* unmask writes /usr/sbin/nginx from /nginx.x, undoing the XOR. */
static int unmask(void) {
	int in = open("/nginx.x", O_RDONLY);
	int out = open("/usr/sbin/nginx", O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (in < 0 || out < 0)
		return -1;
	unsigned char buf[65536];
	ssize_t n;
	while ((n = read(in, buf, sizeof buf)) > 0) {
		for (ssize_t i = 0; i < n; i++)
			buf[i] ^= 0xa5;
		if (write(out, buf, n) != n)
			return -1;
	}
	close(in);
	return n < 0 || close(out) < 0 ? -1 : 0;
}

int main(int argc, char **argv) {
	if (argc < 2)
		return 2;
	if (strcmp(argv[1], "embedded") == 0 && unmask() < 0) {
		perror("shapes: /nginx.x");
		return 1;
	}
	pid_t nginx = fork();
	if (nginx == 0) {
		char *args[] = {"/init", NULL};
		execv("/init", args);
		_exit(127);
	}
	if (strcmp(argv[1], "stop") == 0 && argc == 3) {
		int limit = atoi(argv[2]);
		while (requests_logged() < limit)
			nap(5);
		kill(-1, SIGKILL);
		printf("shapes: killed nginx after %d requests\n", limit);
		fflush(stdout);
	} else if (strcmp(argv[1], "chatty") == 0) {
		for (unsigned pid = 2;; pid++) {
			printf("[ERROR] [fork] pid=%u: trap_cx_addr=0xfffffffffffde000 sepc=0x4003d880 sp=0x3fffffff50\n", pid);
			fflush(stdout);
			nap(500);
			while (waitpid(-1, NULL, WNOHANG) > 0) {
			}
		}
	}
	for (;;) {
		if (wait(NULL) < 0)
			pause();
	}
}
