// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the libvirt hook's domain XML check
 * (agent/libvirt/libvirt_hook_event.c, agent/libvirt/libvirt_metadata.c), which reads
 * whatever arrives on the hook's stdin. It must refuse or accept without
 * crashing or leaking, leave the event untouched when it refuses, and
 * what it accepts must be a well-formed UUID of the domain argv named.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/libvirt/libvirt_hook_event.h"
#include "agent/libvirt/libvirt_metadata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[] = { "kvmlu", "web1", "started", "begin", "-", NULL };
	struct libvirt_hook_event ev, before;
	char err[256];
	bool optout;

	if (libvirt_hook_event_parse_args(5, argv, &ev, err, sizeof(err)))
		abort();
	before = ev;
	if (libvirt_hook_event_parse_xml((const char *)data, size, &ev, err, sizeof(err))) {
		if (memcmp(&ev, &before, sizeof(ev)))
			abort();
	} else if (strlen(ev.uuid) != LIBVIRT_UUID_LEN || strcmp(ev.domain, "web1")) {
		abort();
	}
	/* The agent's reader of virDomainGetMetadata text, on the same bytes. */
	if (size < 65536 && !memchr(data, '\0', size)) {
		char *text = malloc(size + 1);

		if (!text)
			return 0;
		memcpy(text, data, size);
		text[size] = '\0';
		libvirt_metadata_optout_text(text, &optout, err, sizeof(err));
		free(text);
	}
	return 0;
}
