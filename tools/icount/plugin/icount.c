/* A QEMU TCG plugin that counts the guest instructions every translation
 * block runs. When the file req=PATH appears, it writes one line per block
 * run so far, "VADDR NINSNS COUNT" (hex, decimal, decimal), to dump=PATH
 * and removes the request; two dumps around a load give the instructions
 * that load ran, which `go run ./tools/icount` attributes to the kernel's
 * functions and `jiege bench --icount` to privilege modes. When QEMU exits
 * (the guest powered off) it writes a last dump. Counts are exact at one
 * hart (the inline adds are not atomic). The plugin API of QEMU 7.2
 * (version 1) is declared here by hand: Debian ships no qemu-plugin.h.
 *
 *   make icount-plugin     (build/icount.so)
 *   qemu-system-riscv64 ... -plugin build/icount.so,req=/tmp/req,dump=/tmp/dump
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct qemu_info_t qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
extern void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
extern void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
extern uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
extern void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op, void *ptr, uint64_t imm);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

struct rec { uint64_t vaddr, n, count; };
#define CHUNK 65536
static struct rec *chunks[4096];
static int nrec;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static const char *req = "/tmp/tb.req", *dump = "/tmp/tb.dump";

static void trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
	pthread_mutex_lock(&mu);
	int i = nrec++;
	if (!chunks[i / CHUNK])
		chunks[i / CHUNK] = calloc(CHUNK, sizeof(struct rec));
	struct rec *r = &chunks[i / CHUNK][i % CHUNK];
	pthread_mutex_unlock(&mu);
	r->vaddr = qemu_plugin_tb_vaddr(tb);
	r->n = qemu_plugin_tb_n_insns(tb);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &r->count, 1);
}

/* write_dump writes the counts so far to dump whole: through a temporary
 * file renamed over it, so that a reader never sees half of one. */
static void write_dump(void) {
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", dump);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return;
	pthread_mutex_lock(&mu);
	int n = nrec;
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < n; i++) {
		struct rec *r = &chunks[i / CHUNK][i % CHUNK];
		if (r->count)
			fprintf(f, "%llx %llu %llu\n", (unsigned long long)r->vaddr, (unsigned long long)r->n, (unsigned long long)r->count);
	}
	fclose(f);
	rename(tmp, dump);
}

static void *watcher(void *arg) {
	for (;;) {
		usleep(20000);
		if (access(req, F_OK) != 0)
			continue;
		write_dump();
		unlink(req);
	}
	return NULL;
}

static void at_exit(qemu_plugin_id_t id, void *userdata) {
	write_dump();
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "req=", 4) == 0)
			req = strdup(argv[i] + 4);
		if (strncmp(argv[i], "dump=", 5) == 0)
			dump = strdup(argv[i] + 5);
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	pthread_t t;
	pthread_create(&t, NULL, watcher, NULL);
	return 0;
}
