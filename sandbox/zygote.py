"""A warm Python that forks one child per ``run_python`` call (started by mcp_server.py).

Starting ``python3`` costs about 8 ms of CPU, most of a ``run_python`` call; a fork of this
small, single-threaded process costs well under 1 ms. Standard library only.

Protocol over a SOCK_SEQPACKET socket (file descriptor in ``argv[1]``), one message each:
    server -> zygote: b"R" with three descriptors: the code (a memfd), stdout and stderr pipes
    zygote -> server: struct "=cii": (b"P", pid, 0) child started, (b"E", errno, 0) fork failed,
                      (b"X", pid, exit code) a child ended (-N: killed by signal N)
The child runs the code as ``python3 -I -`` would (module ``__main__``, ``sys.argv == ["-"]``,
stdin /dev/null), in its own session so the server can kill it with everything it started.
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import sys
from typing import Any

MESSAGE = struct.Struct("=cii")


def _run_child(sock: socket.socket, fds: list[int]) -> None:
    """In the forked child: wire up the descriptors, run the code, never return."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.setsid()
    code_fd, out_fd, err_fd = fds
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    with open(code_fd, "rb") as f:
        source = f.read()
    for fd in (out_fd, err_fd, null):
        os.close(fd)
    sock.close()
    try:  # the OOM killer's first choice, as for run_shell commands
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    except OSError:
        pass

    import builtins
    import types

    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    sys.argv = ["-"]
    status = 0
    try:
        exec(compile(source, "<stdin>", "exec"), main.__dict__)
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            status = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
            status = 1
    except BaseException as exc:
        import traceback

        traceback.print_exception(type(exc), exc, exc.__traceback__.tb_next if exc.__traceback__ else None)
        status = 1
    try:
        import atexit

        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(status)


def main() -> None:
    sock = socket.socket(fileno=int(sys.argv[1]))

    def reap(*_: Any) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            try:
                sock.send(MESSAGE.pack(b"X", pid, os.waitstatus_to_exitcode(status)))
            except OSError:
                os._exit(0)

    signal.signal(signal.SIGCHLD, reap)
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(sock, 16, 3)
        except OSError:  # the server went away (its container is being removed)
            os._exit(0)
        if not msg:  # the server went away
            os._exit(0)
        try:
            pid = os.fork()
        except OSError as exc:  # EAGAIN at the container's pids limit
            reply = MESSAGE.pack(b"E", exc.errno or 0, 0)
        else:
            if pid == 0:
                _run_child(sock, fds)
            reply = MESSAGE.pack(b"P", pid, 0)
        for fd in fds:
            os.close(fd)
        try:
            sock.send(reply)
        except OSError:
            os._exit(0)


if __name__ == "__main__":
    main()
