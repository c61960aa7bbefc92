// The soak (issue 36): hours of users, streams, usage and webhooks on real processes while a fault comes
// every few minutes; a table every checkpoint, the faults with their times, the final reconciliation.
// What it does and its figures: docs/dev/soak.md; the engine: soak-run.ts.
//   node bench/src/soak.ts --hours 2 | --minutes N  [--users 200] [--streams 50] [--think 20]
//     [--check-every 10] [--fault-every 4] [--warmup 20] [--usage-interval 10] [--burst 60] [--settle 300]
//     [--faults pg-stop,api-burst,worker-leader,gpu-apiserver,operator,silent,pg-hang,mgmt-apiserver]
// Short runs (under an hour) default to a checkpoint every 5 min, a fault every 2 min and the first
// checkpoint as the warm-up. Exits 1 when a correctness target is missed (lost, stuck, duplicated,
// wallets, usage, webhooks).
import { parseArgs } from "node:util";
import { FAULTS, type FaultName, runSoak } from "./soak-run.ts";

const { values } = parseArgs({
  options: {
    hours: { type: "string" },
    minutes: { type: "string" },
    users: { type: "string", default: "200" },
    streams: { type: "string", default: "50" },
    think: { type: "string", default: "20" },
    "check-every": { type: "string" },
    "fault-every": { type: "string" },
    warmup: { type: "string" },
    "usage-interval": { type: "string", default: "10" },
    burst: { type: "string", default: "60" },
    settle: { type: "string", default: "300" },
    faults: { type: "string", default: FAULTS.join(",") },
  },
});
const minutes = values.hours ? Number(values.hours) * 60 : Number(values.minutes ?? 120);
const short = minutes < 60;
const checkEveryMin = Number(values["check-every"] ?? (short ? 5 : 10));
const faults = values.faults.split(",").filter((x) => x !== "");
const unknown = faults.filter((x) => !(FAULTS as readonly string[]).includes(x));
const nums = {
  "--hours/--minutes": minutes,
  "--users": Number(values.users),
  "--streams": Number(values.streams),
  "--think": Number(values.think),
  "--check-every": checkEveryMin,
  "--usage-interval": Number(values["usage-interval"]),
  "--burst": Number(values.burst),
  "--settle": Number(values.settle),
};
for (const [flag, v] of Object.entries(nums))
  if (!Number.isFinite(v) || v <= 0) {
    process.stderr.write(`${flag} takes a positive number\n`);
    process.exit(2);
  }
if (unknown.length > 0) {
  process.stderr.write(`--faults: unknown ${unknown.join(", ")} (known: ${FAULTS.join(", ")})\n`);
  process.exit(2);
}
const report = await runSoak({
  minutes,
  checkEveryMin,
  faultEveryMin: Number(values["fault-every"] ?? (short ? 2 : 4)),
  warmupMin: Number(values.warmup ?? (short ? checkEveryMin : 20)),
  users: nums["--users"],
  streams: nums["--streams"],
  thinkS: nums["--think"],
  usageIntervalS: nums["--usage-interval"],
  burst: nums["--burst"],
  settleS: nums["--settle"],
  faults: faults as FaultName[],
  out: (l) => process.stdout.write(`${l}\n`),
});
const f = report.final;
const missed =
  f.lost +
  f.stuck.length +
  f.duplicated +
  f.walletsOff +
  f.txnsUnbalanced +
  f.usageLostS +
  f.usageTwiceS +
  f.webhooksLost;
process.exit(missed > 0 ? 1 : 0);
