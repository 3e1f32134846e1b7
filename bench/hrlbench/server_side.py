"""What master 1 spends on a main-phase slice of an N = 1 case: its main
thread's CPU time per cycle, and Redis's own time per call of each command
(INFO commandstats usec_per_call, the statistics reset before the slice).
Beside the client-side ratios they tell the server's share of a cycle: the
raw loop's release is a shorter script than hiredlock's (issue 31)."""

from __future__ import annotations

import redis

# The commands a cycle sends whose server time is reported.
COMMANDS = ("set", "evalsha", "eval")


def cpu_seconds(info: dict) -> float:
    """The server's main thread's CPU time (the whole process's on a
    Redis without the per-thread fields)."""
    if "used_cpu_user_main_thread" in info:
        return float(info["used_cpu_user_main_thread"]) + float(
            info["used_cpu_sys_main_thread"]
        )
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


class MasterProbe:
    """Master 1 (a plain URL) measured around each slice."""

    def __init__(self, url: str):
        self.conn = redis.Redis.from_url(url)
        self.cpu0 = 0.0

    def before(self) -> None:
        self.conn.config_resetstat()
        self.cpu0 = cpu_seconds(self.conn.info("cpu"))

    def after(self, cycles: int) -> dict:
        info = self.conn.info("all")
        cpu = cpu_seconds(info) - self.cpu0
        per_call = {
            cmd: float(info[f"cmdstat_{cmd}"]["usec_per_call"])
            for cmd in COMMANDS
            if f"cmdstat_{cmd}" in info
        }
        return {
            "master_cpu_us_per_cycle": cpu * 1e6 / cycles if cycles else None,
            "master_usec_per_call": per_call,
        }

    def close(self) -> None:
        self.conn.close()


def on_master_1(case: dict) -> bool:
    """An N = 1 case whose one master is master 1 of the plain servers
    (its TLS port too); not the cluster's or the replicated servers'."""
    worker = case["worker"]
    return case["n"] == 1 and (
        "@" not in worker or worker.endswith("@tls") or worker == "rb"
    )
