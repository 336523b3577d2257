// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the --net value (vmm/options.c) and the MAC text
 * it contains (virtio_net_mac_parse). The input is the text after
 * `--net`, up to two of them separated by a newline. A value that parses
 * must obey the contract the VM relies on: a valid tap name, a bridge
 * that is empty or valid, a unicast non-zero MAC when one was given,
 * distinct taps; and a MAC that parses must format back to the same text
 * in lower case.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/devices/virtio_net.h"
#include "vmm/options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_mac_text(const char *s)
{
	uint8_t mac[6];
	char back[18];

	if (!virtio_net_mac_parse(s, mac))
		return;
	if ((mac[0] & 1) || !(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]))
		abort();
	virtio_net_mac_format(mac, back);
	for (size_t i = 0; i < 17; i++)
		if (tolower((unsigned char)s[i]) != back[i])
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vmm_options o;
	char *s, *second, err[256];
	char *argv[16];
	int argc = 0;

	if (size > 4096)
		return 0;
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	check_mac_text(s);
	second = strchr(s, '\n');
	if (second)
		*second++ = '\0';
	argv[argc++] = "kvmlu-vmm";
	argv[argc++] = "run";
	argv[argc++] = "--name";
	argv[argc++] = "vm1";
	argv[argc++] = "--memory";
	argv[argc++] = "256M";
	argv[argc++] = "--cpus";
	argv[argc++] = "1";
	argv[argc++] = "--payload";
	argv[argc++] = "w.bin";
	argv[argc++] = "--net";
	argv[argc++] = s;
	if (second) {
		argv[argc++] = "--net";
		argv[argc++] = second;
	}
	argv[argc] = NULL;
	if (vmm_options_parse(argc, argv, &o, err, sizeof(err)) == 0) {
		if (o.nr_devs != (second ? 2u : 1u))
			abort();
		for (unsigned int i = 0; i < o.nr_devs; i++) {
			const struct virtio_net_spec *n = vm_device_config_spec_c(&o.devs[i]);

			if (!tap_name_valid(n->tap) || (n->bridge[0] && !tap_name_valid(n->bridge)))
				abort();
			if (n->has_mac && ((n->mac[0] & 1) ||
					   !(n->mac[0] | n->mac[1] | n->mac[2] | n->mac[3] |
					     n->mac[4] | n->mac[5])))
				abort();
		}
		if (o.nr_devs == 2 &&
		    !strcmp(((const struct virtio_net_spec *)vm_device_config_spec_c(&o.devs[0]))->tap,
			    ((const struct virtio_net_spec *)vm_device_config_spec_c(&o.devs[1]))->tap))
			abort();
	} else if (!err[0]) {
		abort();	/* every refusal says why */
	}
	free(s);
	return 0;
}
