// SPDX-License-Identifier: GPL-2.0
/*
 * The in-place classifier (see libvirt_ram_class.h). Each rule is the
 * XML side of a refusal kvmlu-qemu makes on the command line (section 8
 * of docs/libvirt-ram-in-place.md), or a device that keeps RAM in a way
 * a QEMU restart cannot carry (VFIO pins, vhost-user peers map it).
 */
#include <errno.h>
#include <libxml/tree.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "agent/libvirt/libvirt_metadata.h"
#include "agent/libvirt/libvirt_ram_class.h"
#include "common/err.h"

static const char *const reason_words[LVRAM_NR_REASONS] = {
	"no shared memfd backing (<memoryBacking><source type='memfd'/>)",
	"private memory (<access mode='private'/>)",
	"hugepages",
	"NUMA cells (libvirt names the RAM ram-node<N>, not pc.ram)",
	"host device (VFIO)",
	"vhost-user interface",
	"virtiofs (vhost-user-fs)",
	"memory device (dimm, nvdimm, virtio-mem or virtio-pmem)",
	"shmem device",
	"emulator is not kvmlu-qemu",
	"QEMU not started through kvmlu-qemu (no pc.ram memfd of the wrapper)",
	"not a KVM domain",
};

const char *lvram_reason_text(unsigned int bit)
{
	for (unsigned int i = 0; i < LVRAM_NR_REASONS; i++)
		if (bit == 1u << i)
			return reason_words[i];
	return "?";
}

