/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libguestmem: a VM's RAM, kept in files the host kernel can preserve.
 *
 * Guest RAM is one file per region (memfd or guest_memfd), mapped shared
 * into the VMM and registered as a KVM memslot. The files, not the
 * mappings, are what matters: they are handed to a new VMM process on live
 * upgrade, and put into a LUO session to survive a host kexec. Nothing here
 * ever copies guest memory.
 *
 * Lifecycle: guestmem_layout() plans the regions (x86 PCI hole below
 * 4 GiB), guestmem_create() makes and maps the files, guestmem_bind()
 * registers the memslots with a VM. After an upgrade or a kexec the new
 * process calls guestmem_adopt() with the files it received instead of
 * guestmem_create(). guestmem_destroy() unmaps and closes.
 *
 * All functions return 0 or -errno and never exit(); error text goes to
 * the caller through the optional err buffer.
 */
#ifndef KVMLU_GUESTMEM_H
#define KVMLU_GUESTMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GUESTMEM_MAX_REGIONS 8

enum guestmem_backend {
	GUESTMEM_MEMFD = 0,		/* shmem memfd: LUO can preserve it */
	GUESTMEM_GUEST_MEMFD = 1,	/* KVM guest_memfd, mmap-able, shared */
};

struct guestmem_region {
	uint64_t gpa;
	uint64_t size;
	int fd;			/* the file holding this region's RAM */
	uint64_t fd_offset;	/* offset of the region in fd (0 today) */
	void *hva;		/* MAP_SHARED mapping of fd, size bytes */
	uint32_t slot;		/* KVM memslot id */
};

struct guestmem {
	enum guestmem_backend backend;
	uint64_t total;		/* sum of region sizes */
	unsigned int nr;
	struct guestmem_region r[GUESTMEM_MAX_REGIONS];
	/* memfd folio size (folio.h): shmem_enabled when mapped, MADV_HUGEPAGE taken */
	unsigned int shmem_thp;	/* enum guestmem_shmem_thp */
	bool huge_advised;
};

/* Where guest RAM may live on x86: below the PCI hole, then above 4 GiB. */
#define GUESTMEM_LOW_RAM_END	0xC0000000ULL	/* 3 GiB: hole up to 4 GiB */
#define GUESTMEM_HIGH_RAM_START	0x100000000ULL

/* Region sizes and GPAs are multiples of this (memslots, huge pages). */
#define GUESTMEM_SIZE_ALIGN	(2ULL << 20)
/* Largest guest guestmem_layout() plans (well inside 46-bit GPAs). */
#define GUESTMEM_MAX_RAM	(1ULL << 40)

/* Parse "256M", "2G", "1048576", "512K": bytes, must be a multiple of 2 MiB. */
int guestmem_parse_size(const char *s, uint64_t *out);

/* Backend names as the command line spells them: "memfd", "guest_memfd". */
int guestmem_backend_parse(const char *s, enum guestmem_backend *out);
const char *guestmem_backend_name(enum guestmem_backend b);

/* Plan regions for ram_size bytes (no files yet): fills gpa/size/slot. */
int guestmem_layout(uint64_t ram_size, struct guestmem *gm);

/*
 * Create one file per planned region and map it. name labels the memfds
 * (visible in /proc/PID/fd). vm_fd is needed for guest_memfd (the file is
 * bound to that VM) and ignored for memfd. Files are created without
 * close-on-exec, as they must outlive the process image on upgrade.
 */
int guestmem_create(struct guestmem *gm, enum guestmem_backend backend,
		    uint64_t ram_size, int vm_fd, const char *name,
		    char *err, size_t errlen);

/*
 * Take over files received from a previous VMM process or a LUO session:
 * gm already holds backend, gpa, size and slot of each region (from the
 * state FDT); fds[i] is the file of region i. Checks each file's size is at
 * least its region's and maps it. On error, nothing is left mapped and the
 * fds stay owned by the caller.
 * The plan is outside input too: regions must be 2 MiB aligned, must not
 * overlap or share a slot; total is recomputed (0 is fine). memfd files
 * must be unlinked shmem files (what LUO can preserve), guest_memfd files
 * real guest_memfds. On success gm owns the fds (guestmem_destroy closes).
 */
int guestmem_adopt(struct guestmem *gm, const int *fds, char *err, size_t errlen);

/*
 * Register every region as a memslot of vm_fd (KVM_SET_USER_MEMORY_REGION2).
 * If one fails, the slots already registered are deleted again.
 */
int guestmem_bind(const struct guestmem *gm, int vm_fd, char *err, size_t errlen);

/* Host pointer for [gpa, gpa+len) if it lies inside one region, else NULL. */
void *guestmem_gpa_to_hva(const struct guestmem *gm, uint64_t gpa, uint64_t len);

/*
 * Bytes of guest RAM in host memory now (not holes, not swapped out),
 * without touching any page. memfd only: -EOPNOTSUPP for guest_memfd.
 */
int guestmem_resident(const struct guestmem *gm, uint64_t *bytes);

/* Unmap and close everything; safe on a zeroed or half-built struct. */
void guestmem_destroy(struct guestmem *gm);

/* XXH3-128 over all regions in order, each region's gpa and size mixed in. */
struct guestmem_checksum {
	uint64_t hi, lo;	/* XXH128 high and low 64 bits */
	uint64_t bytes;		/* bytes hashed */
	uint64_t nsec;		/* wall time taken */
	unsigned int threads;	/* threads used */
};

/*
 * Checksum guest memory in fixed chunks, with up to `threads` threads
 * (0: pick from the size and the CPUs online). The result does not depend
 * on the thread count. Only meaningful while no vCPU runs.
 */
int guestmem_checksum(const struct guestmem *gm, unsigned int threads,
		      struct guestmem_checksum *out);

/* hi then lo as 32 lowercase hex digits: the form in JSON and the state FDT. */
void guestmem_checksum_format(const struct guestmem_checksum *c, char buf[33]);
int guestmem_checksum_parse(const char *s, uint64_t *hi, uint64_t *lo);

#endif /* KVMLU_GUESTMEM_H */
