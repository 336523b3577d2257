// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-blk on the virtio-pci transport in a real VM (needs /dev/kvm;
 * skipped without it, run by harness/unit_on_nested_kvm): vm_create()
 * with transport pci finds KVM_SIGNAL_MSI, puts the host bridge on ports
 * 0xcf8-0xcff and the disk at 00:01.0 with BAR0 at 0xd0000000; a
 * driver's config cycles and BAR accesses go through the I/O bus as a
 * vCPU's exits would; a write request completes and its interrupt is an
 * MSI that KVM took (KVM_SIGNAL_MSI did not fail), with no ISR read.
 * Then what a live upgrade does: the disk's state, with its PCI
 * function's (Command, BAR0, MSI-X table and enable, the vectors), moves
 * to a second pci VM on the same open file, which answers config cycles
 * as the first did and completes the guest's next request with an MSI.
 * A virtio-mmio VM refuses that state, and a pci VM a state with a vector
 * past the table. The VM's whole state goes through the FDT as format
 * 2.2 with the pci part intact (KVMLU_STATE_CORPUS_GOOD=FILE writes it:
 * tests/state-corpus/good/one_disk_virtio_pci.dtb was made so).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/virtio_blk.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/devices/virtio_blk_device.h"
#include "vmm/devices/virtio_blk_state.h"
#include "vmm/state/state_fdt.h"
#include "vmm/state/vm_capture.h"
#include "vmm/virtio/virtio_pci_vm.h"
#include "vmm/vm.h"
#include "vmm/vm_virtio.h"
#include "tests/unit/vmm/vm_test_support.h"

#define RAM	(4u << 20)
#define DESC	0x100000ULL
#define AVAIL	0x101000ULL
#define USED	0x102000ULL
#define HDR	0x110000ULL
#define DATA	0x111000ULL
#define STATUS	0x112000ULL
#define BAR	0xd0000000ULL

static char err[512];
static char path[64];

