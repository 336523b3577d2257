# SPDX-License-Identifier: GPL-2.0
"""Filters of the kvmlu_host_update role, run on the controller.

They read the versioned documents `kvmlu host-update --json` and
`kvmlu report --json` print (docs/agent.md, "JSON output") and turn one
update into the text of a failure message. What a managed host prints is
untrusted: a document that is not JSON, not the kind asked for or of
another version is marked invalid, never half read, and every value is
checked for its type before it is shown.
"""

import json

VERSION = 1


def kvmlu_doc(text, kind):
    """The document in text if it is a `kind` document of version 1.

    Otherwise {"kvmlu": kind, "invalid": why}: the caller fails the host
    with why (and the command's stderr).
    """
    try:
        doc = json.loads(text or "")
    except ValueError as e:
        return {"kvmlu": kind, "invalid": "no JSON document on stdout (%s)" % e}
    if not isinstance(doc, dict) or doc.get("kvmlu") != kind:
        return {"kvmlu": kind, "invalid": "not a kvmlu %s document" % kind}
    if doc.get("version") != VERSION:
        return {"kvmlu": kind, "invalid": "%s document version %r; this role reads version %d"
                % (kind, doc.get("version"), VERSION)}
    return doc


def kvmlu_newest_update(doc, before_id=""):
    """The newest update of a report document if it is a finished real
    update other than before_id; {} while there is none (yet)."""
    updates = doc.get("updates") if isinstance(doc, dict) and "invalid" not in doc else None
    if not isinstance(updates, list) or not updates or not isinstance(updates[-1], dict):
        return {}
    u = updates[-1]
    if u.get("update_id") == before_id or u.get("dry_run") is not False:
        return {}
    if not isinstance(u.get("outcome"), str) or u.get("outcome") == "running":
        return {}
    return u


def _text(v):
    return v if isinstance(v, str) and v else "-"


def _duration(ns):
    if not isinstance(ns, int) or isinstance(ns, bool) or ns < 0:
        return "-"
    return "%.1f ms" % (ns / 1e6) if ns < 1000000000 else "%.2f s" % (ns / 1e9)


def _checksums(vm):
    before, after = vm.get("checksum"), vm.get("checksum_after")
    if not (isinstance(before, str) and before and isinstance(after, str) and after):
        return "-"
    return "equal" if before == after else "MISMATCH"


def kvmlu_update_text(update):
    """An update as lines: outcome, what failed, notes, one row per VM."""
    if not isinstance(update, dict):
        return "no report"
    lines = ["update %s: %s%s" % (_text(update.get("update_id")), _text(update.get("outcome")),
                                  " (dry run)" if update.get("dry_run") is True else "")]
    if update.get("failed_phase"):
        lines.append("failed in %s: %s" % (_text(update.get("failed_phase")),
                                           _text(update.get("error"))))
    lines.append("kernel %s  initrd %s" % (_text(update.get("kernel")),
                                           _text(update.get("initrd"))))
    notes = update.get("notes")
    for note in notes if isinstance(notes, list) else []:
        lines.append("note: %s" % _text(note))
    vms = update.get("vms")
    vms = [vm for vm in vms if isinstance(vm, dict)] if isinstance(vms, list) else []
    if vms:
        row = "%-16s %-10s %10s  %-9s %s"
        lines.append(row % ("vm", "state", "blackout", "checksums", "error"))
        for vm in vms:
            lines.append((row % (_text(vm.get("name")), _text(vm.get("state")),
                                 _duration(vm.get("blackout_ns")), _checksums(vm),
                                 vm.get("error") if isinstance(vm.get("error"), str) else "")).rstrip())
    return "\n".join(lines)


class FilterModule:
    def filters(self):
        return {
            "kvmlu_doc": kvmlu_doc,
            "kvmlu_newest_update": kvmlu_newest_update,
            "kvmlu_update_text": kvmlu_update_text,
        }
