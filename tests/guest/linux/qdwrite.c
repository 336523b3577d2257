// qdwrite: many writes in flight on the Linux guest's virtio disk, for the
// harness case linux_guest_disk_keeps_acked_records. Built static by
// build-initramfs.sh.
//
//   qdwrite DEV FIRST_BLOCK BLOCKS WRITERS STOP_BLOCK
//
// WRITERS threads write 4 KiB blocks with O_DIRECT|O_DSYNC to a raw region
// of DEV outside the guest's file system: writer w owns the BLOCKS/WRITERS
// slots starting at FIRST_BLOCK + w * (BLOCKS/WRITERS) and writes its
// records k = 1, 2, 3 ... in turn, record k to slot (k - 1) % slots. A
// record is the line "qd w=W k=K s=S\n" at the start of its block, the
// rest zero. Before it overwrites a slot, the writer reads it back
// (O_DIRECT): it must hold the writer's record k - slots, or be zero on the
// first round, so every record is checked on the disk before it is gone.
// Each thread has one request outstanding at a time, so up to WRITERS
// requests are in flight on the disk at once (the guest's block
// layer counts them in /sys/block/DEV/inflight; the maximum seen is
// printed). A record is acknowledged once its pwrite(2) returned: it must
// then be on the disk whatever happens to the VMM or the host.
//
// Every second the main thread prints the acknowledged records, one
// number per writer (a snapshot taken after the writes returned):
//   KVMLU-QD-ACKS inflight_max=N k=K0,K1,...
// It stops when the block STOP_BLOCK of DEV starts with KVMLU-STOP (read
// with O_DIRECT), or /run/poweroff exists, as the records writer in /init
// does: the writers finish
// their current write, and it prints the final records and touches
// /run/qd.done:
//   KVMLU-QD-DONE inflight_max=N k=K0,K1,...
// Errors print KVMLU-QD-ERROR and exit 1.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define QD_BLOCK 4096
#define QD_MAX_WRITERS 64

static const char *qd_dev;
static long qd_first, qd_slots;
static int qd_fd;
static atomic_bool qd_stop;
static atomic_long qd_acked[QD_MAX_WRITERS];

static void qd_error(const char *what, int err)
{
	printf("KVMLU-QD-ERROR %s: %s\n", what, strerror(err));
	fflush(stdout);
	exit(1);
}

static void *qd_writer(void *arg)
{
	long w = (long)(size_t)arg;
	void *buf;

	if (posix_memalign(&buf, QD_BLOCK, QD_BLOCK) != 0)
		qd_error("posix_memalign", ENOMEM);
	for (long k = 1; !atomic_load(&qd_stop); k++) {
		long s = (k - 1) % qd_slots;
		off_t off = (off_t)(qd_first + w * qd_slots + s) * QD_BLOCK;

		/*
		 * Read the slot back first: it must hold this writer's record
		 * k - slots (or nothing yet), so every record, acknowledged
		 * before a pause or a kexec included, is checked on the disk
		 * before it is overwritten; the host checks the last ones.
		 */
		ssize_t r = pread(qd_fd, buf, QD_BLOCK, off);
		if (r != QD_BLOCK)
			qd_error("pread", r < 0 ? errno : EIO);
		long gw = -1, gk = -1, gs = -1;
		if (k <= qd_slots ? ((char *)buf)[0] != 0 :
				    sscanf(buf, "qd w=%ld k=%ld s=%ld", &gw, &gk, &gs) != 3 ||
				    gw != w || gk != k - qd_slots || gs != s) {
			((char *)buf)[40] = 0;
			char due[32] = "nothing";
			if (k > qd_slots)
				snprintf(due, sizeof(due), "record %ld", k - qd_slots);
			printf("KVMLU-QD-ERROR lost write: writer %ld slot %ld holds \"%.*s\" where %s was due\n",
			       w, s, (int)strcspn(buf, "\n"), (char *)buf, due);
			fflush(stdout);
			exit(1);
		}
		memset(buf, 0, QD_BLOCK);
		snprintf(buf, QD_BLOCK, "qd w=%ld k=%ld s=%ld\n", w, k, s);
		ssize_t n = pwrite(qd_fd, buf, QD_BLOCK, off);
		if (n != QD_BLOCK)
			qd_error("pwrite", n < 0 ? errno : EIO);
		atomic_store(&qd_acked[w], k);
	}
	free(buf);
	return NULL;
}

