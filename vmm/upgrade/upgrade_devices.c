// SPDX-License-Identifier: GPL-2.0
/*
 * The devices in an upgrade's "prepare" message (see upgrade_devices.h):
 * the walk over the device types on both ends. No type is named here.
 */
#include <errno.h>
#include <string.h>

#include "common/err.h"
#include "vmm/device.h"
#include "vmm/upgrade/upgrade_devices.h"
#include "vmm/vm_virtio.h"

int upgrade_devices_write(const struct vm_virtio *vv, json_object *o, int *fds,
			  unsigned int *nr_fds, unsigned int max_fds)
{
	for (unsigned int k = 0; vm_device_types[k]; k++) {
		const struct vm_device_type *t = vm_device_types[k];
		unsigned int nr = vm_virtio_count(vv, t);
		json_object *arr;

		if (!nr)
			continue;
		arr = json_object_new_array();
		json_object_object_add(o, t->handover_key, arr);
		for (unsigned int i = 0; i < nr; i++) {
			json_object *d = json_object_new_object();
			int ret;

			json_object_array_add(arr, d);
			ret = t->handover(vm_virtio_find(vv, t, i), d, fds, nr_fds, max_fds);
			if (ret)
				return ret;
		}
	}
	return 0;
}

int upgrade_devices_read(json_object *o, const int *fds, unsigned int nr_fds,
			 struct vm_device_config *list, unsigned int *nr, unsigned int max,
			 char *err, size_t errlen)
{
	for (unsigned int k = 0; vm_device_types[k]; k++) {
		const struct vm_device_type *t = vm_device_types[k];
		json_object *arr;
		size_t n;

		if (!json_object_object_get_ex(o, t->handover_key, &arr))
			continue;
		if (!json_object_is_type(arr, json_type_array) ||
		    (n = json_object_array_length(arr)) + *nr > max)
			return kvmlu_err(err, errlen, -EPROTO, "prepare: bad %s", t->handover_key);
		for (size_t i = 0; i < n; i++) {
			struct vm_device_config c;
			int ret;

			memset(&c, 0, sizeof(c));
			c.type = t;
			c.fd = -1;
			ret = t->handover_read(json_object_array_get_idx(arr, i), fds, nr_fds,
					       (unsigned int)i, &c, err, errlen);
			if (ret)
				return ret;
			ret = vm_device_config_add(list, nr, max, &c);
			if (ret)
				return kvmlu_err(err, errlen, -EPROTO, "prepare: %s %zu: %s", t->what,
						 i, strerror(-ret));
		}
	}
	return 0;
}
