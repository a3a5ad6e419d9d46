/* nginxctl: /init for tests/nginx_test.go TestNginxWorkers. It runs
 * Debian's nginx with worker_processes 4 as Linux runs it and drives it
 * through a reload, a killed worker and a graceful quit. The host test cues
 * each phase with a request for /cue/NAME, which this program finds in
 * nginx's access log; every phase ends with a "nginxctl: " line on the
 * console that names the pids the host then checks responses against.
 * Every wait has a deadline; a failure prints "nginxctl: FAIL" and exits 1. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NGINX "/usr/sbin/nginx"
#define CONF "/etc/nginx/workers.conf"
#define ACCESS_LOG "/var/log/nginx/access.log"
#define WORKERS 4
#define MAXPIDS 64
#define WAIT_SECONDS 120

static pid_t master, signaller;
static int master_status = -1, signaller_status = -1; /* wait statuses once reaped */

static void say(const char *fmt, ...) {
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
	va_end(ap);
	buf[n++] = '\n';
	write(1, buf, n);
}

static void fail(const char *what) {
	say("nginxctl: FAIL: %s (errno %d)", what, errno);
	if (master > 0 && master_status < 0)
		kill(master, SIGKILL);
	exit(1);
}

/* writeconf writes the configuration of one phase: its name comes back in
 * every response's X-Phase header and as the body of /phase/NAME, a
 * location the other phase does not have. X-Worker is the serving
 * process's pid. */
static void writeconf(const char *phase) {
	FILE *f = fopen(CONF, "w");
	if (!f)
		fail("open " CONF);
	fprintf(f,
		"user www-data;\n"
		"worker_processes %d;\n"
		"master_process on;\n"
		"daemon off;\n"
		"pid /run/nginx.pid;\n"
		"error_log stderr notice;\n"
		"events { worker_connections 256; }\n"
		"http {\n"
		"    include /etc/nginx/mime.types;\n"
		"    default_type application/octet-stream;\n"
		"    sendfile on;\n"
		"    access_log " ACCESS_LOG ";\n"
		"    server {\n"
		"        listen 80 default_server;\n"
		"        root /var/www/html;\n"
		"        add_header X-Phase %s always;\n"
		"        add_header X-Worker $pid always;\n"
		"        location = /phase/%s { return 200 \"%s\\n\"; }\n"
		"    }\n"
		"}\n",
		WORKERS, phase, phase, phase);
	if (fclose(f) != 0)
		fail("write " CONF);
}

/* reap collects every exited child (init inherits orphans); the master's
 * and the signaller's statuses are kept. */
static void reap(void) {
	int st;
	pid_t p;
	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		if (p == master)
			master_status = st;
		if (p == signaller)
			signaller_status = st;
	}
}

static void pause_briefly(void) {
	struct timespec ts = {0, 100 * 1000 * 1000};
	nanosleep(&ts, NULL);
	reap();
}

/* children lists the live (not zombie) children of parent from /proc's
 * stat files, in pid order. */
