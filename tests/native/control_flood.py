#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Flood a JSON-line control socket (a VMM's or the agent's) with idle
connections and check that it keeps answering (tests/native/*_flood*.sh).

  control_flood.py SOCKET --conns N --idle-ms MS [--pid PID --max-tasks T --max-fds F]

1. N connections, every other one sending half a request line, then
   nothing more.
2. A new client's status request gets its answer or a Busy line within
   2 s (times KV_WAIT_SCALE; a hang fails); the latency is printed.
3. With --pid: the server process has at most T threads and F open fds.
4. Every flood connection is closed by the server within MS + 5 s
   (times KV_WAIT_SCALE; past its idle time).
5. A new client then gets its real answer (ok).
Prints one line per step; exits 1 with "FAIL: ..." on the first failure.
"""
import argparse
import json
import os
import resource
import socket
import sys
import time

# The "no hang" bound: far above the 100 ms an answer should take; scaled
# like every wait of tests/native/lib.sh on a slow nested host.
HANG_S = 2.0 * int(os.environ.get("KV_WAIT_SCALE", "1"))


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def connect(path):
    """A connected socket, or None if the listener's backlog stays full for HANG_S."""
    t0 = time.monotonic()
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(HANG_S)
        try:
            s.connect(path)
            return s
        except BlockingIOError:  # EAGAIN: backlog full; the server has not accepted yet
            s.close()
            if time.monotonic() - t0 > HANG_S:
                return None
            time.sleep(0.001)


def request(path, line):
    """One request on a new connection: (latency ms, reply object or None on a hang)."""
    t0 = time.monotonic()
    s = connect(path)
    if s is None:
        return (time.monotonic() - t0) * 1000, None
    buf = b""
    try:
        try:
            s.sendall(line)
        except OSError:
            pass  # turned away before reading: the Busy line is still there to read
        while b"\n" not in buf:
            left = HANG_S - (time.monotonic() - t0)
            if left <= 0:
                return (time.monotonic() - t0) * 1000, None
            s.settimeout(left)
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    except (socket.timeout, TimeoutError):
        return (time.monotonic() - t0) * 1000, None
    except OSError as e:
        # A server that refused before reading may reset the request; its line is what counts.
        if not buf:
            return (time.monotonic() - t0) * 1000, {"ok": False, "oserror": str(e)}
    finally:
        s.close()
    ms = (time.monotonic() - t0) * 1000
    if b"\n" not in buf:
        return ms, {"ok": False, "eof": buf.decode(errors="replace")}
    return ms, json.loads(buf.split(b"\n", 1)[0])


def error_class(reply):
    return (reply.get("error") or {}).get("class")


def proc_counts(pid):
    tasks = len(os.listdir("/proc/%d/task" % pid))
    fds = len(os.listdir("/proc/%d/fd" % pid))
    return tasks, fds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("socket")
    ap.add_argument("--conns", type=int, default=1000)
    ap.add_argument("--idle-ms", type=int, required=True)
    ap.add_argument("--pid", type=int)
    ap.add_argument("--max-tasks", type=int)
    ap.add_argument("--max-fds", type=int)
    a = ap.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = a.conns + 64
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < want:
        fail("RLIMIT_NOFILE hard limit %d is below the %d this needs" % (hard, want))

    status = b'{"cmd":"status","id":7}\n'
    flood = []
    t0 = time.monotonic()
    for i in range(a.conns):
        s = connect(a.socket)
        if s is None:
            fail("flood connection %d: the backlog stayed full for %.0f s" % (i, HANG_S))
        try:
            if i % 2:  # half of them idle, half with half a line never finished
                s.sendall(b'{"cmd":"sta')
        except OSError:
            pass  # already turned away (Busy) and closed: fine
        flood.append(s)
    print("flood: %d connections in %.0f ms" % (a.conns, (time.monotonic() - t0) * 1000),
          flush=True)

    ms, reply = request(a.socket, status)
    if reply is None:
        fail("new client during the flood: no answer within %.0f s (hang)" % HANG_S)
    if not (reply.get("ok") is True or error_class(reply) == "Busy"):
        fail("new client during the flood: neither an answer nor Busy: %s" % reply)
    print("during the flood: %s after %.1f ms: %s" %
          ("answer" if reply.get("ok") else "Busy", ms, json.dumps(reply)), flush=True)

    if a.pid:
        tasks, fds = proc_counts(a.pid)
        print("server pid %d: %d threads, %d fds" % (a.pid, tasks, fds), flush=True)
        if a.max_tasks is not None and tasks > a.max_tasks:
            fail("%d threads in the server, expected at most %d" % (tasks, a.max_tasks))
        if a.max_fds is not None and fds > a.max_fds:
            fail("%d fds in the server, expected at most %d" % (fds, a.max_fds))

    # Every flood connection must be closed by the server, at the latest past its idle time.
    deadline = time.monotonic() + a.idle_ms / 1000 + 5 * HANG_S / 2
    open_ = list(flood)
    timed_out = busy = 0
    while open_ and time.monotonic() < deadline:
        still = []
        for s in open_:
            s.setblocking(False)
            try:
                data = s.recv(65536)
            except BlockingIOError:
                still.append(s)
                continue
            except OSError:
                data = b""
            if data:
                timed_out += b'"Timeout"' in data
                busy += b'"Busy"' in data
                still.append(s)  # the close follows the line
                continue
            s.close()
        open_ = still
        if open_:
            time.sleep(0.05)
    print("flood connections closed by the server: %d of %d (%d told Busy, %d told Timeout)" %
          (a.conns - len(open_), a.conns, busy, timed_out), flush=True)
    if open_:
        fail("%d flood connections still open %.0f s past the idle time" % (len(open_), 5 * HANG_S / 2))
    if not timed_out:
        fail("no flood connection was told Timeout")

    ms, reply = request(a.socket, status)
    if reply is None:
        fail("after the idle time: no answer within %.0f s (hang)" % HANG_S)
    if reply.get("ok") is not True:
        fail("after the idle time: no real answer: %s" % json.dumps(reply))
    print("after the idle time: answer after %.1f ms" % ms, flush=True)


if __name__ == "__main__":
    main()
