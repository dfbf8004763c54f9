#!/usr/bin/env python3
"""A child for tools/fleet-vs-kernel: a process whose memory grows, then holds.

It maps and touches memory in 4 MiB pieces at FLEET_CHILD_RATE_MIB MiB/s (32 by default) until it
holds FLEET_CHILD_TARGET_MIB MiB (384 by default), then holds it until SIGTERM or SIGINT (exit 0) or
SIGKILL.

With MEMORY_PRESSURE_WATCH set (systemd's memory-pressure protocol, as `mempressure supervise`
gives a child with "channel": "systemd": a FIFO, each byte readable a warning), it reads the
byte(s) and unmaps half of the pieces it holds on each warning; its target becomes what it kept,
so it does not grow back. With FLEET_CHILD_SIGNAL=USR1 (`"channel": "signal:USR1"`) it does the same
on each SIGUSR1. Without either, it speaks no protocol.

With FLEET_CHILD_HTTP=1 it is an interactive service: it first starts `python3 -m http.server` on a
free port of 127.0.0.1 as its own child, and ends it as it ends itself; its SIGTERM line then says
whether that server still ran (`http=alive`) or had died (`http=dead`).

FLEET_CHILD_LOG names a file to which it appends one line per event, each starting with the wall
clock time (seconds since the epoch) and its name (FLEET_CHILD_NAME):
  T NAME start pid=PID target=BYTES watch=0|1
  T NAME held BYTES                      (each second while it grows, and when it reaches its target)
  T NAME warning bytes=N freed=BYTES held=BYTES   (signal=USR1 in place of bytes=N for a signal)
  T NAME signal SIGTERM held=BYTES [http=alive|dead]   (then it exits 0)
A SIGKILL leaves no line: the parent sees it in the exit status.

What it holds compresses as a program's heap does, about 3 to 1: each 4 KiB page is a third random
bytes and the rest zeros (zram's lzo-rle stores one in about 1.4 KiB). A page of one repeated byte
would be kept by zram as that byte alone (its `same_pages`), and compression would look free.

Its process name (`comm`, what earlyoom's --avoid and --prefer match) is its name, cut to 15 bytes.
"""
import ctypes
import mmap
import os
import select
import signal
import subprocess
import sys
import time

PIECE = 4 << 20
PAGE = 4096
FILL = (os.urandom(PAGE // 3) + bytes(PAGE - PAGE // 3)) * (PIECE // PAGE)

name = os.environ.get("FLEET_CHILD_NAME", "child-%d" % os.getpid())
PR_SET_NAME = 15
ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NAME, name.encode()[:15], 0, 0, 0)
target = int(float(os.environ.get("FLEET_CHILD_TARGET_MIB", "384")) * (1 << 20))
rate = float(os.environ.get("FLEET_CHILD_RATE_MIB", "32")) * (1 << 20)
log_path = os.environ.get("FLEET_CHILD_LOG")
log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) if log_path else -1


def record(text):
    if log >= 0:
        os.write(log, ("%.3f %s %s\n" % (time.time(), name, text)).encode())


pieces = []


def held():
    return len(pieces) * PIECE


server = None
if os.environ.get("FLEET_CHILD_HTTP") == "1":
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", "0", "--bind", "127.0.0.1"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def on_signal(number, frame):
    http = ""
    if server is not None:
        http = " http=%s" % ("alive" if server.poll() is None else "dead")
        server.kill()
        server.wait(timeout=2)  # Reaped here: nothing of the service is left behind it.
    record("signal %s held=%d%s" % (signal.Signals(number).name, held(), http))
    os._exit(0)


signal.signal(signal.SIGTERM, on_signal)
signal.signal(signal.SIGINT, on_signal)


def give_back(how):
    """Unmaps half of the pieces held; the target becomes what is kept, so it does not grow back."""
    global target
    freed = len(pieces) - len(pieces) // 2
    for piece in pieces[len(pieces) - freed:]:
        piece.close()  # munmap: the pages go back to the kernel at once.
    del pieces[len(pieces) - freed:]
    target = held()
    record("warning %s freed=%d held=%d" % (how, freed * PIECE, held()))


if os.environ.get("FLEET_CHILD_SIGNAL") == "USR1":
    signal.signal(signal.SIGUSR1, lambda number, frame: give_back("signal=USR1"))

watch = -1
watch_path = os.environ.get("MEMORY_PRESSURE_WATCH")
if watch_path:
    # Read and write, as systemd's watchers may: opening never blocks, and no writer leaves no EOF.
    watch = os.open(watch_path, os.O_RDWR | os.O_NONBLOCK)

record("start pid=%d target=%d watch=%d" % (os.getpid(), target, 1 if watch >= 0 else 0))

interval = PIECE / rate
next_piece = time.monotonic()
last_report = time.monotonic()
reached = False
while True:
    now = time.monotonic()
    if held() < target:
        timeout = max(0.0, next_piece - now)
    else:
        if not reached:
            reached = True
            record("held %d" % held())
        timeout = 1.0
    readable = []
    if watch >= 0:
        readable, _, _ = select.select([watch], [], [], timeout)
    else:
        time.sleep(timeout)
    if readable:
        try:
            data = os.read(watch, 4096)
        except BlockingIOError:
            data = b""
        if data:
            give_back("bytes=%d" % len(data))
        continue
    now = time.monotonic()
    if held() < target and now >= next_piece:
        piece = mmap.mmap(-1, PIECE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        piece.write(FILL)  # Touched: resident.
        pieces.append(piece)
        next_piece += interval
        if next_piece < now - 1.0:
            next_piece = now  # Behind by more than a second (frozen, or starved): do not burst.
    if held() < target and now - last_report >= 1.0:
        last_report = now
        record("held %d" % held())