static int children(pid_t parent, pid_t *out) {
	int n = 0;
	DIR *d = opendir("/proc");
	if (!d)
		fail("opendir /proc");
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		char path[300], buf[512];
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		int fd = open(path, O_RDONLY);
		if (fd < 0)
			continue; /* gone meanwhile */
		ssize_t len = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = 0;
		char *rp = strrchr(buf, ')');
		char state;
		int ppid;
		if (!rp || sscanf(rp + 1, " %c %d", &state, &ppid) != 2)
			fail("parse /proc/PID/stat");
		if (ppid == parent && state != 'Z' && n < MAXPIDS)
			out[n++] = atoi(e->d_name);
	}
	closedir(d);
	for (int i = 1; i < n; i++) /* insertion sort: readdir's order is arbitrary */
		for (int j = i; j > 0 && out[j - 1] > out[j]; j--) {
			pid_t t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

static int exists(pid_t pid) {
	char path[64];
	snprintf(path, sizeof path, "/proc/%d", pid);
	struct stat st;
	return stat(path, &st) == 0;
}

static int contains(const pid_t *set, int n, pid_t pid) {
	for (int i = 0; i < n; i++)
		if (set[i] == pid)
			return 1;
	return 0;
}

static void check_master(void) {
	if (master_status >= 0)
		fail("the nginx master exited early");
}

/* newworkers waits until the master has WORKERS live children that are
 * not in old, and returns them in out. */
static void newworkers(const pid_t *old, int nold, pid_t *out) {
	for (int tries = 0; tries < WAIT_SECONDS * 10; tries++) {
		pid_t all[MAXPIDS];
		int n = children(master, all), fresh = 0;
		for (int i = 0; i < n; i++)
			if (!contains(old, nold, all[i]) && fresh < WORKERS)
				out[fresh++] = all[i];
		if (fresh == WORKERS)
			return;
		check_master();
		pause_briefly();
	}
	fail("the master did not start its workers");
}

/* gone waits until none of pids exists in /proc any more. */
static void gone(const pid_t *pids, int n) {
	for (int tries = 0; tries < WAIT_SECONDS * 10; tries++) {
		int left = 0;
		for (int i = 0; i < n; i++)
			left += exists(pids[i]);
		if (!left)
			return;
		pause_briefly();
	}
	fail("old processes did not exit");
}

/* cue waits for a request for /cue/NAME in the access log. */
static void cue(const char *name) {
	char want[64];
	snprintf(want, sizeof want, "\"GET /cue/%s ", name);
	say("nginxctl: waiting for /cue/%s", name);
	for (int tries = 0; tries < WAIT_SECONDS * 10 * 5; tries++) {
		static char log[1 << 20];
		int fd = open(ACCESS_LOG, O_RDONLY);
		if (fd >= 0) {
			ssize_t len = read(fd, log, sizeof log - 1);
			close(fd);
			if (len > 0) {
				log[len] = 0;
				if (strstr(log, want))
					return;
			}
		}
		check_master();
		pause_briefly();
	}
	fail("no cue from the host");
}

/* signal_nginx runs `nginx -s SIGNAL`, which reads the master's pid from
 * the pid file and signals it, and expects it to exit 0. */
static void signal_nginx(const char *sig) {
	signaller_status = -1;
	signaller = fork();
	if (signaller < 0)
		fail("fork");
	if (signaller == 0) {
		execl(NGINX, "nginx", "-c", CONF, "-s", sig, (char *)NULL);
		_exit(127);
	}
	for (int tries = 0; signaller_status < 0; tries++) {
		if (tries == WAIT_SECONDS * 10)
			fail("nginx -s did not exit");
		pause_briefly();
	}
	if (!WIFEXITED(signaller_status) || WEXITSTATUS(signaller_status) != 0) {
		say("nginxctl: nginx -s %s: wait status %#x", sig, signaller_status);
		fail("nginx -s");
	}
	say("nginxctl: nginx -s %s exited 0", sig);
}

static void list(char *buf, size_t size, const pid_t *pids, int n) {
	buf[0] = 0;
	for (int i = 0; i < n; i++)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%d", i ? " " : "", pids[i]);
}

/* uid reads the real uid from /proc/PID/status. */
static int uid(pid_t pid) {
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		fail("open /proc/PID/status");
	ssize_t len = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[len > 0 ? len : 0] = 0;
	char *u = strstr(buf, "\nUid:");
	if (!u)
		fail("no Uid in /proc/PID/status");
	return atoi(u + 5);
}

int main(void) {
	char names[256];
	pid_t workers[WORKERS], old[WORKERS];

	writeconf("one");
	master = fork();
	if (master < 0)
		fail("fork");
	if (master == 0) {
		execl(NGINX, "nginx", "-c", CONF, (char *)NULL);
		_exit(127);
	}
	newworkers(NULL, 0, workers);
	list(names, sizeof names, workers, WORKERS);
	/* A worker drops root early in its initialisation, which may not have
	 * run yet when it first appears: give it up to 5 s. */
	int wuid = uid(workers[0]);
	for (int i = 0; i < 50 && wuid == 0; i++) {
		struct timespec ts = {0, 100 * 1000 * 1000};
		nanosleep(&ts, NULL);
		wuid = uid(workers[0]);
	}
	say("nginxctl: master %d workers %s uid %d", master, names, wuid);

	/* Reload: new workers read the new configuration; the old ones finish
	 * what they serve (the host holds a download open) and exit. */
	cue("reload");
	memcpy(old, workers, sizeof old);
	writeconf("two");
	signal_nginx("reload");
	newworkers(old, WORKERS, workers);
	list(names, sizeof names, workers, WORKERS);
	pid_t serving[WORKERS];
	int nserving = 0;
	for (int i = 0; i < WORKERS; i++)
		if (exists(old[i]))
			serving[nserving++] = old[i];
	char still[256];
	list(still, sizeof still, serving, nserving);
	say("nginxctl: reloaded: workers %s; old workers still running: %s", names, still);
	gone(old, WORKERS);
	say("nginxctl: old workers gone");

	/* A worker killed with SIGKILL: the master starts another. */
	cue("kill");
	pid_t victim = workers[0];
	if (kill(victim, SIGKILL) != 0)
		fail("kill");
	gone(&victim, 1);
	memcpy(old, workers, sizeof old);
	for (int tries = 0;; tries++) {
		pid_t all[MAXPIDS];
		int n = children(master, all);
		if (n == WORKERS) {
			memcpy(workers, all, sizeof workers);
			break;
		}
		if (tries == WAIT_SECONDS * 10)
			fail("no worker respawned");
		check_master();
		pause_briefly();
	}
	list(names, sizeof names, workers, WORKERS);
	say("nginxctl: killed %d: workers %s", victim, names);

	/* Graceful quit: the master ends its workers and exits 0. */
	cue("quit");
	signal_nginx("quit");
	for (int tries = 0; master_status < 0; tries++) {
		if (tries == WAIT_SECONDS * 10)
			fail("the master did not exit");
		pause_briefly();
	}
	gone(workers, WORKERS);
	if (!WIFEXITED(master_status) || WEXITSTATUS(master_status) != 0) {
		say("nginxctl: master wait status %#x", master_status);
		fail("the master did not exit 0");
	}
	pid_t left[MAXPIDS];
	if (children(1, left) != 0)
		fail("processes left after quit");
	say("nginxctl: master exited 0");
	return 0;
}
