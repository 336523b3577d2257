#!/usr/bin/env python3
"""Drive a server (a VMM's control socket or the agent's) out of file
descriptors and check the next client is told so at once instead of
waiting in the backlog: prlimit the server's RLIMIT_NOFILE just above its
spare descriptor, fill the holes below it with idle connections (each
accepted: the server's fd count rises), connect one more and read its answer. Then
give the limit back and check a real request is answered.
Exit 0 on success, 1 with the reason on stderr."""
import argparse, json, os, resource, socket, sys, time


def fds(pid):
    return sorted(int(n) for n in os.listdir(f"/proc/{pid}/fd"))


def fail(msg):
    print(f"out_of_fds: {msg}", file=sys.stderr)
    sys.exit(1)


def links(pid):
    out = set()
    for f in fds(pid):
        try:
            out.add(os.readlink(f"/proc/{pid}/fd/{f}"))
        except FileNotFoundError:
            pass  # closed meanwhile
    return out


def wait_sockets(pid, before, want, secs=5.0):
    """Wait until the server holds want sockets it did not hold before."""
    end = time.monotonic() + secs
    while True:
        new = 0
        for link in links(pid):
            if link.startswith("socket:") and link not in before:
                new += 1
        if new >= want:
            return True
        if time.monotonic() >= end:
            return False
        time.sleep(0.02)


def read_line(s, secs):
    s.settimeout(secs)
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    return buf.decode(errors="replace").strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sock")
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--request", required=True, help="a request line answered ok afterwards")
    a = ap.parse_args()

    old = resource.prlimit(a.pid, resource.RLIMIT_NOFILE)
    open_fds = fds(a.pid)
    # Above the spare (the server's last /dev/null), so closing it frees a
    # slot under the limit; fds inherited far above (a shell's 255) stay.
    nulls = [f for f in open_fds
             if os.readlink(f"/proc/{a.pid}/fd/{f}") == "/dev/null"]
    if not nulls:
        fail("the server holds no /dev/null descriptor: where is its spare?")
    limit = nulls[-1] + 1
    free = limit - len([f for f in open_fds if f < limit])
    if free > 12:
        fail(f"{free} unused descriptor numbers below {limit}: too many holes to test")
    resource.prlimit(a.pid, resource.RLIMIT_NOFILE, (limit, old[1]))
    print(f"out_of_fds: {len(open_fds)} fds open, limit {limit}: {free} free", flush=True)
    held = []
    before = links(a.pid)
    line = None
    try:
        # Connect idle clients until one is answered: each is either held
        # (a new socket in the server, one descriptor fewer) or, once none
        # is left, told why at once. The server's own work may open and
        # close files meanwhile, so the count of clients is not fixed.
        for _ in range(free + 8):
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.connect(a.sock)
            held.append(c)
            t0 = time.monotonic()
            c.settimeout(0.05)
            while time.monotonic() - t0 < 3.0:
                try:
                    line = read_line(c, 0.05)
                    break
                except socket.timeout:
                    pass
                if wait_sockets(a.pid, before, len(held), 0.0):
                    break
            else:
                fail(f"client {len(held)} neither held nor answered within 3 s "
                     f"(fds {fds(a.pid)}, limit {limit})")
            if line is not None:
                ms = (time.monotonic() - t0) * 1000
                break
        else:
            fail(f"{len(held)} clients held and none told the server was out of descriptors")
        print(f"out_of_fds: client {len(held)} answered after {ms:.0f} ms: {line}", flush=True)
        try:
            reply = json.loads(line)
        except ValueError:
            fail(f"answer is not JSON: {line!r}")
        if reply.get("ok") is not False or "Busy" not in line \
                or "out of file descriptors" not in line:
            fail(f"expected a Busy error naming the descriptors, got {line!r}")
    finally:
        for c in held:
            c.close()
        resource.prlimit(a.pid, resource.RLIMIT_NOFILE, old)
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.connect(a.sock)
    try:
        c.sendall(a.request.encode() + b"\n")
    except BrokenPipeError:
        pass  # closed at once: what it said is read below
    line = read_line(c, 10.0)
    if '"ok":true' not in line.replace(" ", ""):
        fail(f"after the limit was given back, {a.request} got {line!r}")
    print("out_of_fds: served again once descriptors were free", flush=True)


main()
