// GPU-hours the idle rule gives back: a simulated day of researchers with bursty activity, replayed
// through the reclaim plan the worker runs (api/src/domain/reclaim/plan.ts), against the same day without
// the idle rule (the time limit stays in both, so the difference is the idle rule's alone).
//
//   node bench/src/gpu-hours-reclaimed.ts [--researchers=200] [--seed=7] [--timeout=60] [--threshold=5]
//
// The trace generator's assumptions (printed with the figures):
// - One whole GPU per session. Arrival ~ N(9:00, 1 h), a working day ~ N(8.5 h, 1 h), clipped to the day.
// - 20 % have yesterday's session still running at 00:00 (started ~ N(17:00, 1.5 h) the day before).
// - The day is episodes and gaps. An episode is present work: typing, running cells (GPU bursts of
//   10–90 s at 30–95 %) and reading without input (stretches up to 25 min, never two in a row), median
//   35 min. Gaps (a
//   meeting, coffee, a colleague) have a median of 12 min (lognormal, heavy tail); lunch 45–75 min.
// - 35 % of episodes start a training run: GPU at 60–100 % for a lognormal time (median 40 min, up to 6 h),
//   the kernel busy meanwhile; 15 % start one before leaving that runs 2–8 h.
// - Leaving: 40 % pause their session, 60 % leave it running.
// - 5 % of sessions have a leaked process holding the GPU at 6–12 % from some time on (not idle by the
//   rule's threshold: counted under "held above the threshold while nobody worked").
// - A person who comes back to a paused session resumes it at once (a new run period).
// - Signals as the system sees them: input and kernel activity carry their real time (the gateway and
//   Jupyter stamp them), anywhere in a 30-s step; GPU utilisation is read at the operator's probe, the
//   step's end; the reclaim loop runs at the end of each 30-s step. The gateway's classifier is assumed
//   right (polling never counts, input always does).
// A false pause is a pause while the person is in an episode (present, even reading) or a run of theirs
// is on the GPU.
import { planReclaim, type Reclaim } from "@berth/api/testing";
import { seededRandom } from "@berth/controllers";
import { percentile } from "./kit/percentile.ts";

const arg = (name: string, d: number) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.split("=")[1]) : d;
};
const RESEARCHERS = arg("researchers", 200);
const SEED = arg("seed", 7);
const TIMEOUT = arg("timeout", 60);
const THRESHOLD = arg("threshold", 5);
const STEP = 30_000;
const DAY = 24 * 3600_000;
const MIN = 60_000;

const rand = seededRandom(SEED);
const normal = (m: number, sd: number) =>
  m + sd * Math.sqrt(-2 * Math.log(rand() || 1e-9)) * Math.cos(2 * Math.PI * rand());
const lognormal = (median: number, sigma: number) => median * Math.exp(sigma * normal(0, 1));
const clamp = (x: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, x));

/** Per 30-s step: present (in an episode), input (typing this step), gpu % (truth), kernel busy. */
interface Trace {
  present: Uint8Array;
  input: Uint8Array;
  gpu: Float32Array;
  busy: Uint8Array;
  /** Steps at which the person wants the session (arrival, or yesterday's session at 0). */
  wants: Uint8Array;
  /** The person's own pause at leaving (step), or -1. */
  pausesAt: number;
  periodStart: number;
}

const STEPS = DAY / STEP;

