// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-blk state: capture, value checks, restore (see
 * virtio_blk_state.h), and its node in the state FDT. The slot, base and
 * gsi are the device's place in the VM's layout (vmm/vm_virtio.h); the
 * state codec writes, reads and checks them for every device type.
 */
#include <ctype.h>
#include <errno.h>
#include <libfdt.h>
#include <linux/virtio_blk.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "vmm/devices/virtio_blk_state.h"
#include "vmm/virtio/virtio_mmio_node.h"

int virtio_blk_get_state(struct virtio_blk *b, struct virtio_blk_state *s)
{
	memset(s, 0, sizeof(*s));
	s->ident = b->ident;
	s->readonly = b->readonly;
	snprintf(s->id, sizeof(s->id), "%s", b->id);
	return virtio_mmio_get_state(&b->t, &s->t);
}

int virtio_blk_state_validate(const struct virtio_blk_state *s, char *err, size_t errlen)
{
	size_t n = strnlen(s->ident.path, sizeof(s->ident.path));

	if (n == 0 || n == sizeof(s->ident.path) || s->ident.path[0] != '/')
		return kvmlu_err(err, errlen, -EINVAL, "disk path \"%.64s\" is not absolute",
				 s->ident.path);
	n = strnlen(s->id, sizeof(s->id));
	if (n == sizeof(s->id))
		return kvmlu_err(err, errlen, -EINVAL, "disk id longer than %d", VIRTIO_BLK_ID_MAX);
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s->id[i]) && !strchr("._-", s->id[i]))
			return kvmlu_err(err, errlen, -EINVAL, "disk id \"%s\" has character 0x%02x",
					 s->id, (unsigned char)s->id[i]);
	return virtio_mmio_state_validate(&s->t, VIRTIO_ID_BLOCK_DEVICE, 1, err, errlen);
}

/*
 * A state from before VIRTIO_BLK_F_BLK_SIZE was offered has the 16 bytes
 * of config the device had then (capacity, size_max, seg_max); the
 * guest, which could not negotiate BLK_SIZE, never reads the fields
 * added since. Such a state gets today's extra bytes, so the transport's
 * "the guest saw the same config" check compares what the guest saw.
 */
static const struct virtio_mmio_state *blk_config_of_today(const struct virtio_blk *b,
							    const struct virtio_blk_state *s,
							    struct virtio_mmio_state *ext)
{
	if (s->t.config_len >= b->t.config_len || s->t.config_len != 16 ||
	    (s->t.driver_features & (1ULL << VIRTIO_BLK_F_BLK_SIZE)))
		return &s->t;
	*ext = s->t;
	memcpy(ext->config + s->t.config_len, b->t.config + s->t.config_len,
	       b->t.config_len - s->t.config_len);
	ext->config_len = b->t.config_len;
	return ext;
}

int virtio_blk_set_state(struct virtio_blk *b, const struct virtio_blk_state *s,
			 char *err, size_t errlen)
{
	struct virtio_mmio_state ext;
	int rc = virtio_blk_identity_check(&s->ident, &b->ident, err, errlen);

	if (rc)
		return rc;
	if (s->readonly != b->readonly || strcmp(s->id, b->id))
		return kvmlu_err(err, errlen, -EINVAL,
				 "%s: saved as %s id '%s', opened as %s id '%s'", b->name,
				 s->readonly ? "readonly" : "read-write", s->id,
				 b->readonly ? "readonly" : "read-write", b->id);
	rc = virtio_mmio_set_state(&b->t, blk_config_of_today(b, s, &ext), err, errlen);
	if (rc) {
		char why[256];

		snprintf(why, sizeof(why), "%s", err ? err : "");
		return kvmlu_err(err, errlen, rc, "%s: %s", b->name, why);
	}
	return 0;
}

/* Bail out on the first libfdt error. */
#define TRY(x) do { int r_ = (x); if (r_ < 0) return r_; } while (0)

int virtio_blk_state_encode(void *fdt, const void *state)
{
	const struct virtio_blk_state *d = state;

	TRY(fdt_property_string(fdt, "disk-path", d->ident.path));
	TRY(fdt_property_u64(fdt, "disk-dev", d->ident.dev));
	TRY(fdt_property_u64(fdt, "disk-ino", d->ident.ino));
	TRY(fdt_property_u64(fdt, "disk-size", d->ident.size));
	TRY(fdt_property_u32(fdt, "readonly", d->readonly));
	TRY(fdt_property_string(fdt, "disk-id", d->id));
	return virtio_mmio_node_encode(fdt, &d->t);
}

int virtio_blk_state_decode(const struct state_node *n, void *state)
{
	struct virtio_blk_state *d = state;
	int ret;

	ret = state_node_str(n, "disk-path", false, d->ident.path, sizeof(d->ident.path) - 1);
	if (!ret)
		ret = state_node_u64(n, "disk-dev", false, &d->ident.dev);
	if (!ret)
		ret = state_node_u64(n, "disk-ino", false, &d->ident.ino);
	if (!ret)
		ret = state_node_u64(n, "disk-size", false, &d->ident.size);
	if (!ret)
		ret = state_node_bool(n, "readonly", &d->readonly);
	if (!ret)
		ret = state_node_str(n, "disk-id", false, d->id, VIRTIO_BLK_ID_MAX);
	if (ret)
		return ret;
	return virtio_mmio_node_decode(n, &d->t);
}
