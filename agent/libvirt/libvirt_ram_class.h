/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Could a running libvirt domain keep its RAM in place across a host
 * update (docs/libvirt-ram-in-place.md, section 4)? A pure judgement on
 * the domain's live XML (virDomainGetXMLDesc) and one live fact, so every
 * rule is tested on fixtures without libvirtd. The answer is a set of
 * reasons; none means in-place is possible. libvirt_domains.c asks it for
 * each domain in an update and the journal keeps the text.
 *
 * The XML is untrusted: parsed with libvirt_xml_parse (bounded size, no
 * DOCTYPE, no entities), only fixed paths are read (no recursion), and a
 * document that is not one <domain> or that says one thing twice
 * (<memoryBacking>, <emulator>, <source>, <access>) is refused with
 * -EINVAL and a message, not judged.
 */
#ifndef KVMLU_LIBVIRT_RAM_CLASS_H
#define KVMLU_LIBVIRT_RAM_CLASS_H

#include <stdbool.h>
#include <stddef.h>

/* Each a reason the RAM cannot stay in place; the names are lvram_reason_text's. */
enum {
	LVRAM_NO_MEMFD		= 1u << 0,	/* no <memoryBacking><source type='memfd'/> */
	LVRAM_PRIVATE		= 1u << 1,	/* <access mode='private'/> */
	LVRAM_HUGEPAGES		= 1u << 2,	/* <hugepages/> */
	LVRAM_NUMA		= 1u << 3,	/* <cpu><numa><cell>: RAM is ram-node<N> */
	LVRAM_HOSTDEV		= 1u << 4,	/* <hostdev> (VFIO pins the RAM) */
	LVRAM_VHOST_USER	= 1u << 5,	/* <interface type='vhostuser'> */
	LVRAM_VIRTIOFS		= 1u << 6,	/* <filesystem> with driver virtiofs */
	LVRAM_MEMORY_DEVICE	= 1u << 7,	/* <memory model=dimm|nvdimm|virtio-mem|...> */
	LVRAM_SHMEM		= 1u << 8,	/* <shmem>: a second memory backend */
	LVRAM_NOT_WRAPPER	= 1u << 9,	/* <emulator> is not kvmlu-qemu */
	LVRAM_NOT_STARTED	= 1u << 10,	/* its QEMU has no pc.ram memfd from kvmlu-qemu */
	LVRAM_NOT_KVM		= 1u << 11,	/* <domain type=...> not kvm */
	LVRAM_NR_REASONS	= 12,
};

/* What is known about the running domain besides its XML. */
enum lvram_started {
	LVRAM_STARTED_UNKNOWN,	/* not looked (or could not): judged by <emulator> */
	LVRAM_STARTED_WRAPPER,	/* its QEMU holds kvmlu-qemu's pc.ram memfd */
	LVRAM_STARTED_PLAIN,	/* its QEMU was found without one */
};

#define LVRAM_EMULATOR_NAME	"kvmlu-qemu"

/*
 * Judge xml[0..len) with started. 0 and *reasons (0: in place possible),
 * or -EINVAL/-EMSGSIZE with err (the XML refused; *reasons 0).
 */
int lvram_classify(const char *xml, size_t len, enum lvram_started started,
		   unsigned int *reasons, char *err, size_t errlen);

/* One reason bit's words, e.g. "hugepages"; "?" for anything else. */
const char *lvram_reason_text(unsigned int bit);

/* Every reason in reasons, "; " separated, into buf (cut short if full). */
void lvram_reasons_text(unsigned int reasons, char *buf, size_t len);

/*
 * The journal's words for a domain an update would save (its report's
 * ram): "managed save, RAM would go to disk: <reasons>", or with refuse
 * "refused, RAM would go to disk: <reasons>". No reasons: in place would
 * be possible with libvirt_ram "in-place" or "in-place-or-save". why, if
 * not NULL, replaces the reasons (the XML could not be judged).
 */
void lvram_plan_text(bool refuse, unsigned int reasons, const char *why, char *buf,
		     size_t len);

/*
 * The same with libvirt_ram "in-place" (refuse) or "in-place-or-save":
 * no reasons, no why and not paused is "in place: RAM to be kept in a LUO
 * session across the kexec"; a paused domain is not taken in place (its
 * QEMU is not running: "paused before the update" joins the reasons).
 */
void lvram_plan_text_in_place(bool refuse, bool paused, unsigned int reasons, const char *why,
			      char *buf, size_t len);

#endif /* KVMLU_LIBVIRT_RAM_CLASS_H */
