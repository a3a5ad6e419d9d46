/* /proc and /sys as programs read them: each line checks that what a file
 * says agrees with what the process knows of itself (its pid, parent,
 * descriptors, arguments, stack), so it holds on any Linux. */
#include "../conform.h"
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

static char text[65536];

static long slurp(const char *path) {
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	long n = 0, k;
	while ((k = read(fd, text + n, sizeof text - 1 - n)) > 0)
		n += k;
	close(fd);
	text[n] = 0;
	return n;
}

int main(int argc, char **argv) {
	(void)argc;
	char buf[512], want[400];
	long n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = 0;
	struct stat a, b;
	SHOW("exe.is.argv0", "%d", n > 0 && stat(buf, &a) == 0 && stat(argv[0], &b) == 0 && a.st_ino == b.st_ino);

	n = slurp("/proc/self/stat");
	int pid, ppid;
	char state;
	SHOW("stat.parses", "%d", n > 0 && sscanf(text, "%d (%*[^)]) %c %d", &pid, &state, &ppid) == 3);
	SHOW("stat.pid", "%d", pid == getpid());
	SHOW("stat.ppid", "%d", ppid == getppid());
	(void)state; /* qemu-user's emulated stat file has none */
	int fields = 2;
	for (char *p = strrchr(text, ')'); *p; p++)
		fields += *p == ' ';
	SHOW("stat.fields.at.least.44", "%d", fields >= 44);

	n = slurp("/proc/self/status");
	snprintf(want, sizeof want, "\nPid:\t%d\n", getpid());
	SHOW("status.pid", "%d", n > 0 && strstr(text, want) != NULL);
	snprintf(want, sizeof want, "\nPPid:\t%d\n", getppid());
	SHOW("status.ppid", "%d", strstr(text, want) != NULL);
	SHOW("status.name", "%d", strncmp(text, "Name:\t", 6) == 0);
	snprintf(want, sizeof want, "\nUid:\t%d\t%d\t", getuid(), geteuid());
	SHOW("status.uid", "%d", strstr(text, want) != NULL);

	n = slurp("/proc/self/cmdline");
	SHOW("cmdline.argv0", "%d", n > 0 && strcmp(text, argv[0]) == 0);
	SHOW("cmdline.length", "%d", n == (long)strlen(argv[0]) + 1);

	int fd = open("plain", O_CREAT | O_RDWR, 0644);
	snprintf(want, sizeof want, "/proc/self/fd/%d", fd);
	n = readlink(want, buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = 0;
	char cwd[256];
	getcwd(cwd, sizeof cwd);
	snprintf(want, sizeof want, "%s/plain", strcmp(cwd, "/") == 0 ? "" : cwd);
	SHOW("fd.link.names.file", "%d", strcmp(buf, want) == 0);
	int p[2];
	pipe(p);
	snprintf(want, sizeof want, "/proc/self/fd/%d", p[0]);
	n = readlink(want, buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = 0;
	SHOW("fd.link.pipe", "%d", strncmp(buf, "pipe:[", 6) == 0);
	DIR *d = opendir("/proc/self/fd");
	int seen = 0;
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL) {
		int k = atoi(de->d_name);
		if (de->d_name[0] != '.' && (k == 0 || k == 1 || k == 2 || k == p[1]))
			seen++;
	}
	if (d)
		closedir(d);
	SHOW("fd.dir.lists", "%d", seen);

	n = slurp("/proc/self/maps");
	SHOW("maps.stack", "%d", n > 0 && strstr(text, "[stack]") != NULL);
	unsigned long lo, hi;
	char perms[8];
	int stack_in_map = 0;
	unsigned long here = (unsigned long)&lo;
	for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 && lo <= here && here < hi)
			stack_in_map = perms[0] == 'r' && perms[1] == 'w';
	SHOW("maps.covers.stack.rw", "%d", stack_in_map);

	snprintf(want, sizeof want, "/proc/%d", getpid());
	SHOW("proc.pid.dir", "%d", stat(want, &a) == 0 && S_ISDIR(a.st_mode));
	n = readlink("/proc/self", buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = 0;
	SHOW("proc.self.link", "%d", atoi(buf) == getpid());
	n = slurp("/proc/meminfo");
	SHOW("meminfo.total", "%d", n > 0 && strncmp(text, "MemTotal:", 9) == 0);
	n = slurp("/proc/uptime");
	double up = -1;
	SHOW("uptime", "%d", n > 0 && sscanf(text, "%lf", &up) == 1 && up > 0);
	n = slurp("/proc/cpuinfo");
	SHOW("cpuinfo.processor", "%d", n > 0 && strncmp(text, "processor", 9) == 0);
	n = slurp("/proc/stat");
	SHOW("stat.cpu", "%d", n > 0 && strncmp(text, "cpu ", 4) == 0);
	n = slurp("/sys/devices/system/cpu/online");
	SHOW("cpu.online", "%d", n > 0 && text[0] == '0');
	SHOW("sysconf.cpus", "%d", sysconf(_SC_NPROCESSORS_ONLN) >= 1);
	RET("open.missing", open("/proc/self/nope", O_RDONLY));
	RET("write.proc", open("/proc/self/stat", O_WRONLY) >= 0 ? 0 : -1);
	return 0;
}
