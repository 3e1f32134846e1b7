// The Node.js worker (tests/workers/README.md): node-redlock (v5 API) on
// ioredis for the benchmark, one JSON line out per command on stdin (the
// benchmark commands of the C worker: run CASE SECONDS, hold K, unhold, quit).
//   node tests/workers/node/worker.js URL1,URL2,...   (the harness starts it)
// Cases: node-nK, node-redlock on K masters: redlock.acquire([key], 30000)
// with retryCount 0 (one attempt, as every other case), then lock.release().
// ioredis gets hiredlock's default per-master deadlines (connect 100 ms,
// command 50 ms), so a paused master costs it no more than hiredlock.
"use strict";
const readline = require("readline");
const Redis = require("ioredis");
const { default: Redlock } = require("redlock");

const TTL_MS = 30000;
const urls = (process.argv[2] || "").split(",").filter(Boolean);
if (urls.length === 0) {
  console.error("usage: node worker.js URL1,URL2,...");
  process.exit(2);
}

function connect(url) {
  const u = new URL(url);
  return new Redis({
    host: u.hostname,
    port: Number(u.port),
    connectTimeout: 100,
    commandTimeout: 50,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: true,
    lazyConnect: false,
  });
}

const conns = urls.map(connect);
const cases = {};
for (const n of [1, 3, 5]) {
  if (n > conns.length) continue;
  const redlock = new Redlock(conns.slice(0, n), {
    retryCount: 0,
    driftFactor: 0.01,
  });
  cases[`node-n${n}`] = { redlock, key: `bench:node-n${n}` };
}
const holdLock = new Redlock(conns.slice(0, 1), { retryCount: 0 });

const nowNs = () => process.hrtime.bigint();
const out = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");

async function runCase(c, seconds) {
  const lat = [];
  let failed = 0;
  const cpu0 = process.cpuUsage();
  const start = nowNs();
  const end = start + BigInt(Math.round(seconds * 1e9));
  let t = start;
  while (t < end || lat.length === 0) {
    const t0 = nowNs();
    let lock = null;
    try {
      lock = await c.redlock.acquire([c.key], TTL_MS);
    } catch (err) {
      failed++;
    }
    const t1 = nowNs();
    if (lock) await lock.release();
    lat.push(Math.round(Number(t1 - t0) / 100) / 10);
    t = nowNs();
  }
  const cpu = process.cpuUsage(cpu0);
  return {
    cycles: lat.length - failed,
    failed,
    elapsed: Number(t - start) / 1e9,
    cpu_us: cpu.user + cpu.system,
    lat,
  };
}

async function main() {
  await Promise.all(conns.map((c) => c.ping()));
  out({ ready: true });
  const held = [];
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    const [cmd, a, b] = line.trim().split(/\s+/);
    if (cmd === "run") {
      const c = cases[a];
      if (!c) {
        out({ error: `unknown case ${a}` });
        continue;
      }
      out(await runCase(c, Number(b)));
    } else if (cmd === "hold") {
      for (let i = 0; i < Number(a); i++) {
        held.push(await holdLock.acquire([`bench:hold:node:${i}`], TTL_MS));
      }
      if (global.gc) global.gc();
      out({ held: held.length });
    } else if (cmd === "unhold") {
      const n = held.length;
      for (const lock of held.splice(0)) await lock.release();
      if (global.gc) global.gc();
      out({ released: n });
    } else if (cmd === "quit") {
      break;
    } else {
      out({ error: `bad command ${cmd}` });
    }
  }
  rl.close();
  conns.forEach((c) => c.disconnect());
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
