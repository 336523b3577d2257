# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the kvmlu_host_update role's Python parts, on the
controller: the filters that read kvmlu's JSON documents and the module's
kernel-image reading. Run by tests/native/ansible_role_reads_kvmlu_json.sh,
which also hands over what a real kvmlu CLI printed:
  KVMLU_HOST_UPDATE_JSON  `kvmlu host-update --dry-run --json` (refused here)
  KVMLU_REPORT_JSON       `kvmlu report --json` after it
  KVMLU_BZIMAGE           the project's kernel, if built
"""

import importlib.util
import json
import os
import tempfile
import unittest

ROLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "roles", "kvmlu_host_update")


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROLE, path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


filters = load("kvmlu_report", "filter_plugins/kvmlu_report.py")
target = load("kvmlu_kernel_target", "library/kvmlu_kernel_target.py")


def update(uid, outcome="done", dry_run=False, vms=()):
    return {"update_id": uid, "outcome": outcome, "dry_run": dry_run, "vms": list(vms)}


def report(*updates):
    return {"kvmlu": "report", "version": 1, "updates": list(updates)}


class Documents(unittest.TestCase):
    def test_reads_a_version_1_document(self):
        doc = filters.kvmlu_doc(json.dumps(report(update("u1"))), "report")
        self.assertNotIn("invalid", doc)
        self.assertEqual(doc["updates"][0]["update_id"], "u1")

    def test_refuses_other_versions_kinds_and_non_json(self):
        cases = [(json.dumps(dict(report(), version=2)), "version 2"),
                 (json.dumps(dict(report(), kvmlu="status")), "not a kvmlu report"),
                 (json.dumps([update("u1")]), "not a kvmlu report"),
                 ("", "no JSON"),
                 ("the agent is not running", "no JSON")]
        for text, why in cases:
            with self.subTest(text=text):
                self.assertIn(why, filters.kvmlu_doc(text, "report")["invalid"])

    def test_newest_update_is_a_finished_real_one_after_the_preflight(self):
        newest = filters.kvmlu_newest_update
        self.assertEqual(newest(report(update("u1"), update("u2")), "u1")["update_id"], "u2")
        self.assertEqual(newest(report(update("u2", dry_run=True)), "u1"), {})
        self.assertEqual(newest(report(update("u1")), "u1"), {})
        self.assertEqual(newest(report(update("u2", outcome="running")), "u1"), {})
        self.assertEqual(newest(report(), "u1"), {})
        self.assertEqual(newest({"kvmlu": "report", "invalid": "x"}, "u1"), {})
        self.assertEqual(newest(dict(report(), updates="u2"), "u1"), {})

    def test_update_text_has_a_row_per_vm(self):
        u = update("u3", "rolled-back", vms=[
            {"name": "vm-a", "state": "aborted", "blackout_ns": 1500000,
             "checksum": "ab", "checksum_after": "ab", "error": ""},
            {"name": "vm-b", "state": "failed", "blackout_ns": -1,
             "checksum": "ab", "checksum_after": "cd", "error": "prepare-update failed"}])
        u.update(failed_phase="prepare", error="VM vm-b: prepare-update failed")
        text = filters.kvmlu_update_text(u).splitlines()
        self.assertEqual(text[0], "update u3: rolled-back")
        self.assertIn("failed in prepare: VM vm-b: prepare-update failed", text)
        self.assertRegex(text[-2], r"^vm-a +aborted +1\.5 ms +equal$")
        self.assertRegex(text[-1], r"^vm-b +failed +- +MISMATCH +prepare-update failed$")

    def test_update_text_survives_hostile_values(self):
        for u in [None, [], {"vms": "x"}, {"vms": [1, None, {"name": 7, "blackout_ns": True}]},
                  {"notes": {"a": 1}, "outcome": ["done"]}]:
            with self.subTest(u=u):
                self.assertIsInstance(filters.kvmlu_update_text(u), str)


class KernelImage(unittest.TestCase):
    def image(self, data):
        f = tempfile.NamedTemporaryFile(delete=False)
        f.write(data)
        f.close()
        self.addCleanup(os.unlink, f.name)
        return f.name

    def test_version_from_a_boot_header(self):
        data = bytearray(0x1000)
        data[0x202:0x206] = b"HdrS"
        data[0x20E:0x210] = (0x300).to_bytes(2, "little")
        text = b"7.3.4 (root@vm) #1 SMP PREEMPT Fri Dec  4 12:15:11 UTC 2026\0"
        data[0x500:0x500 + len(text)] = text
        self.assertEqual(target.image_version(self.image(bytes(data))), text[:-1].decode())

    def test_no_version_from_what_is_not_a_bzimage(self):
        self.assertEqual(target.image_version(self.image(os.urandom(2000000))), "")
        self.assertEqual(target.image_version(self.image(b"HdrS")), "")
        self.assertEqual(target.image_version("/nonexistent/bzImage"), "")
        unterminated = bytearray(0x1000)
        unterminated[0x202:0x206] = b"HdrS"
        unterminated[0x20E:0x210] = (0x300).to_bytes(2, "little")
        unterminated[0x500:0x1000] = b"x" * 0xB00
        self.assertEqual(target.image_version(self.image(bytes(unterminated))), "")

    def test_running_build_is_release_builder_and_version(self):
        image = "7.3.4 (root@vm) #1 SMP PREEMPT Fri Dec  4 12:15:11 UTC 2026"
        proc = ("Linux version 7.3.4 (root@vm) (gcc (Debian 12.2.0-14) 12.2.0, GNU ld 2.40) "
                "#1 SMP PREEMPT Fri Dec  4 12:15:11 UTC 2026\n")
        self.assertTrue(target.runs_build(proc, image))
        self.assertFalse(target.runs_build(proc.replace("12:15:11", "12:15:12"), image))
        self.assertFalse(target.runs_build(proc.replace("7.3.4", "7.3.5"), image))
        self.assertFalse(target.runs_build(proc, "garbage"))

    @unittest.skipUnless(os.environ.get("KVMLU_BZIMAGE"), "no project kernel built")
    def test_project_kernel_has_a_version(self):
        self.assertRegex(target.image_version(os.environ["KVMLU_BZIMAGE"]), r"^\S+ \(\S+@\S+\) #")


@unittest.skipUnless(os.environ.get("KVMLU_HOST_UPDATE_JSON"), "no output of a real kvmlu")
class RealCli(unittest.TestCase):
    def test_refused_preflight_reads_with_its_reasons(self):
        doc = filters.kvmlu_doc(os.environ["KVMLU_HOST_UPDATE_JSON"], "host-update")
        self.assertNotIn("invalid", doc)
        self.assertEqual(doc["outcome"], "refused")
        text = filters.kvmlu_update_text(doc["report"])
        self.assertIn("refused (dry run)", text)
        self.assertIn("failed in preflight: no /dev/liveupdate", text)

    def test_report_holds_that_update(self):
        pre = filters.kvmlu_doc(os.environ["KVMLU_HOST_UPDATE_JSON"], "host-update")
        doc = filters.kvmlu_doc(os.environ["KVMLU_REPORT_JSON"], "report")
        self.assertNotIn("invalid", doc)
        self.assertEqual(doc["updates"][-1]["update_id"], pre["update_id"])
        # A dry run is never the update the role waits for after a kexec.
        self.assertEqual(filters.kvmlu_newest_update(doc, ""), {})


if __name__ == "__main__":
    unittest.main(verbosity=2)
