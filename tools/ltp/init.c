// ltp-init: the guest's first program for an LTP run (built static by
// jiege ltp). It runs the entries of /opt/ltp/jiege-list, one a line
// ("name<TAB>program args..."), from the index in argv[1] (0 without it),
// each in a process group of its own with LTP's environment and a time
// limit, and prints on the console, tab-separated:
//
//   LTP-START  index name
//   LTP-RESULT index name status timed-out first-TFAIL/TBROK-line
//
// status is the exit code, or 128 + the signal that ended the test. The
// host restarts the guest after the last LTP-START when the kernel dies,
// and after LTP-DONE powers off. It mounts what Linux's initramfs lacks
// (our kernel mounts those at boot already).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LIST "/opt/ltp/jiege-list"
#define TEST_SECONDS 60
#define MAX_ARGS 32

static char *env[] = {
	"PATH=/opt/ltp/testcases/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"TMPDIR=/tmp",
	"LTPROOT=/opt/ltp",
	"LTP_TIMEOUT_MUL=10",
	"LTP_RUNTIME_MUL=0.1",
	"HOME=/root",
	NULL,
};

static void mount_missing(const char *probe, const char *type, const char *dir)
{
	if (access(probe, F_OK) == 0)
		return;
	mkdir(dir, 0755);
	if (mount(type, dir, type, 0, NULL) != 0)
		dprintf(1, "ltp-init: mount %s on %s: %s\n", type, dir, strerror(errno));
}

// loopback_up brings lo up: Linux leaves that to init, and LTP's network
// tests connect to 127.0.0.1.
static void loopback_up(void)
{
	struct ifreq ifr = {0};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	strcpy(ifr.ifr_name, "lo");
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) != 0)
		goto fail;
	if (!(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr) != 0)
			goto fail;
	}
	close(fd);
	return;
fail:
	dprintf(1, "ltp-init: bringing lo up: %s\n", strerror(errno));
	if (fd >= 0)
		close(fd);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

// scan keeps the first output line that reports TFAIL or TBROK.
struct scan {
	char line[512];
	size_t len;
	char first[512];
};

static void scan_bytes(struct scan *s, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (c == '\n') {
			s->line[s->len] = 0;
			if (!s->first[0] && (strstr(s->line, "TFAIL") || strstr(s->line, "TBROK")))
				memcpy(s->first, s->line, s->len + 1);
			s->len = 0;
			continue;
		}
		if (c == '\t' || (unsigned char)c < ' ')
			c = ' ';
		if (s->len < sizeof(s->line) - 1)
			s->line[s->len++] = c;
	}
}

static void run(int index, char *name, char **argv)
{
	struct scan s = {0};
	int timed_out = 0, status = 0, out[2];

	dprintf(1, "LTP-START\t%d\t%s\n", index, name);
	if (pipe2(out, O_CLOEXEC) != 0) {
		dprintf(1, "ltp-init: pipe: %s\n", strerror(errno));
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		int null = open("/dev/null", O_RDONLY);
		dup2(null, 0);
		dup2(out[1], 1);
		dup2(out[1], 2);
		chdir("/tmp");
		char path[256];
		snprintf(path, sizeof path, "/opt/ltp/testcases/bin/%s", argv[0]);
		execve(path, argv, env);
		dprintf(2, "TBROK ltp-init: exec %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	close(out[1]);
	if (pid < 0) {
		dprintf(1, "ltp-init: fork: %s\n", strerror(errno));
		close(out[0]);
		return;
	}
	setpgid(pid, pid);
	double deadline = now() + TEST_SECONDS, drain_until = 0;
	int exited = 0, eof = 0;
	char buf[4096];
	for (;;) {
		if (!eof) {
			struct pollfd pfd = {.fd = out[0], .events = POLLIN};
			if (poll(&pfd, 1, 200) > 0) {
				ssize_t n = read(out[0], buf, sizeof buf);
				if (n > 0)
					scan_bytes(&s, buf, n);
				else if (n == 0 || errno != EINTR)
					eof = 1;
			}
		} else {
			usleep(50000);
		}
		if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
			exited = 1;
			// Its descendants may keep the pipe open: give them a moment.
			drain_until = now() + 2;
		}
		if (exited && (eof || now() > drain_until))
			break;
		if (!exited && now() > deadline) {
			timed_out = 1;
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
	}
	close(out[0]);
	kill(-pid, SIGKILL);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	if (s.len) {
		scan_bytes(&s, "\n", 1);
	}
	int code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
	dprintf(1, "LTP-RESULT\t%d\t%s\t%d\t%d\t%s\n", index, name, code, timed_out, s.first);
}

int main(int argc, char **argv)
{
	if (fcntl(1, F_GETFD) < 0) {
		mount_missing("/dev/console", "devtmpfs", "/dev");
		int fd = open("/dev/console", O_RDWR);
		dup2(fd, 1);
		dup2(fd, 2);
	}
	mount_missing("/proc/self", "proc", "/proc");
	mount_missing("/sys/kernel", "sysfs", "/sys");
	mount_missing("/dev/null", "devtmpfs", "/dev");
	mkdir("/dev/shm", 01777);
	mkdir("/tmp", 01777);
	chmod("/tmp", 01777);
	signal(SIGPIPE, SIG_IGN);
	loopback_up();

	int start = argc > 1 ? atoi(argv[1]) : 0;
	FILE *list = fopen(LIST, "r");
	if (!list) {
		dprintf(1, "ltp-init: %s: %s\n", LIST, strerror(errno));
		return 1;
	}
	char line[1024];
	for (int index = 0; fgets(line, sizeof line, list); index++) {
		if (index < start)
			continue;
		line[strcspn(line, "\n")] = 0;
		char *tab = strchr(line, '\t');
		if (!tab)
			continue;
		*tab = 0;
		char *args[MAX_ARGS + 1];
		int n = 0;
		for (char *w = strtok(tab + 1, " "); w && n < MAX_ARGS; w = strtok(NULL, " "))
			args[n++] = w;
		args[n] = NULL;
		if (n > 0)
			run(index, line, args);
	}
	dprintf(1, "LTP-DONE\n");
	sync();
	reboot(RB_POWER_OFF);
	return 0;
}
