// SPDX-License-Identifier: GPL-2.0
/*
 * The list of device configs (device_config.h), kept in slot order; the
 * fds an upgrade's device objects name. The values of a --net: a tap's
 * name, checked; a NIC's MAC address, parsed from an option, shown in
 * status, or made up when none is given.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include <json-c/json.h>

#include "vmm/device.h"
#include "vmm/device_config.h"

bool tap_name_valid(const char *name)
{
	size_t n = strnlen(name, IFNAMSIZ);

	if (n == 0 || n >= IFNAMSIZ || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool virtio_net_mac_parse(const char *s, uint8_t mac[6])
{
	uint8_t m[6];

	if (strlen(s) != 17)
		return false;
	for (int i = 0; i < 6; i++) {
		int hi = hexval(s[3 * i]), lo = hexval(s[3 * i + 1]);

		if (hi < 0 || lo < 0 || (i < 5 && s[3 * i + 2] != ':'))
			return false;
		m[i] = (uint8_t)(hi << 4 | lo);
	}
	/* A NIC's own address is unicast (I/G bit clear) and not all zeros. */
	if ((m[0] & 1) || !(m[0] | m[1] | m[2] | m[3] | m[4] | m[5]))
		return false;
	memcpy(mac, m, 6);
	return true;
}

void virtio_net_mac_format(const uint8_t mac[6], char out[18])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
		 mac[5]);
}

int virtio_net_mac_generate(uint8_t mac[6])
{
	if (getrandom(mac, 6, 0) != 6)
		return errno ? -errno : -EIO;
	mac[0] = (uint8_t)((mac[0] & 0xfc) | 0x02);	/* unicast, locally administered */
	return 0;
}

/* The place of t in vm_device_types, -1 if not listed. */
static int type_rank(const struct vm_device_type *t)
{
	for (int k = 0; vm_device_types[k]; k++)
		if (vm_device_types[k] == t)
			return k;
	return -1;
}

int vm_device_config_add(struct vm_device_config *list, unsigned int *nr, unsigned int max,
			 const struct vm_device_config *c)
{
	int rank = type_rank(c->type);
	unsigned int at = 0;

	if (rank < 0)
		return -EINVAL;
	if (*nr >= max)
		return -ENOSPC;
	while (at < *nr && type_rank(list[at].type) <= rank)
		at++;
	memmove(&list[at + 1], &list[at], (*nr - at) * sizeof(list[0]));
	list[at] = *c;
	(*nr)++;
	return 0;
}

unsigned int vm_device_config_count(const struct vm_device_config *list, unsigned int nr,
				    const struct vm_device_type *t)
{
	unsigned int n = 0;

	for (unsigned int k = 0; k < nr; k++)
		n += list[k].type == t;
	return n;
}

const struct vm_device_config *vm_device_config_nth(const struct vm_device_config *list,
						    unsigned int nr,
						    const struct vm_device_type *t, unsigned int i)
{
	for (unsigned int k = 0; k < nr; k++)
		if (list[k].type == t && i-- == 0)
			return &list[k];
	return NULL;
}

const struct vm_device_type *vm_device_type_find(const char *kind)
{
	for (unsigned int k = 0; vm_device_types[k]; k++)
		if (!strcmp(vm_device_types[k]->kind, kind))
			return vm_device_types[k];
	return NULL;
}

int vm_device_handover_fd(json_object *o, const char *key, const int *fds, unsigned int nr_fds)
{
	json_object *v;
	int64_t i;

	if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_int))
		return -EPROTO;
	i = json_object_get_int64(v);
	if (i < 0 || i >= (int64_t)nr_fds || fds[i] < 0)
		return -EPROTO;
	return fds[i];
}