static int setup(void **state)
{
	(void)state;
	vt_disk_make(path, sizeof(path), "vmpci");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

static uint32_t cfg_rd(struct vm *vm, unsigned int dev, unsigned int reg)
{
	uint32_t a = 0x80000000u | dev << 11 | reg, v = 0;

	assert_true(io_bus_access(&vm->bus, IO_SPACE_PIO, 0xcf8, (uint8_t *)&a, 4, true));
	assert_true(io_bus_access(&vm->bus, IO_SPACE_PIO, 0xcfc, (uint8_t *)&v, 4, false));
	return v;
}

static void cfg_wr16(struct vm *vm, unsigned int dev, unsigned int reg, uint16_t v)
{
	uint32_t a = 0x80000000u | dev << 11 | (reg & ~3u);

	assert_true(io_bus_access(&vm->bus, IO_SPACE_PIO, 0xcf8, (uint8_t *)&a, 4, true));
	assert_true(io_bus_access(&vm->bus, IO_SPACE_PIO, 0xcfc + (reg & 3), (uint8_t *)&v, 2,
				  true));
}

static uint64_t rd(struct vm *vm, uint64_t off, unsigned int len)
{
	uint64_t v = 0;

	assert_true(io_bus_access(&vm->bus, IO_SPACE_MMIO, BAR + off, (uint8_t *)&v, len, false));
	return v;
}

static void wr(struct vm *vm, uint64_t off, uint64_t v, unsigned int len)
{
	assert_true(io_bus_access(&vm->bus, IO_SPACE_MMIO, BAR + off, (uint8_t *)&v, len, true));
}

static int make_vm_on(struct vm *vm, const struct virtio_blk_spec *spec,
		      enum vm_virtio_transport transport, const int *adopt_fd,
		      const struct virtio_blk_identity *ident)
{
	/* The disk's entry of the VM's one list of device configs. */
	static struct vm_device_config c;
	struct virtio_blk_disk_spec *d = vm_device_config_spec(&c);
	struct vm_config cfg = {
		.name = "vpci", .ram_size = RAM, .nr_vcpus = 1, .backend = GUESTMEM_MEMFD,
		.serial_fd = STDERR_FILENO, .devs = &c, .nr_devs = 1, .transport = transport,
	};

	memset(&c, 0, sizeof(c));
	c.type = &virtio_blk_type;
	c.fd = adopt_fd ? *adopt_fd : -1;
	if (ident)
		d->ident = *ident;	/* an upgrade's: the path recorded, as opened */
	else
		snprintf(d->ident.path, sizeof(d->ident.path), "%s", spec->path);
	d->readonly = spec->readonly;
	snprintf(d->id, sizeof(d->id), "%s", spec->id);
	return vm_create(vm, &cfg, err, sizeof(err));
}

static int make_vm(struct vm *vm, const struct virtio_blk_spec *spec,
		   enum vm_virtio_transport transport)
{
	return make_vm_on(vm, spec, transport, NULL, NULL);
}

static struct vm_device *disk0(struct vm *vm)
{
	return vm_virtio_find(&vm->virtio, &virtio_blk_type, 0);
}

/* Linux's virtio_pci_modern probe, cut down: features, queue 0 of 8 on vector 0, DRIVER_OK. */
static void drive(struct vm *vm)
{
	wr(vm, VPCI_STATUS, 0, 1);
	wr(vm, VPCI_STATUS, 1, 1);
	wr(vm, VPCI_STATUS, 3, 1);
	wr(vm, VPCI_GFSELECT, 1, 4);
	wr(vm, VPCI_GF, 1, 4);
	wr(vm, VPCI_GFSELECT, 0, 4);
	wr(vm, VPCI_GF, 1u << VIRTIO_BLK_F_FLUSH, 4);
	wr(vm, VPCI_STATUS, 11, 1);
	assert_int_equal(rd(vm, VPCI_STATUS, 1), 11);
	wr(vm, VPCI_MSIX_CONFIG, 1, 2);
	assert_int_equal(rd(vm, VPCI_MSIX_CONFIG, 2), 1);
	wr(vm, VPCI_Q_SELECT, 0, 2);
	assert_int_equal(rd(vm, VPCI_Q_SIZE, 2), 256);
	wr(vm, VPCI_Q_SIZE, 8, 2);
	wr(vm, VPCI_Q_MSIX, 0, 2);
	assert_int_equal(rd(vm, VPCI_Q_MSIX, 2), 0);
	wr(vm, VPCI_Q_DESC, DESC, 8);
	wr(vm, VPCI_Q_AVAIL, AVAIL, 8);
	wr(vm, VPCI_Q_USED, USED, 8);
	wr(vm, VPCI_Q_ENABLE, 1, 2);
	/* Vector 0: fixed delivery of IDT vector 0x40 to APIC 0. */
	wr(vm, VIRTIO_PCI_MSIX_TABLE_OFF, 0xfee00000u, 4);
	wr(vm, VIRTIO_PCI_MSIX_TABLE_OFF + 4, 0, 4);
	wr(vm, VIRTIO_PCI_MSIX_TABLE_OFF + 8, 0x40, 4);
	wr(vm, VIRTIO_PCI_MSIX_TABLE_OFF + 12, 0, 4);
	cfg_wr16(vm, 1, VIRTIO_PCI_CAP_MSIX + 2, MSIX_CTRL_ENABLE);
	wr(vm, VPCI_STATUS, 15, 1);
	assert_int_equal(rd(vm, VPCI_STATUS, 1), 15);
}

static void submit_write(struct vm *vm, uint16_t n, uint64_t sector, uint8_t fill)
{
	struct virtio_blk_outhdr h = { .type = VIRTIO_BLK_T_OUT, .sector = sector };
	struct { uint64_t a; uint32_t l; uint16_t f, nx; } desc[3] = {
		{ HDR, sizeof(h), 1, 1 }, { DATA, 512, 1, 2 }, { STATUS, 1, 2, 0 },
	};

	memcpy(vt_gpa(vm, HDR), &h, sizeof(h));
	memset(vt_gpa(vm, DATA), fill, 512);
	*(uint8_t *)vt_gpa(vm, STATUS) = 0xee;
	memcpy(vt_gpa(vm, DESC), desc, sizeof(desc));
	memset((uint8_t *)vt_gpa(vm, AVAIL) + 4 + 2 * (n % 8), 0, 2);
	__atomic_store_n((uint16_t *)((uint8_t *)vt_gpa(vm, AVAIL) + 2), (uint16_t)(n + 1),
			 __ATOMIC_RELEASE);
	/* Queue 0's notify address; a vCPU's write there is KVM's ioeventfd. */
	wr(vm, VIRTIO_PCI_NOTIFY_OFF, 0, 2);
}

/* The whole VM's state through the FDT: 2.2, the pci part as captured. */
static void check_state_fdt(struct vm *vm)
{
	struct state_vm *s = calloc(1, sizeof(*s)), *r = calloc(1, sizeof(*r));
	const struct virtio_blk_state *a, *b;
	const char *out = getenv("KVMLU_STATE_CORPUS_GOOD");
	size_t size;
	void *blob;

	assert_non_null(s);
	assert_non_null(r);
	assert_int_equal(state_vm_capture(vm, false, s, err, sizeof(err)), 0);
	assert_int_equal(s->virtio_transport, STATE_VIRTIO_TRANSPORT_PCI);
	assert_int_equal(state_fdt_write(s, &blob, &size, err, sizeof(err)), 0);
	assert_int_equal(state_fdt_load(blob, size, 1, r, err, sizeof(err)), 0);
	assert_int_equal(r->format_major, 2);
	assert_int_equal(r->format_minor, 2);
	assert_int_equal(r->virtio_transport, STATE_VIRTIO_TRANSPORT_PCI);
	a = state_vm_device(s, &virtio_blk_type, 0);
	b = state_vm_device(r, &virtio_blk_type, 0);
	assert_true(b->t.pci.present);
	assert_memory_equal(&a->t.pci, &b->t.pci, sizeof(a->t.pci));
	if (out) {
		FILE *f = fopen(out, "wb");

		assert_non_null(f);
		assert_int_equal(fwrite(blob, 1, size, f), size);
		fclose(f);
	}
	free(blob);
	state_vm_free(s);
	state_vm_free(r);
	free(s);
	free(r);
}

static void test_vm_virtio_pci_serves_a_disk_and_moves_to_a_new_vm(void **state)
{
	struct virtio_blk_spec spec = { .path = path };
	struct vm_virtio_slot slots[8];
	struct virtio_blk_state st, bad;
	struct virtio_pci *p;
	uint8_t sector[512];
	struct vm a, b, c;
	int fd, rc;

	(void)state;
	if (!vt_have_kvm())
		skip();
	rc = make_vm(&a, &spec, VM_VIRTIO_TRANSPORT_PCI);
	if (rc == -EOPNOTSUPP)
		skip();	/* no KVM_SIGNAL_MSI: err says so; the mmio tests cover the rest */
	if (rc)
		fail_msg("vm_create: %s", err);
	assert_int_equal(vm_virtio_mmio_devices(&a.virtio, slots, 8), 0);
	/* Bus 0: the host bridge, the disk at device 1, nothing else. */
	assert_int_equal(cfg_rd(&a, 0, 0x08) >> 16, 0x0600);
	assert_int_equal(cfg_rd(&a, 1, 0), 0x10421af4);
	assert_int_equal(cfg_rd(&a, 2, 0), 0xffffffffu);
	assert_int_equal(cfg_rd(&a, 1, PCI_CFG_BAR0), (uint32_t)BAR | PCI_BAR_MEM64);
	/* Decoding is off until the command register says so. */
	assert_int_equal(rd(&a, VPCI_NUM_QUEUES, 2), 0xffff);
	cfg_wr16(&a, 1, PCI_CFG_COMMAND, PCI_CMD_MEMORY | PCI_CMD_MASTER);
	assert_int_equal(rd(&a, VPCI_NUM_QUEUES, 2), 1);
	/* The device config: capacity, 1 MiB in sectors. */
	assert_int_equal(rd(&a, VIRTIO_PCI_DEVICE_OFF, 8), 2048);
	drive(&a);
	assert_int_equal(vm_virtio_start(&a.virtio, err, sizeof(err)), 0);
	submit_write(&a, 0, 3, 0x5a);
	vm_virtio_quiesce(&a.virtio);
	assert_int_equal(__atomic_load_n((uint16_t *)((uint8_t *)vt_gpa(&a, USED) + 2),
					 __ATOMIC_ACQUIRE), 1);
	assert_int_equal(*(uint8_t *)vt_gpa(&a, STATUS), VIRTIO_BLK_S_OK);
	p = vm_virtio_pci_fn(&a.virtio, 0);
	assert_non_null(p);
	assert_int_equal(p->msis, 1);		/* KVM_SIGNAL_MSI took it */
	assert_int_equal(p->msis_lost, 0);

	/* Upgrade: the disk's state, its function's with it. */
	assert_int_equal(virtio_blk_type.capture(disk0(&a), &st, err, sizeof(err)), 0);
	assert_true(st.t.pci.present);
	assert_int_equal(st.t.pci.command, PCI_CMD_MEMORY | PCI_CMD_MASTER);
	assert_int_equal(st.t.pci.msix_ctrl, MSIX_CTRL_ENABLE);
	assert_int_equal(st.t.pci.nr_vectors, 2);
	assert_int_equal(st.t.pci.queue_vector[0], 0);
	assert_int_equal(st.t.pci.config_vector, 1);
	assert_int_equal(st.t.pci.msix[0][2], 0x40);
	check_state_fdt(&a);
	fd = virtio_blk_of(disk0(&a))->fd;
	/* A virtio-mmio VM refuses it. */
	assert_int_equal(make_vm_on(&c, &spec, VM_VIRTIO_TRANSPORT_MMIO, &fd, &st.ident), 0);
	assert_int_equal(virtio_blk_type.restore(disk0(&c), &st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "virtio-pci device, this VM's is virtio-mmio"));
	vm_destroy(&c);
	assert_int_equal(make_vm_on(&b, &spec, VM_VIRTIO_TRANSPORT_PCI, &fd, &st.ident), 0);
	memcpy(vt_gpa(&b, 0x100000), vt_gpa(&a, 0x100000), 0x20000);
	/* A vector past the table: refused, nothing taken. */
	bad = st;
	bad.t.pci.queue_vector[0] = 2;
	assert_int_equal(virtio_blk_type.restore(disk0(&b), &bad, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "queue 0 vector 2"));
	assert_int_equal(rd(&b, VPCI_NUM_QUEUES, 2), 0xffff);	/* still power-on: decode off */
	assert_int_equal(virtio_blk_type.restore(disk0(&b), &st, err, sizeof(err)), 0);
	vm_virtio_resume(&a.virtio);
	vm_destroy(&a);
	/* The new VM's function is the old one's. */
	assert_int_equal(cfg_rd(&b, 1, PCI_CFG_COMMAND) & 0xffff, PCI_CMD_MEMORY | PCI_CMD_MASTER);
	assert_int_equal(cfg_rd(&b, 1, VIRTIO_PCI_CAP_MSIX) >> 16, MSIX_CTRL_ENABLE | 1);
	assert_int_equal(rd(&b, VPCI_STATUS, 1), 15);
	assert_int_equal(rd(&b, VPCI_MSIX_CONFIG, 2), 1);
	assert_int_equal(rd(&b, VPCI_Q_MSIX, 2), 0);
	assert_int_equal(rd(&b, VIRTIO_PCI_MSIX_TABLE_OFF + 8, 4), 0x40);
	assert_int_equal(vm_virtio_start(&b.virtio, err, sizeof(err)), 0);
	submit_write(&b, 1, 4, 0x6b);
	vm_virtio_quiesce(&b.virtio);
	assert_int_equal(__atomic_load_n((uint16_t *)((uint8_t *)vt_gpa(&b, USED) + 2),
					 __ATOMIC_ACQUIRE), 2);
	p = vm_virtio_pci_fn(&b.virtio, 0);
	assert_int_equal(p->msis, 1);
	assert_int_equal(p->msis_lost, 0);
	vm_virtio_resume(&b.virtio);
	vm_destroy(&b);

	fd = open(path, O_RDONLY);
	assert_int_equal(pread(fd, sector, 512, 3 * 512), 512);
	assert_int_equal(sector[0], 0x5a);
	assert_int_equal(pread(fd, sector, 512, 4 * 512), 512);
	assert_int_equal(sector[511], 0x6b);
	close(fd);
}

/* No devices: the (empty) PCI bus is recorded, the format stays 1.1 as for any such VM. */
static void test_vm_virtio_pci_without_devices_keeps_its_bus_in_the_state(void **state)
{
	struct vm_config cfg = {
		.name = "vpci0", .ram_size = RAM, .nr_vcpus = 1, .backend = GUESTMEM_MEMFD,
		.serial_fd = STDERR_FILENO, .transport = VM_VIRTIO_TRANSPORT_PCI,
	};
	struct state_vm *s, *r;
	size_t size;
	void *blob;
	struct vm a;
	int rc;

	(void)state;
	if (!vt_have_kvm())
		skip();
	rc = vm_create(&a, &cfg, err, sizeof(err));
	if (rc == -EOPNOTSUPP)
		skip();
	if (rc)
		fail_msg("vm_create: %s", err);
	s = calloc(1, sizeof(*s));
	r = calloc(1, sizeof(*r));
	assert_non_null(s);
	assert_non_null(r);
	assert_int_equal(cfg_rd(&a, 0, 0x08) >> 16, 0x0600);	/* the bridge, alone */
	assert_int_equal(cfg_rd(&a, 1, 0), 0xffffffffu);
	assert_int_equal(state_vm_capture(&a, false, s, err, sizeof(err)), 0);
	assert_int_equal(state_fdt_write(s, &blob, &size, err, sizeof(err)), 0);
	assert_int_equal(state_fdt_load(blob, size, 1, r, err, sizeof(err)), 0);
	assert_int_equal(r->format_major, 1);
	assert_int_equal(r->virtio_transport, STATE_VIRTIO_TRANSPORT_PCI);
	free(blob);
	state_vm_free(s);
	state_vm_free(r);
	free(s);
	free(r);
	vm_destroy(&a);
}

static void test_vm_virtio_refuses_an_unknown_transport(void **state)
{
	struct virtio_blk_spec spec = { .path = path };
	struct vm a;

	(void)state;
	if (!vt_have_kvm())
		skip();
	assert_int_equal(make_vm(&a, &spec, (enum vm_virtio_transport)7), -EINVAL);
	assert_non_null(strstr(err, "transport 7"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_vm_virtio_pci_serves_a_disk_and_moves_to_a_new_vm,
						setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_vm_virtio_pci_without_devices_keeps_its_bus_in_the_state,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_vm_virtio_refuses_an_unknown_transport, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
