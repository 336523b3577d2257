// SPDX-License-Identifier: GPL-2.0
/*
 * The list of device types (vmm/devices/device_types.c) against what
 * walks it: every type has the ops the VM and the state codec call, its
 * own node compatible and name, and a place in struct state_vm in the
 * same order (the slot order), so a type added to one list and not the
 * other fails here rather than in a restore.
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
		assert_non_null(t->nr_config);
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
		assert_true(t->state_size > 0);
		assert_true(t->off_slot + sizeof(uint32_t) <= t->state_size);
		assert_true(t->off_base + sizeof(uint64_t) <= t->state_size);
		assert_true(t->off_gsi + sizeof(uint32_t) <= t->state_size);
		for (unsigned int j = 0; j < k; j++) {
			assert_string_not_equal(vm_device_types[j]->kind, t->kind);
			assert_string_not_equal(vm_device_types[j]->compat, t->compat);
		}
	}
	assert_int_equal(n, 2);
}

static void test_device_types_each_have_their_states_in_slot_order(void **state)
{
	struct state_vm s = { 0 };
	struct state_devices d;
	unsigned int k;

	(void)state;
	for (k = 0; state_vm_devices(&s, k, &d); k++) {
		assert_ptr_equal(d.type, vm_device_types[k]);
		assert_true(d.max >= 1 && d.max <= d.type->max);
		assert_int_equal(*d.nr, 0);
		/* Inside the struct, room for max of them. */
		assert_true((char *)d.at >= (char *)&s);
		assert_true((char *)d.at + d.max * d.type->state_size <= (char *)(&s + 1));
	}
	assert_null(vm_device_types[k]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_types_have_every_op_and_their_own_node),
		cmocka_unit_test(test_device_types_each_have_their_states_in_slot_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
