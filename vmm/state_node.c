// SPDX-License-Identifier: GPL-2.0
/*
 * Typed, bounded reads of one state FDT node (see state_node.h).
 */
#include <errno.h>
#include <libfdt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "vmm/state_node.h"

int state_node_err(const struct state_node *n, const char *fmt, ...)
{
	char path[256], what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (fdt_get_path(n->fdt, n->node, path, sizeof(path)) < 0)
		snprintf(path, sizeof(path), "(node at %d)", n->node);
	return kvmlu_err(n->err, n->errlen, -EINVAL, "state FDT %s: %s", path, what);
}

int state_node_prop(const struct state_node *n, const char *name, int want, bool optional,
		    const void **val, int *len)
{
	int l;
	const void *v = fdt_getprop(n->fdt, n->node, name, &l);

	if (!v) {
		if (l == -FDT_ERR_NOTFOUND && optional)
			return -ENOENT;
		return state_node_err(n, "missing property \"%s\" (%s)", name, fdt_strerror(l));
	}
	if (want >= 0 && l != want)
		return state_node_err(n, "property \"%s\" is %d bytes, expected %d", name, l, want);
	*val = v;
	if (len)
		*len = l;
	return 0;
}

int state_node_u32(const struct state_node *n, const char *name, bool optional, uint32_t *out)
{
	const void *v = NULL;
	int ret = state_node_prop(n, name, 4, optional, &v, NULL);

	if (ret)
		return ret;
	*out = fdt32_ld(v);
	return 0;
}

int state_node_u64(const struct state_node *n, const char *name, bool optional, uint64_t *out)
{
	const void *v = NULL;
	int ret = state_node_prop(n, name, 8, optional, &v, NULL);

	if (ret)
		return ret;
	*out = ((uint64_t)fdt32_ld(v) << 32) | fdt32_ld((const fdt32_t *)v + 1);
	return 0;
}

int state_node_bool(const struct state_node *n, const char *name, bool *out)
{
	uint32_t v;
	int ret = state_node_u32(n, name, false, &v);

	if (ret)
		return ret;
	if (v > 1)
		return state_node_err(n, "property \"%s\" = %u, expected 0 or 1", name, v);
	*out = v;
	return 0;
}

int state_node_str(const struct state_node *n, const char *name, bool optional, char *out,
		   size_t max)
{
	const void *v = NULL;
	int len = 0, ret = state_node_prop(n, name, -1, optional, &v, &len);

	if (ret)
		return ret;
	if (len < 1 || ((const char *)v)[len - 1] != '\0' || strlen(v) != (size_t)len - 1)
		return state_node_err(n, "property \"%s\" is not a single string", name);
	if ((size_t)len - 1 > max)
		return state_node_err(n, "property \"%s\" is %d chars, at most %zu", name, len - 1,
				      max);
	memcpy(out, v, (size_t)len);
	return 0;
}

int state_node_blob(const struct state_node *n, const char *name, bool optional, void *out,
		    int size)
{
	const void *v = NULL;
	int ret = state_node_prop(n, name, size, optional, &v, NULL);

	if (ret)
		return ret;
	memcpy(out, v, (size_t)size);
	return 0;
}

int state_node_u64_array(const struct state_node *n, const char *name, uint64_t *out, int count)
{
	const void *v = NULL;
	int ret = state_node_prop(n, name, count * 8, false, &v, NULL);

	if (ret)
		return ret;
	for (int i = 0; i < count; i++)
		out[i] = ((uint64_t)fdt32_ld((const fdt32_t *)v + 2 * i) << 32) |
			 fdt32_ld((const fdt32_t *)v + 2 * i + 1);
	return 0;
}

int state_node_child(const struct state_node *n, const char *name, const char *compat,
		     bool optional, struct state_node *out)
{
	int node = fdt_subnode_offset(n->fdt, n->node, name);
	int r;

	if (node < 0) {
		if (node == -FDT_ERR_NOTFOUND && optional)
			return -ENOENT;
		return state_node_err(n, "missing node \"%s\" (%s)", name, fdt_strerror(node));
	}
	*out = state_node_at(n, node);
	r = fdt_node_check_compatible(n->fdt, node, compat);
	if (r) {
		const char *c = fdt_getprop(n->fdt, node, "compatible", NULL);

		if (r < 0 || !c)
			return state_node_err(out, "no compatible (want \"%s\")", compat);
		return state_node_err(out, "compatible \"%.64s\" not understood (want \"%s\")", c,
				      compat);
	}
	return 0;
}