function trace(): Trace {
  const t: Trace = {
    present: new Uint8Array(STEPS),
    input: new Uint8Array(STEPS),
    gpu: new Float32Array(STEPS),
    busy: new Uint8Array(STEPS),
    wants: new Uint8Array(STEPS),
    pausesAt: -1,
    periodStart: 0,
  };
  const leftover = rand() < 0.2;
  const arrive = clamp(normal(9 * 60, 60), 6 * 60, 13 * 60) * MIN;
  const leave = clamp(arrive + normal(8.5 * 60, 60) * MIN, arrive + 3 * 3600_000, DAY - 10 * MIN);
  // Yesterday's session: started ~17:00 the day before, so its 24 h limit falls today.
  t.periodStart = leftover ? -clamp(normal(7 * 60, 90), 60, 12 * 60) * MIN : arrive;
  const startStep = leftover ? 0 : Math.floor(arrive / STEP);
  for (let i = startStep; i < STEPS; i++) t.wants[i] = 1;
  const gpuOn = (from: number, to: number, lo: number, hi: number, busy: boolean) => {
    for (let i = Math.max(0, Math.floor(from / STEP)); i < Math.min(STEPS, Math.ceil(to / STEP)); i++) {
      t.gpu[i] = Math.max(t.gpu[i] as number, lo + rand() * (hi - lo));
      if (busy) t.busy[i] = 1;
    }
  };
  let at = arrive;
  let lunch = false;
  while (at < leave) {
    const len = Math.min(clamp(lognormal(35, 0.7), 5, 180) * MIN, leave - at);
    const end = at + len;
    for (let i = Math.floor(at / STEP); i < Math.floor(end / STEP); i++) t.present[i] = 1;
    // Coming back starts with a click: the tab is focused, a cell selected (the gateway sees a request).
    if (Math.floor(at / STEP) < STEPS) t.input[Math.floor(at / STEP)] = 1;
    // Inside: typing bursts, cells run on the GPU, reading stretches without input.
    let x = at;
    let readBefore = false;
    while (x < end) {
      // Reading stretches do not follow each other: scrolling back to a cell, running it, is input.
      const reading: boolean = !readBefore && rand() < 0.3;
      readBefore = reading;
      const d = (reading ? clamp(lognormal(8, 0.6), 1, 25) : clamp(lognormal(3, 0.7), 0.5, 15)) * MIN;
      if (!reading) {
        for (let i = Math.floor(x / STEP); i < Math.min(STEPS, Math.floor((x + d) / STEP)); i++)
          if (rand() < 0.6) t.input[i] = 1;
        if (rand() < 0.7)
          gpuOn(x + rand() * d, x + rand() * d + clamp(lognormal(30, 0.5), 10, 90) * 1000, 30, 95, true);
      }
      x += d;
    }
    if (rand() < 0.35)
      gpuOn(at + rand() * len, at + rand() * len + clamp(lognormal(40, 1), 5, 360) * MIN, 60, 100, true);
    at = end;
    if (!lunch && at > 12 * 3600_000) {
      at += (45 + rand() * 30) * MIN;
      lunch = true;
    } else at += clamp(lognormal(12, 0.9), 2, 150) * MIN;
  }
  if (rand() < 0.15) gpuOn(leave - 5 * MIN, leave + (2 + rand() * 6) * 3600_000, 60, 100, true);
  if (rand() < 0.05) gpuOn(arrive + rand() * (leave - arrive), DAY, 6, 12, false);
  for (let i = 0; i < STEPS; i++) if ((t.gpu[i] as number) === 0) t.gpu[i] = rand() * 3; // idle noise
  if (rand() < 0.4) {
    t.pausesAt = Math.floor(leave / STEP);
    // A run still going when they leave: they do not pause it.
    if (t.busy[t.pausesAt]) t.pausesAt = -1;
  }
  return t;
}

interface Outcome {
  allocatedMs: number;
  underThresholdMs: number;
  idlePauses: number;
  falsePauses: number;
  resumes: number;
  delaysMs: number[];
}

