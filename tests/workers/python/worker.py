#!/usr/bin/env python3
"""The Python worker, shared by the benchmark (bench/harness.py) and the
reliability cases (tests/reliability): hiredlock (and the Python peers) in
one long-lived process, driven over the line protocol of
tests/workers/README.md.

    python3 tests/workers/python/worker.py URL1,URL2,...

Answers {"ready": true, "runtime": "python"} first, then one JSON line per
command (contend and cancel: {"ready": true} first, then their result):

  run CASE SECONDS, count CASE K      benchmark cycles (hrlworker/cycles.py)
  hold K, hold-redis-py K, unhold     locks kept, for the RSS of holding them
  lease K TTL_MS N                     K auto-renewed locks kept (leases phase)
  cycles K                            K cycles, a new Lock object each
  client [connect_timeout=S ...]      the client of race and cancel
  contend ..., workload ..., race ..., release, cancel ...   (one file each)
  quit
"""

from __future__ import annotations

import sys

from hrlworker import cancel, contend, cycles, race, wire, workload


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: worker.py URL1,URL2,...")
    urls = sys.argv[1].split(",")
    bench = cycles.Bench(urls)
    racer = race.Racer()
    client = []  # the one set by "client", for race and cancel

    def set_client(opts):
        import hiredlock

        client[:] = [hiredlock.Client(urls, **wire.seconds(opts, *wire.CLIENT_OPTIONS))]
        return {"client": True}

    commands = {
        "run": lambda a, o: bench.run(a),
        "count": lambda a, o: bench.count(a),
        "hold": lambda a, o: bench.hold(int(a[0])),
        "hold-redis-py": lambda a, o: bench.hold(int(a[0]), redis_py=True),
        "lease": lambda a, o: bench.lease(int(a[0]), int(a[1]), int(a[2])),
        "unhold": lambda a, o: bench.unhold(),
        "cycles": lambda a, o: bench.cycles(int(a[0])),
        "client": lambda a, o: set_client(o),
        "contend": lambda a, o: contend.contend(urls, o),
        "workload": lambda a, o: workload.workload(urls, o),
        "race": lambda a, o: racer.race(client[0], o),
        "release": lambda a, o: racer.release(),
        "cancel": lambda a, o: cancel.cancel(client[0], o),
    }
    wire.out({"ready": True, "runtime": "python"})
    for line in sys.stdin:
        cmd, args, opts = wire.parse(line)
        if cmd is None:
            continue
        if cmd == "quit":
            break
        if cmd not in commands:
            wire.out({"error": f"bad command {cmd}"})
            continue
        wire.out(commands[cmd](args, opts))


if __name__ == "__main__":
    main()
