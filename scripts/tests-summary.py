#!/usr/bin/env python3
"""What nextest's JUnit reports say, for scripts/test.sh (one report per
phase of the run).

  tests-summary.py counts REPORT...    tests run, failed, and those that
                                       passed but skipped a part of
                                       themselves (they print SKIPPED, as a
                                       real-extension test does without the
                                       extension's source outside CI)
  tests-summary.py binaries REPORT...  where the time went, by test binary:
                                       the tests each ran, its span (its
                                       first test's start to its last one's
                                       end, in its phase) and the sum of its
                                       tests' times, longest span first;
                                       tests run side by side, so spans
                                       overlap
"""
import sys
import xml.etree.ElementTree as ET
from datetime import datetime, timedelta


def cases(paths):
    for path in paths:
        phase = path.rsplit("junit-", 1)[-1].removesuffix(".xml")
        for suite in ET.parse(path).getroot().iter("testsuite"):
            for case in suite.iter("testcase"):
                yield phase, suite.get("name"), case


def counts(paths):
    run = failed = 0
    skipped = []
    for _, binary, case in cases(paths):
        run += 1
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        said = "".join(part.text or "" for part in case if part.tag in ("system-out", "system-err"))
        if "SKIPPED" in said:
            skipped.append(f"{binary} {case.get('name')}")
    print(f"{run} {failed} {len(skipped)}")
    for name in skipped:
        print(f"skipped a part: {name}", file=sys.stderr)


def binaries(paths):
    spans = {}
    for phase, binary, case in cases(paths):
        start = datetime.fromisoformat(case.get("timestamp"))
        took = float(case.get("time"))
        first, last, count, total = spans.get((binary, phase), (start, start, 0, 0.0))
        spans[(binary, phase)] = (
            min(first, start),
            max(last, start + timedelta(seconds=took)),
            count + 1,
            total + took,
        )
    rows = sorted(
        (((last - first).total_seconds(), binary, phase, count, total)
         for (binary, phase), (first, last, count, total) in spans.items()),
        reverse=True,
    )
    for span, binary, phase, count, total in rows:
        print(f"  {span:8.1f} s  {binary:<34} {phase:<13} {count:4d} tests, {total:8.1f} s in all")


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("counts", "binaries"):
        sys.exit(__doc__)
    {"counts": counts, "binaries": binaries}[sys.argv[1]](sys.argv[2:])
