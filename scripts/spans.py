#!/usr/bin/env python3
"""The daemon requests in strace logs of my-chrome, for scripts/bench.sh.

Each FILE is one run of one command, written by
  strace -f -ttt -T -e trace=connect,write,sendto,close -s 300 -o FILE
A request is the span from a successful `connect` on a unix socket to the
`close` of that descriptor, labelled by the `"_":["<command>"` written on
it (`write`, or `sendto`: Rust's UnixStream sends with MSG_NOSIGNAL); a
connection on which nothing was written is the "probe". Prints the requests
per run (the median count of each label) and each label's median span.
A call strace split across threads (`<unfinished ...>`) is not read:
my-chrome talks to the daemon from its main thread only.

Usage: spans.py FILE...
"""

import re
import statistics
import sys

# [pid] seconds.micros call(fd, rest) = result [<duration>]
LINE = re.compile(r'^(?:\d+ +)?(\d+\.\d+) (connect|write|sendto|close)\((\d+)(?:, (.*))?\) += (-?\d+)[^<]*(?:<([\d.]+)>)?$')
COMMAND = re.compile(r'\\"_\\":\[\\"([^\\"]+)\\"')


def spans(path):
    """(label, seconds) for every request in one strace log."""
    open_fds, done = {}, []
    for line in open(path, encoding="utf-8", errors="replace"):
        m = LINE.match(line.rstrip("\n"))
        if not m:
            continue
        at, call, fd, rest, result, took = m.groups()
        at = float(at)
        if call == "connect":
            # A refused connect (nscd's absent socket) is no request.
            if "AF_UNIX" in rest and result == "0":
                open_fds[fd] = [at, "probe"]
        elif fd in open_fds:
            request = open_fds[fd]
            if call == "close":
                del open_fds[fd]
                done.append((request[1], at + float(took or 0) - request[0]))
            elif request[1] == "probe":
                found = COMMAND.search(rest)
                request[1] = found.group(1) if found else "other"
    return done


def main(paths):
    runs = [spans(path) for path in paths]
    labels = sorted({label for run in runs for label, _ in run})
    counts = {label: statistics.median_low([sum(1 for l, _ in run if l == label) for run in runs])
              for label in labels}
    per_run = statistics.median_low([len(run) for run in runs])
    total = statistics.median([sum(s for _, s in run) for run in runs]) * 1000
    print(f"requests per run: {per_run} ({', '.join(f'{l} x{counts[l]}' for l in labels)});"
          f" all of them, median {total:.1f} ms")
    for label in labels:
        taken = [s * 1000 for run in runs for l, s in run if l == label]
        print(f"  {label:<12} median {statistics.median(taken):6.2f} ms ({len(taken)} in {len(runs)} runs)")


if __name__ == "__main__":
    main(sys.argv[1:] or sys.exit(__doc__))