/** Replays one trace through the plan (idle rule on or off), as the loop would see it. */
function replay(t: Trace, idleRule: boolean): Outcome {
  const o: Outcome = { allocatedMs: 0, underThresholdMs: 0, idlePauses: 0, falsePauses: 0, resumes: 0, delaysMs: [] };
  let running = false;
  let period = 0;
  let status: Reclaim | undefined;
  let lastInput: number | null = null;
  let lastGpu: number | null = null;
  let lastKernel: number | null = null;
  let trueLast = 0;
  let ownPaused = false;
  for (let i = 0; i < STEPS; i++) {
    // The loop's pass at the end of this step; what happened in it carries a time inside it.
    const now = (i + 1) * STEP;
    const inStep = i * STEP + Math.floor(rand() * STEP);
    if (t.pausesAt === i) ownPaused = true;
    const wants = t.wants[i] === 1 && !ownPaused;
    if (!running && wants && (i === 0 || t.present[i] || t.busy[i])) {
      // Started, or resumed by a person coming back (yesterday's session runs from 00:00).
      if (o.idlePauses > 0 || o.allocatedMs > 0) o.resumes++;
      running = true;
      period = o.allocatedMs === 0 && i === 0 ? t.periodStart : now;
      status = undefined;
      lastInput = lastGpu = lastKernel = null;
      trueLast = Math.max(period, now);
    }
    if (running && !wants) running = false;
    if (!running) continue;
    o.allocatedMs += STEP;
    if ((t.gpu[i] as number) < THRESHOLD) o.underThresholdMs += STEP;
    // What the reports carry, stamped at this step.
    if (t.input[i]) lastInput = inStep;
    if ((t.gpu[i] as number) >= THRESHOLD) lastGpu = now;
    if (t.busy[i]) lastKernel = inStep;
    if (t.input[i] || t.busy[i]) trueLast = Math.max(trueLast, inStep);
    if ((t.gpu[i] as number) >= THRESHOLD) trueLast = Math.max(trueLast, inStep);
    const p = planReclaim({
      now: new Date(now),
      periodStart: new Date(period),
      idleTimeoutMinutes: idleRule ? TIMEOUT : 0,
      maxRuntimeMinutes: 24 * 60,
      signals: {
        gpu: { state: "known", lastActiveAt: lastGpu === null ? null : new Date(lastGpu) },
        traffic: { state: "known", lastActiveAt: lastInput === null ? null : new Date(lastInput) },
        notebook: { state: "known", lastActiveAt: lastKernel === null ? null : new Date(lastKernel) },
      },
      status,
    });
    status = p.status;
    if (p.pause) {
      running = false;
      if (p.pause === "Idle") {
        o.idlePauses++;
        if (t.present[i] || t.busy[i]) o.falsePauses++;
        o.delaysMs.push(now - (Math.max(trueLast, period) + TIMEOUT * MIN));
      }
    }
  }
  return o;
}

const h = (ms: number) => ms / 3600_000;

const traces = Array.from({ length: RESEARCHERS }, trace);
const sum = (os: Outcome[], f: (o: Outcome) => number) => os.reduce((a, o) => a + f(o), 0);
const without = traces.map((t) => replay(t, false));
const withRule = traces.map((t) => replay(t, true));
const allocatedBase = sum(without, (o) => o.allocatedMs);
const underBase = sum(without, (o) => o.underThresholdMs);
const allocatedRule = sum(withRule, (o) => o.allocatedMs);
const underRule = sum(withRule, (o) => o.underThresholdMs);
const returned = allocatedBase - allocatedRule;
const delays = withRule.flatMap((o) => o.delaysMs);

console.log(
  `GPU-hours reclaimed: ${RESEARCHERS} researchers, one day, idle timeout ${TIMEOUT} min, threshold ${THRESHOLD} %, seed ${SEED}`,
);
console.log("");
console.log("| | no idle rule (baseline) | idle rule |");
console.log("|---|---|---|");
console.log(`| GPU-hours allocated | ${h(allocatedBase).toFixed(1)} | ${h(allocatedRule).toFixed(1)} |`);
console.log(
  `| GPU-hours under the threshold | ${h(underBase).toFixed(1)} (${((100 * underBase) / allocatedBase).toFixed(1)} %) | ${h(underRule).toFixed(1)} (${((100 * underRule) / allocatedRule).toFixed(1)} %) |`,
);
console.log(
  `| idle pauses / resumes | — | ${sum(withRule, (o) => o.idlePauses)} / ${sum(withRule, (o) => o.resumes)} |`,
);
console.log(`| false pauses (person present or their run on the GPU) | — | ${sum(withRule, (o) => o.falsePauses)} |`);
console.log("");
console.log(
  `GPU-hours returned by the idle rule: ${h(returned).toFixed(1)} = ${((100 * returned) / allocatedBase).toFixed(1)} % of allocated, ${((100 * returned) / underBase).toFixed(1)} % of the GPU-hours under the threshold`,
);
console.log(
  `idle detection delay after the timeout (from the last real activity + ${TIMEOUT} min to the pause): p50 ${(percentile(delays, 50, 0) / 1000).toFixed(0)} s, p99 ${(percentile(delays, 99, 0) / 1000).toFixed(0)} s, max ${(percentile(delays, 100, 0) / 1000).toFixed(0)} s (ticks and reports every 30 s; the first 10 min after a resume never pause)`,
);
if (sum(withRule, (o) => o.falsePauses) > 0) process.exitCode = 1;