void lvram_reasons_text(unsigned int reasons, char *buf, size_t len)
{
	size_t used = 0;

	if (!len)
		return;
	buf[0] = '\0';
	for (unsigned int i = 0; i < LVRAM_NR_REASONS && used < len; i++) {
		int n;

		if (!(reasons & (1u << i)))
			continue;
		n = snprintf(buf + used, len - used, "%s%s", used ? "; " : "", reason_words[i]);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

static bool is(xmlNodePtr n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && !n->ns && !strcmp((const char *)n->name, name);
}

/* The one child element named name: 0 (*out NULL if none), -EINVAL if two. */
static int only_child(xmlNodePtr parent, const char *name, xmlNodePtr *out, char *err,
		      size_t errlen)
{
	*out = NULL;
	for (xmlNodePtr c = parent->children; c; c = c->next) {
		if (!is(c, name))
			continue;
		if (*out)
			return kvmlu_err(err, errlen, -EINVAL, "<%s> has two <%s>",
					 (const char *)parent->name, name);
		*out = c;
	}
	return 0;
}

/* The attribute's value equals want (a missing attribute equals nothing). */
static bool attr_is(xmlNodePtr n, const char *attr, const char *want)
{
	xmlChar *v = xmlGetNoNsProp(n, (const xmlChar *)attr);
	bool eq = v && !strcmp((const char *)v, want);

	xmlFree(v);
	return eq;
}

static int memory_backing(xmlNodePtr dom, unsigned int *r, char *err, size_t errlen)
{
	xmlNodePtr mb, src, acc, huge;
	int ret;

	ret = only_child(dom, "memoryBacking", &mb, err, errlen);
	if (ret)
		return ret;
	if (!mb) {
		*r |= LVRAM_NO_MEMFD;
		return 0;
	}
	if ((ret = only_child(mb, "source", &src, err, errlen)) ||
	    (ret = only_child(mb, "access", &acc, err, errlen)) ||
	    (ret = only_child(mb, "hugepages", &huge, err, errlen)))
		return ret;
	if (!src || !attr_is(src, "type", "memfd"))
		*r |= LVRAM_NO_MEMFD;
	/* No <access>: libvirt leaves share out and QEMU's memfd default is shared. */
	if (acc && !attr_is(acc, "mode", "shared"))
		*r |= LVRAM_PRIVATE;
	if (huge)
		*r |= LVRAM_HUGEPAGES;
	return 0;
}

static int numa(xmlNodePtr dom, unsigned int *r, char *err, size_t errlen)
{
	xmlNodePtr cpu, nm;
	int ret;

	ret = only_child(dom, "cpu", &cpu, err, errlen);
	if (ret || !cpu)
		return ret;
	ret = only_child(cpu, "numa", &nm, err, errlen);
	if (ret || !nm)
		return ret;
	for (xmlNodePtr c = nm->children; c; c = c->next)
		if (is(c, "cell"))
			*r |= LVRAM_NUMA;
	return 0;
}

static bool emulator_is_wrapper(xmlNodePtr emu)
{
	xmlChar *path = xmlNodeGetContent(emu);
	const char *base;
	bool yes = false;

	if (path) {
		base = strrchr((const char *)path, '/');
		base = base ? base + 1 : (const char *)path;
		yes = !strcmp(base, LVRAM_EMULATOR_NAME);
	}
	xmlFree(path);
	return yes;
}

static int devices(xmlNodePtr dom, enum lvram_started started, unsigned int *r, char *err,
		   size_t errlen)
{
	xmlNodePtr devs, emu = NULL;
	int ret;

	ret = only_child(dom, "devices", &devs, err, errlen);
	if (ret)
		return ret;
	if (devs)
		ret = only_child(devs, "emulator", &emu, err, errlen);
	if (ret)
		return ret;
	for (xmlNodePtr c = devs ? devs->children : NULL; c; c = c->next) {
		xmlNodePtr drv;

		if (is(c, "hostdev"))
			*r |= LVRAM_HOSTDEV;
		else if (is(c, "interface") && attr_is(c, "type", "vhostuser"))
			*r |= LVRAM_VHOST_USER;
		else if (is(c, "shmem"))
			*r |= LVRAM_SHMEM;
		else if (is(c, "memory")) {
			/*
			 * dimm, nvdimm, virtio-mem, virtio-pmem, and any model
			 * libvirt adds later: each is a second memory backend.
			 */
			*r |= LVRAM_MEMORY_DEVICE;
		} else if (is(c, "filesystem")) {
			ret = only_child(c, "driver", &drv, err, errlen);
			if (ret)
				return ret;
			if (drv && attr_is(drv, "type", "virtiofs"))
				*r |= LVRAM_VIRTIOFS;
		}
	}
	/* The live fact wins over the name: a script may exec kvmlu-qemu. */
	if (started == LVRAM_STARTED_PLAIN)
		*r |= LVRAM_NOT_STARTED;
	else if (started == LVRAM_STARTED_UNKNOWN && (!emu || !emulator_is_wrapper(emu)))
		*r |= LVRAM_NOT_WRAPPER;
	return 0;
}

int lvram_classify(const char *xml, size_t len, enum lvram_started started,
		   unsigned int *reasons, char *err, size_t errlen)
{
	unsigned int r = 0;
	xmlDocPtr doc;
	xmlNodePtr root;
	int ret;

	*reasons = 0;
	doc = libvirt_xml_parse(xml, len, err, errlen);
	if (!doc)
		return len > LIBVIRT_XML_MAX ? -EMSGSIZE : -EINVAL;
	root = xmlDocGetRootElement(doc);
	if (!root || !is(root, "domain")) {
		ret = kvmlu_err(err, errlen, -EINVAL, "not a libvirt domain (root <%.32s>)",
				root ? (const char *)root->name : "");
		goto out;
	}
	if (!attr_is(root, "type", "kvm"))
		r |= LVRAM_NOT_KVM;
	if ((ret = memory_backing(root, &r, err, errlen)) ||
	    (ret = numa(root, &r, err, errlen)) ||
	    (ret = devices(root, started, &r, err, errlen)))
		goto out;
	*reasons = r;
out:
	xmlFreeDoc(doc);
	return ret;
}

void lvram_plan_text(bool refuse, unsigned int reasons, const char *why, char *buf,
		     size_t len)
{
	char r[320];

	if (why)
		snprintf(r, sizeof(r), "domain XML not judged: %s", why);
	else if (reasons)
		lvram_reasons_text(reasons, r, sizeof(r));
	else
		snprintf(r, sizeof(r), "in place would be possible with libvirt_ram "
			 "\"in-place\" or \"in-place-or-save\"");
	snprintf(buf, len, "%s, RAM would go to disk: %s", refuse ? "refused" : "managed save", r);
}

void lvram_plan_text_in_place(bool refuse, bool paused, unsigned int reasons, const char *why,
			      char *buf, size_t len)
{
	char r[320];

	if (!why && !reasons && !paused) {
		snprintf(buf, len, "in place: RAM to be kept in a LUO session across the kexec");
		return;
	}
	if (why)
		snprintf(r, sizeof(r), "domain XML not judged: %s", why);
	else
		lvram_reasons_text(reasons, r, sizeof(r));
	if (paused)
		snprintf(r + strlen(r), sizeof(r) - strlen(r), "%spaused before the update (only a "
			 "running domain keeps its RAM in place)", why || reasons ? "; " : "");
	snprintf(buf, len, "%s, RAM would go to disk: %s", refuse ? "refused" : "managed save", r);
}
