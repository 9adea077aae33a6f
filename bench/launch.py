"""Run one command and report what it used: `python -S bench/launch.py FD ARGV...` writes the command's pid,
then its wall seconds, CPU seconds, peak RSS and exit code, to file descriptor FD.

bench/run.py measures every command through this small process: Linux charges a process's ru_maxrss with
the RSS of the process that spawned it (exec folds the spawner's high-water mark in, vfork or not), so a
command spawned by the benchmark itself would never show less than the benchmark's own RSS. Spawned from
here it shows its own, or at most this launcher's (`floor`, written with the result)."""

import os
import sys
import time


def _high_water_kib() -> int:
    """This process's peak RSS so far: what a process it spawns starts its ru_maxrss at."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def main() -> int:
    channel, argv = int(sys.argv[1]), sys.argv[2:]
    floor = _high_water_kib()
    started = time.perf_counter()
    pid = os.posix_spawnp(argv[0], argv, os.environ)
    os.write(channel, f"{pid}\n".encode())
    _, status, usage = os.wait4(pid, 0)
    elapsed = time.perf_counter() - started
    cpu = usage.ru_utime + usage.ru_stime
    code = os.waitstatus_to_exitcode(status)
    os.write(channel, f"{elapsed!r} {cpu!r} {usage.ru_maxrss} {floor} {code}\n".encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
