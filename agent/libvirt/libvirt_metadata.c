// SPDX-License-Identifier: GPL-2.0
/*
 * kvmlu's domain metadata element and the strict XML parse both readers
 * use (see libvirt_metadata.h). No lifecycle: each call parses and frees.
 */
#include <errno.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <string.h>

#include "agent/libvirt/libvirt_metadata.h"
#include "common/err.h"

xmlDocPtr libvirt_xml_parse(const char *text, size_t len, char *err, size_t errlen)
{
	/*
	 * No XML_PARSE_NOENT / DTDLOAD: entities are never expanded nor
	 * fetched, so neither "billion laughs" nor external files reach us.
	 */
	const int opts = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;
	xmlDocPtr doc;

	if (len > LIBVIRT_XML_MAX) {
		kvmlu_err(err, errlen, -EMSGSIZE, "XML of %zu bytes, more than %d", len,
			  LIBVIRT_XML_MAX);
		return NULL;
	}
	if (memchr(text, '\0', len)) {
		kvmlu_err(err, errlen, -EINVAL, "XML holds a NUL byte");
		return NULL;
	}
	doc = xmlReadMemory(text, (int)len, "domain.xml", "UTF-8", opts);
	if (!doc) {
		const xmlError *e = xmlGetLastError();

		kvmlu_err(err, errlen, -EINVAL, "XML does not parse (line %d: %.80s)",
			  e ? e->line : 0, e && e->message ? e->message : "?");
		return NULL;
	}
	if (doc->intSubset || doc->extSubset) {
		kvmlu_err(err, errlen, -EINVAL, "XML with a DOCTYPE refused");
		xmlFreeDoc(doc);
		return NULL;
	}
	return doc;
}

static bool is_kvmlu_config(xmlNodePtr n)
{
	return n->type == XML_ELEMENT_NODE && n->ns && n->ns->href &&
	       !strcmp((const char *)n->ns->href, LIBVIRT_METADATA_NS) &&
	       !strcmp((const char *)n->name, LIBVIRT_METADATA_ELEM);
}

static int config_optout(xmlNodePtr cfg, bool *optout, char *err, size_t errlen)
{
	xmlChar *v;
	int ret = 0;

	/*
	 * libxml2 refuses an attribute written twice; optout beside a
	 * namespaced k:optout is two attributes to it but one question to
	 * a reader: only a plain optout is known, anything else is refused.
	 */
	for (xmlAttrPtr a = cfg->properties; a; a = a->next)
		if (a->ns || strcmp((const char *)a->name, "optout"))
			return kvmlu_err(err, errlen, -EINVAL,
					 "kvmlu:config attribute %s%s%.32s: only optout is known",
					 a->ns && a->ns->prefix ? (const char *)a->ns->prefix : "",
					 a->ns && a->ns->prefix ? ":" : "", (const char *)a->name);
	v = xmlGetNoNsProp(cfg, (const xmlChar *)"optout");

	if (!v || !strcmp((const char *)v, "no"))
		*optout = false;
	else if (!strcmp((const char *)v, "yes"))
		*optout = true;
	else
		ret = kvmlu_err(err, errlen, -EINVAL,
				"kvmlu:config optout=\"%.32s\": want yes or no", (const char *)v);
	xmlFree(v);
	return ret;
}

int libvirt_metadata_optout_node(xmlNodePtr metadata, bool *optout, char *err, size_t errlen)
{
	xmlNodePtr found = NULL;

	*optout = false;
	if (!metadata)
		return 0;
	for (xmlNodePtr n = metadata->children; n; n = n->next) {
		if (!is_kvmlu_config(n))
			continue;
		/* Two answers to one question: refuse rather than pick one. */
		if (found)
			return kvmlu_err(err, errlen, -EINVAL, "more than one kvmlu:config element");
		found = n;
	}
	return found ? config_optout(found, optout, err, errlen) : 0;
}

int libvirt_metadata_optout_text(const char *text, bool *optout, char *err, size_t errlen)
{
	xmlDocPtr doc;
	xmlNodePtr root;
	int ret;

	*optout = false;
	if (!text)
		return 0;
	doc = libvirt_xml_parse(text, strlen(text), err, errlen);
	if (!doc)
		return -EINVAL;
	root = xmlDocGetRootElement(doc);
	/*
	 * libvirt picked the element by our namespace URI and hands it back
	 * without the namespace (libvirt 9.0): accept it bare or qualified.
	 */
	if (!root || root->type != XML_ELEMENT_NODE ||
	    strcmp((const char *)root->name, LIBVIRT_METADATA_ELEM) ||
	    (root->ns && !is_kvmlu_config(root)))
		ret = kvmlu_err(err, errlen, -EINVAL, "metadata is not a kvmlu:config element");
	else
		ret = config_optout(root, optout, err, errlen);
	xmlFreeDoc(doc);
	return ret;
}