static int qd_inflight(const char *path)
{
	char line[64];
	int r = 0, w = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	if (!fgets(line, sizeof(line), f) || sscanf(line, "%d %d", &r, &w) != 2)
		r = w = 0;
	fclose(f);
	return r + w;
}

static int qd_stop_marked(int fd, long block, void *buf)
{
	if (pread(fd, buf, QD_BLOCK, (off_t)block * QD_BLOCK) != QD_BLOCK)
		return 0;
	return memcmp(buf, "KVMLU-STOP", 10) == 0;
}

static void qd_print(const char *tag, int writers, int inflight_max)
{
	printf("%s inflight_max=%d k=", tag, inflight_max);
	for (int w = 0; w < writers; w++)
		printf("%s%ld", w ? "," : "", atomic_load(&qd_acked[w]));
	printf("\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: qdwrite DEV FIRST_BLOCK BLOCKS WRITERS STOP_BLOCK\n");
		return 2;
	}
	qd_dev = argv[1];
	qd_first = atol(argv[2]);
	long blocks = atol(argv[3]);
	int writers = atoi(argv[4]);
	long stop_block = atol(argv[5]);
	if (qd_first <= 0 || writers < 1 || writers > QD_MAX_WRITERS || blocks < writers ||
	    stop_block < qd_first + blocks) {
		printf("KVMLU-QD-ERROR bad arguments\n");
		return 2;
	}
	qd_slots = blocks / writers;

	qd_fd = open(qd_dev, O_RDWR | O_DIRECT | O_DSYNC);
	if (qd_fd < 0)
		qd_error(qd_dev, errno);
	int sfd = open(qd_dev, O_RDONLY | O_DIRECT);
	if (sfd < 0)
		qd_error(qd_dev, errno);
	void *sbuf;
	if (posix_memalign(&sbuf, QD_BLOCK, QD_BLOCK) != 0)
		qd_error("posix_memalign", ENOMEM);

	char inflight[128];
	const char *name = strrchr(qd_dev, '/');
	snprintf(inflight, sizeof(inflight), "/sys/block/%s/inflight", name ? name + 1 : qd_dev);

	printf("KVMLU-QD-START dev=%s first=%ld writers=%d slots=%ld\n", qd_dev, qd_first, writers,
	       qd_slots);
	fflush(stdout);
	pthread_t tid[QD_MAX_WRITERS];
	for (long w = 0; w < writers; w++)
		if (pthread_create(&tid[w], NULL, qd_writer, (void *)(size_t)w) != 0)
			qd_error("pthread_create", EAGAIN);

	int inflight_max = 0;
	for (int tick = 1;; tick++) {
		struct timespec t = { 0, 50 * 1000 * 1000 };
		nanosleep(&t, NULL);
		int n = qd_inflight(inflight);
		if (n > inflight_max)
			inflight_max = n;
		if (tick % 20)
			continue;
		/* /run/poweroff: the ACPI power button (/init's power_button). */
		if (qd_stop_marked(sfd, stop_block, sbuf) || access("/run/poweroff", F_OK) == 0)
			break;
		qd_print("KVMLU-QD-ACKS", writers, inflight_max);
	}
	atomic_store(&qd_stop, 1);
	for (int w = 0; w < writers; w++)
		pthread_join(tid[w], NULL);
	qd_print("KVMLU-QD-DONE", writers, inflight_max);
	close(open("/run/qd.done", O_WRONLY | O_CREAT, 0644));
	return 0;
}
