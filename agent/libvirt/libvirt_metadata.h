/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvmlu's element in a libvirt domain's <metadata>:
 *
 *   <metadata>
 *     <kvmlu:config xmlns:kvmlu="https://kvmlu.invalid/ns/1" optout="yes"/>
 *   </metadata>
 *
 * optout="yes": host-update leaves the domain alone (it stops at the
 * kexec like any process) and the hook does not report it. "no" or no
 * element: managed. Any other value is an error, never a guess. Read by
 * the hook (from the domain XML on stdin) and by the agent (from
 * virDomainGetMetadata). No lifecycle: parsing only.
 */
#ifndef KVMLU_LIBVIRT_METADATA_H
#define KVMLU_LIBVIRT_METADATA_H

#include <stdbool.h>
#include <stddef.h>

#define LIBVIRT_METADATA_NS	"https://kvmlu.invalid/ns/1"
#define LIBVIRT_METADATA_PREFIX	"kvmlu"
#define LIBVIRT_METADATA_ELEM	"config"
/* More than any domain XML libvirt writes; the hook refuses bigger input. */
#define LIBVIRT_XML_MAX		(1 << 20)

struct _xmlNode;
struct _xmlDoc;

/*
 * Parse untrusted XML text: no network, no DTD, no entity expansion; a
 * document with a DOCTYPE is refused. Returns the document (xmlFreeDoc it)
 * or NULL with the reason in err.
 */
struct _xmlDoc *libvirt_xml_parse(const char *text, size_t len, char *err, size_t errlen);

/* optout of the kvmlu:config child of a <metadata> node (NULL: none). */
int libvirt_metadata_optout_node(struct _xmlNode *metadata, bool *optout,
				 char *err, size_t errlen);

/*
 * optout from the text virDomainGetMetadata(VIR_DOMAIN_METADATA_ELEMENT)
 * returns: the element alone, <config .../> (libvirt drops the namespace
 * it selected by) or kvmlu-qualified. NULL text: no element.
 */
int libvirt_metadata_optout_text(const char *text, bool *optout, char *err, size_t errlen);

#endif /* KVMLU_LIBVIRT_METADATA_H */
