// SPDX-License-Identifier: GPL-2.0
/*
 * The list of device types (vmm/devices/device_types.c) against what
 * walks it: every type has the ops the VM and the state codec call, its
 * own node compatible, name and status key, a state struct that fits a
 * state's device entry; and struct state_vm's one list of devices keeps
 * them in the slot order of the types whatever order they are added in.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "vmm/device.h"
#include "vmm/state/state_vm.h"

static void test_device_types_have_every_op_and_their_own_node(void **state)
{
	unsigned int n = 0;

	(void)state;
	for (unsigned int k = 0; vm_device_types[k]; k++, n++) {
		const struct vm_device_type *t = vm_device_types[k];

		assert_non_null(t->kind);
		assert_non_null(t->what);
		assert_non_null(t->whats);
		assert_non_null(t->compat);
		assert_true(t->max > 0);
		assert_true(t->spec_size > 0);
		assert_true(t->spec_size <= VM_DEVICE_SPEC_MAX);
		assert_non_null(t->create);
		assert_non_null(t->start);
		assert_non_null(t->quiesce);
		assert_non_null(t->resume);
		assert_non_null(t->capture);
		assert_non_null(t->restore);
		assert_non_null(t->destroy);
		assert_non_null(t->encode);
		assert_non_null(t->decode);
		assert_non_null(t->validate);
		assert_non_null(t->status_key);
		assert_non_null(t->status);
		assert_non_null(t->handover_key);
		assert_non_null(t->handover);
		assert_non_null(t->handover_read);
		assert_non_null(t->reopen);
		assert_ptr_equal(vm_device_type_find(t->kind), t);
		assert_true(t->state_size > 0);
		assert_true(t->state_size <= VM_DEVICE_STATE_MAX);
		assert_true(t->off_slot + sizeof(uint32_t) <= t->state_size);
		assert_true(t->off_base + sizeof(uint64_t) <= t->state_size);
		assert_true(t->off_gsi + sizeof(uint32_t) <= t->state_size);
		for (unsigned int j = 0; j < k; j++) {
			assert_string_not_equal(vm_device_types[j]->kind, t->kind);
			assert_string_not_equal(vm_device_types[j]->compat, t->compat);
			assert_string_not_equal(vm_device_types[j]->status_key, t->status_key);
			assert_string_not_equal(vm_device_types[j]->handover_key, t->handover_key);
		}
	}
	assert_int_equal(n, 2);
}

/* A device state's slot field, to tell the entries apart. */
static uint32_t slot_of(const struct vm_device_type *t, void *st)
{
	return *vm_device_state_slot(t, st);
}

static void test_state_vm_list_keeps_slot_order_whatever_the_add_order(void **state)
{
	const struct vm_device_type *blk = vm_device_types[0], *net = vm_device_types[1];
	struct state_vm s = { 0 };
	void *st;

	(void)state;
	/* A NIC, a disk, a NIC: the disk goes first, the NICs keep their order. */
	st = state_vm_add_device(&s, net);
	assert_non_null(st);
	*vm_device_state_slot(net, st) = 10;
	st = state_vm_add_device(&s, blk);
	assert_non_null(st);
	*vm_device_state_slot(blk, st) = 20;
	st = state_vm_add_device(&s, net);
	assert_non_null(st);
	*vm_device_state_slot(net, st) = 11;
	assert_int_equal(state_vm_nr_devices(&s), 3);
	assert_ptr_equal(s.devs[0].type, blk);
	assert_ptr_equal(s.devs[1].type, net);
	assert_ptr_equal(s.devs[2].type, net);
	assert_int_equal(state_vm_count(&s, blk), 1);
	assert_int_equal(state_vm_count(&s, net), 2);
	assert_int_equal(slot_of(blk, state_vm_device(&s, blk, 0)), 20);
	assert_int_equal(slot_of(net, state_vm_device(&s, net, 0)), 10);
	assert_int_equal(slot_of(net, state_vm_device(&s, net, 1)), 11);
	assert_null(state_vm_device(&s, blk, 1));
	assert_null(state_vm_device(&s, net, 2));
}

static void test_state_vm_list_refuses_past_a_types_max_and_the_slots(void **state)
{
	const struct vm_device_type *blk = vm_device_types[0], *net = vm_device_types[1];
	const struct vm_device_type unlisted = *net;
	struct state_vm s = { 0 };

	(void)state;
	assert_null(state_vm_add_device(&s, &unlisted));
	for (unsigned int i = 0; i < net->max; i++)
		assert_non_null(state_vm_add_device(&s, net));
	assert_null(state_vm_add_device(&s, net));
	assert_int_equal(state_vm_count(&s, net), net->max);
	while (state_vm_nr_devices(&s) < STATE_MAX_DEVICES)
		assert_non_null(state_vm_add_device(&s, blk));
	assert_null(state_vm_add_device(&s, blk));
	assert_int_equal(state_vm_nr_devices(&s), STATE_MAX_DEVICES);
	/* Still grouped: every disk before every NIC. */
	for (uint32_t k = 0; k < STATE_MAX_DEVICES; k++)
		assert_ptr_equal(s.devs[k].type, k < STATE_MAX_DEVICES - net->max ? blk : net);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_types_have_every_op_and_their_own_node),
		cmocka_unit_test(test_state_vm_list_keeps_slot_order_whatever_the_add_order),
		cmocka_unit_test(test_state_vm_list_refuses_past_a_types_max_and_the_slots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
