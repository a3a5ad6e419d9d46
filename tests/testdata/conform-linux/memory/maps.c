/* /proc/PID/maps for mappings of files: the offset, the device and inode
 * stat gives, the path in the column Linux pads to, " (deleted)" once
 * unlinked, 's' for shared; and PROCMAP_QUERY (LTP's ioctl10): an exact
 * match, ENOENT below a mapping, COVERING_OR_NEXT_VMA, the permission
 * and file filters, the name, and the errors of bad queries. */
#include "../../conform/conform.h"
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

struct procmap_query {
	uint64_t size, query_flags, query_addr, vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
	uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};
#define PROCMAP_QUERY _IOWR('f', 17, struct procmap_query)
#define Q_READABLE 0x01
#define Q_WRITABLE 0x02
#define Q_EXECUTABLE 0x04
#define Q_SHARED 0x08
#define Q_COVERING_OR_NEXT 0x10
#define Q_FILE_BACKED 0x20

/* show_line prints what /proc/self/maps says of the mapping at addr:
 * its fields but the addresses, and the column its name starts at. */
static void show_line(const char *name, void *addr, const struct stat *st) {
	char want[32], line[512];
	snprintf(want, sizeof want, "%lx-", (unsigned long)addr);
	FILE *f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof line, f)) {
		if (strncmp(line, want, strlen(want)) != 0)
			continue;
		char perms[8], dev[16], path[256] = "";
		unsigned long off, ino;
		sscanf(line, "%*s %7s %lx %15s %lu %255[^\n]", perms, &off, dev, &ino, path);
		char stdev[16];
		snprintf(stdev, sizeof stdev, "%02x:%02x", major(st->st_dev), minor(st->st_dev));
		char *slash = strchr(line, '/');
		SHOW(name, "%s %lx dev=%d ino=%d column=%ld %s", perms, off, strcmp(dev, stdev) == 0,
		     ino == st->st_ino, slash ? (long)(slash - line) : -1L, path);
		fclose(f);
		return;
	}
	SHOW(name, "%s", "none");
	if (f)
		fclose(f);
}

static int mapsfd;

static void query(const char *name, uint64_t addr, uint64_t flags, const struct stat *st) {
	struct procmap_query q = {.size = sizeof q, .query_flags = flags, .query_addr = addr};
	char buf[256];
	q.vma_name_addr = (uint64_t)(uintptr_t)buf;
	q.vma_name_size = sizeof buf;
	errno = 0;
	if (ioctl(mapsfd, PROCMAP_QUERY, &q) < 0) {
		SHOW(name, "-1 %s", strerrorname_np(errno));
		return;
	}
	SHOW(name, "at=%ld len=%lu flags=%lx page=%lu off=%lx file=%d name_size=%u name=%s", (long)(q.vma_start - addr),
	     (unsigned long)(q.vma_end - q.vma_start), (unsigned long)q.vma_flags, (unsigned long)q.vma_page_size,
	     (unsigned long)q.vma_offset,
	     st ? q.inode == st->st_ino && q.dev_major == major(st->st_dev) && q.dev_minor == minor(st->st_dev) : q.inode == 0,
	     q.vma_name_size, q.vma_name_size ? buf : "");
}

int main(void) {
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	mkdir("/mnt", 0755);
	mount("tmpfs", "/mnt", "tmpfs", 0, NULL);
	int fd = open("/mnt/mapped", O_RDWR | O_CREAT, 0644);
	ftruncate(fd, 4 * 4096);
	struct stat st;
	fstat(fd, &st);
	char *priv = mmap(NULL, 2 * 4096, PROT_READ, MAP_PRIVATE, fd, 4096);
	char *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 3 * 4096);
	char *anon = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(anon + 4096, 4096); /* a hole after anon's first page */
	show_line("maps.private", priv, &st);
	show_line("maps.shared", shared, &st);

	mapsfd = open("/proc/self/maps", O_RDONLY);
	query("query.exact", (uint64_t)(uintptr_t)priv, 0, &st);
	query("query.inside", (uint64_t)(uintptr_t)priv + 4096 + 5, 0, &st);
	query("query.shared", (uint64_t)(uintptr_t)shared, Q_SHARED | Q_WRITABLE, &st);
	query("query.not.writable", (uint64_t)(uintptr_t)priv, Q_WRITABLE, &st);
	query("query.anon", (uint64_t)(uintptr_t)anon, Q_READABLE | Q_WRITABLE, NULL);
	query("query.anon.file", (uint64_t)(uintptr_t)anon, Q_FILE_BACKED, NULL);
	query("query.hole", (uint64_t)(uintptr_t)anon + 4096, 0, NULL);
	query("query.hole.next", (uint64_t)(uintptr_t)anon + 4096, Q_COVERING_OR_NEXT, NULL);
	query("query.zero", 0, 0, NULL);
	query("query.bad.flags", (uint64_t)(uintptr_t)priv, 0x40, &st);

	struct procmap_query q = {.size = 16, .query_addr = (uint64_t)(uintptr_t)priv};
	RET("query.small", ioctl(mapsfd, PROCMAP_QUERY, &q));
	q.size = sizeof q;
	q.vma_name_size = 8;
	RET("query.name.without.addr", ioctl(mapsfd, PROCMAP_QUERY, &q));
	char tiny[4];
	q.vma_name_addr = (uint64_t)(uintptr_t)tiny;
	q.vma_name_size = sizeof tiny;
	RET("query.name.short", ioctl(mapsfd, PROCMAP_QUERY, &q));
	q.vma_name_addr = 8;
	q.vma_name_size = 64;
	RET("query.name.bad.addr", ioctl(mapsfd, PROCMAP_QUERY, &q));
	RET("query.bad.struct", ioctl(mapsfd, PROCMAP_QUERY, (void *)8));
	RET("query.other.ioctl", ioctl(mapsfd, _IOWR('f', 18, struct procmap_query), &q));
	int statusfd = open("/proc/self/status", O_RDONLY);
	RET("query.other.file", ioctl(statusfd, PROCMAP_QUERY, &q));

	unlink("/mnt/mapped");
	show_line("maps.deleted", priv, &st);
	query("query.deleted", (uint64_t)(uintptr_t)priv, 0, &st);
	return 0;
}
