// SPDX-License-Identifier: GPL-2.0
/*
 * Decoding one libvirt hook call (see libvirt_hook_event.h). No
 * lifecycle: pure functions over argv and a buffer.
 */
#include <errno.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <string.h>

#include "agent/journal/domain_report.h"
#include "agent/libvirt/libvirt_hook_event.h"
#include "agent/libvirt/libvirt_metadata.h"
#include "common/err.h"

static const char *const op_names[LIBVIRT_HOOK_NR_OPS] = {
	[LIBVIRT_HOOK_PREPARE] = "prepare",
	[LIBVIRT_HOOK_START] = "start",
	[LIBVIRT_HOOK_STARTED] = "started",
	[LIBVIRT_HOOK_STOPPED] = "stopped",
	[LIBVIRT_HOOK_RELEASE] = "release",
	[LIBVIRT_HOOK_MIGRATE] = "migrate",
	[LIBVIRT_HOOK_RESTORE] = "restore",
	[LIBVIRT_HOOK_RECONNECT] = "reconnect",
	[LIBVIRT_HOOK_ATTACH] = "attach",
};

const char *libvirt_hook_op_name(enum libvirt_hook_op op)
{
	return (unsigned int)op < LIBVIRT_HOOK_NR_OPS ? op_names[op] : "?";
}

bool libvirt_hook_op_reported(enum libvirt_hook_op op)
{
	/*
	 * prepare comes before start with nothing running yet, and a migrating
	 * domain is reported by its start/stopped on either side.
	 */
	return op != LIBVIRT_HOOK_PREPARE && op != LIBVIRT_HOOK_MIGRATE &&
	       (unsigned int)op < LIBVIRT_HOOK_NR_OPS;
}

/* Printable ASCII or UTF-8 bytes, no control characters, no '/'. */
static bool name_ok(const char *s, size_t max)
{
	size_t n = strnlen(s, max);

	if (n == 0 || n == max)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f || c == '/')
			return false;
	}
	return true;
}

/* libvirt's words: "begin", "end", "-", "shutdown", "crashed", ... */
static bool word_ok(const char *s)
{
	size_t n = strnlen(s, LIBVIRT_HOOK_WORD_MAX);

	if (n == 0 || n == LIBVIRT_HOOK_WORD_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '-' || s[i] == '_'))
			return false;
	return true;
}

/* An untrusted word for an error message: control bytes shown as '?'. */
static const char *shown(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++)
		buf[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
	buf[i] = '\0';
	return buf;
}

int libvirt_hook_event_parse_args(int argc, char *const argv[],
				  struct libvirt_hook_event *ev, char *err, size_t errlen)
{
	struct libvirt_hook_event e;
	unsigned int op;
	char b[65];

	memset(&e, 0, sizeof(e));
	if (argc != 5)
		return kvmlu_err(err, errlen, -EINVAL,
				 "%d arguments, want 4: domain operation sub-operation extra",
				 argc - 1);
	if (!name_ok(argv[1], LIBVIRT_HOOK_NAME_MAX))
		return kvmlu_err(err, errlen, -EINVAL, "domain name \"%s\" refused",
				 shown(argv[1], b, sizeof(b)));
	for (op = 0; op < LIBVIRT_HOOK_NR_OPS; op++)
		if (!strcmp(argv[2], op_names[op]))
			break;
	if (op == LIBVIRT_HOOK_NR_OPS)
		return kvmlu_err(err, errlen, -EINVAL, "operation \"%s\" unknown",
				 shown(argv[2], b, 33));
	if (!word_ok(argv[3]))
		return kvmlu_err(err, errlen, -EINVAL, "sub-operation \"%s\" refused",
				 shown(argv[3], b, 33));
	if (!word_ok(argv[4]))
		return kvmlu_err(err, errlen, -EINVAL, "extra argument \"%s\" refused",
				 shown(argv[4], b, 33));
	snprintf(e.domain, sizeof(e.domain), "%s", argv[1]);
	e.op = (enum libvirt_hook_op)op;
	snprintf(e.sub, sizeof(e.sub), "%s", argv[3]);
	snprintf(e.extra, sizeof(e.extra), "%s", argv[4]);
	*ev = e;
	return 0;
}

/* The only child element of root named name (no namespace), NULL if absent. */
static int only_child(xmlNodePtr root, const char *name, xmlNodePtr *out,
		      char *err, size_t errlen)
{
	*out = NULL;
	for (xmlNodePtr n = root->children; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE || n->ns || strcmp((const char *)n->name, name))
			continue;
		if (*out)
			return kvmlu_err(err, errlen, -EINVAL, "more than one <%s>", name);
		*out = n;
	}
	return 0;
}

static int child_text(xmlNodePtr root, const char *name, char *buf, size_t len,
		      char *err, size_t errlen)
{
	xmlNodePtr n;
	xmlChar *t;
	int ret;

	ret = only_child(root, name, &n, err, errlen);
	if (ret)
		return ret;
	if (!n)
		return kvmlu_err(err, errlen, -EINVAL, "domain XML without <%s>", name);
	t = xmlNodeGetContent(n);
	if (!t)
		return kvmlu_err(err, errlen, -ENOMEM, "out of memory");
	if (strlen((const char *)t) >= len)
		ret = kvmlu_err(err, errlen, -EINVAL, "<%s> longer than %zu bytes", name, len - 1);
	else
		snprintf(buf, len, "%s", (const char *)t);
	xmlFree(t);
	return ret;
}

int libvirt_hook_event_parse_xml(const char *xml, size_t len,
				 struct libvirt_hook_event *ev, char *err, size_t errlen)
{
	char name[LIBVIRT_HOOK_NAME_MAX], uuid[LIBVIRT_UUID_LEN + 2], b[65];
	xmlNodePtr root, metadata;
	xmlDocPtr doc;
	bool optout;
	int ret;

	doc = libvirt_xml_parse(xml, len, err, errlen);
	if (!doc)
		return len > LIBVIRT_XML_MAX ? -EMSGSIZE : -EINVAL;
	root = xmlDocGetRootElement(doc);
	if (!root || root->ns || strcmp((const char *)root->name, "domain")) {
		ret = kvmlu_err(err, errlen, -EINVAL, "root element is not <domain>");
		goto err_free_doc;
	}
	ret = child_text(root, "name", name, sizeof(name), err, errlen);
	if (ret)
		goto err_free_doc;
	if (strcmp(name, ev->domain)) {
		ret = kvmlu_err(err, errlen, -EINVAL, "XML is of domain \"%s\", argv says \"%.64s\"",
				shown(name, b, sizeof(b)), ev->domain);
		goto err_free_doc;
	}
	ret = child_text(root, "uuid", uuid, sizeof(uuid), err, errlen);
	if (ret)
		goto err_free_doc;
	if (!domain_report_uuid_ok(uuid)) {
		ret = kvmlu_err(err, errlen, -EINVAL, "<uuid> \"%s\" is not a UUID",
				shown(uuid, b, 40));
		goto err_free_doc;
	}
	ret = only_child(root, "metadata", &metadata, err, errlen);
	if (ret)
		goto err_free_doc;
	ret = libvirt_metadata_optout_node(metadata, &optout, err, errlen);
	if (ret)
		goto err_free_doc;
	memcpy(ev->uuid, uuid, sizeof(ev->uuid));
	ev->optout = optout;
err_free_doc:
	xmlFreeDoc(doc);
	return ret;
}
