// Figures: how long the cdk8s app takes to synthesize every environment (module load once, then warm
// synths), and how many objects each chart holds, next to the committed output in cdk8s/dist (the
// baseline: a difference there means `npm run synth -w cdk8s` was not run).
//   node bench/src/cdk8s-synth.ts [--n 5]
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { n: { type: "string", default: "5" } } });
const N = Number(values.n);

const loadStart = performance.now();
const { readDist, synthAll } = await import("@berth/cdk8s/synth");
const loadMs = performance.now() - loadStart;

const times: number[] = [];
let files = new Map<string, string>();
for (let i = 0; i < N; i++) {
  const t = performance.now();
  files = synthAll();
  times.push(performance.now() - t);
}
const committed = readDist();
const objects = (text: string | undefined) => (text ? text.split("\n---\n").length - 1 : 0);

console.log(`module load (cdk8s, constructs, rule lists from @berth/api and @berth/operator): ${loadMs.toFixed(0)} ms`);
console.log(
  `synth of all environments: first ${times[0]?.toFixed(0)} ms, then median ${[...times.slice(1)]
    .sort((a, b) => a - b)
    [Math.floor((times.length - 1) / 2)]?.toFixed(0)} ms over ${N - 1} runs`,
);
console.log("\nchart                                   objects   committed");
for (const [file, text] of files)
  console.log(
    `${file.padEnd(40)}${String(objects(text)).padStart(7)}${String(objects(committed.get(file))).padStart(12)}`,
  );
