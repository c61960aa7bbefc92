// biome-ignore-all lint/suspicious/noExplicitAny: manifests and the apiserver's JSON as they come
// Berth's isolation and pod security on the bed's real node (docs/dev/real-node-network.md, issue #33 items
// 2 and 3), with real packets and the running containers' real state. The NetworkPolicies, namespaces and
// pod templates are Berth's own: the committed cdk8s output (cdk8s/dist/testbed), and the sessions policy
// and session pod the operator makes (controllers/src/mirror/manifests.ts). Stand-ins keep the real
// labels, ports, accounts and security contexts and swap only the process for a small Python server and
// prober, so each policy selects them as it would select Berth's pods. Every refusal has its control: the
// same target and port answering a client that the policies admit. Where canRunRealNode() says yes.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { podManifest, sessionsNetworkPolicyManifest } from "@berth/controllers";
import { SessionMirrorKind } from "@berth/crds";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { createRuntimeClass } from "./gpu.ts";
import { type PodsOnTheRealNode, startPodsOnTheRealNode } from "./pods-on-the-real-node.test-support.ts";
import { canRunRealNode, REAL_NODE_TAINT } from "./real-node/index.ts";
import { eventually } from "./waiting.test-support.ts";

const can = canRunRealNode();
const NODE = "iso-real-1";
const SYSTEM = "berth-system";
const SESSIONS = "berth-sessions";
/** Another tenant's namespace on the same cluster. */
const OUTSIDE = "berth-outside";
const POSTGRES_PORT = 5432;

/** The testbed environment's charts for the management cluster and its GPU cluster, as committed. */
const dist = ["10-control-plane.yaml", "20-gpu-gpu-a.yaml"].flatMap((f) =>
  parseAllDocuments(readFileSync(new URL(`../../../cdk8s/dist/testbed/${f}`, import.meta.url), "utf8")).map(
    (d) => d.toJS() as any,
  ),
);
const deployment = (name: string) => {
  const d = dist.find((o) => o.kind === "Deployment" && o.metadata.name === name);
  if (!d) throw new Error(`no Deployment ${name} in cdk8s/dist/testbed`);
  return d;
};

// Serves its own name on every port in PORTS; with TARGETS (label=address,...), asks each target once a
// second, one line per answer: "<round> <label> ok <who>" or "<round> <label> no <why>". Writes no file, so
// it runs under a read-only root.
const STAND_IN = `
import http.server, os, socket, threading, time, urllib.error, urllib.request
me = socket.gethostname().encode() + b"\\n"
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(me)))
        self.end_headers()
        self.wfile.write(me)
    def log_message(self, *a):
        pass
for p in filter(None, os.environ.get("PORTS", "").split(",")):
    s = http.server.ThreadingHTTPServer(("", int(p)), H)
    threading.Thread(target=s.serve_forever, daemon=True).start()
targets = [t.split("=", 1) for t in filter(None, os.environ.get("TARGETS", "").split(","))]
n = 0
while True:
    n += 1
    for label, addr in targets:
        try:
            with urllib.request.urlopen("http://" + addr + "/who", timeout=3) as r:
                out = "ok " + r.read().decode().strip()
        except urllib.error.HTTPError as e:
            out = "ok http-" + str(e.code)
        except Exception as e:
            out = "no " + type(e).__name__ + " " + str(getattr(e, "reason", e))
        print(n, label, out, flush=True)
    time.sleep(1)
`;

/** What the prober answers for each case: reached, or refused on every try after the policies were in place. */
type Outcome = "reached" | "refused";
interface Case {
  client: string;
  target: string;
  expect: Outcome;
}

/** The host's IPv4 iptables rules; kube-router names each pod it filters in its rules' comments. */
const rules = () => execFileSync("iptables-save", { encoding: "utf8" });
const filtered = (ns: string, pod: string) => rules().includes(`POD name:${pod} namespace: ${ns} `);

describe.skipIf(!can.ok)(
  `Berth's isolation and pod security on the real node${can.ok ? "" : ` (skipped: ${can.reason})`}`,
  () => {
    let bed: PodsOnTheRealNode;
    const ip: Record<string, string> = {};

    const onTheNode = {
      nodeName: NODE,
      tolerations: [{ ...REAL_NODE_TAINT, operator: "Equal" }],
      terminationGracePeriodSeconds: 1,
    };
    const podPath = (ns: string, name = "") => `/api/v1/namespaces/${ns}/pods${name ? `/${name}` : ""}`;
    const getPod = (ns: string, name: string) => bed.kube.json<any>("GET", podPath(ns, name));
    const targetsEnv = (targets: Record<string, string>) => ({
      name: "TARGETS",
      value: Object.entries(targets)
        .map(([k, v]) => `${k}=${v}`)
        .join(","),
    });

    /**
     * A Berth Deployment's pod as its template has it (labels, account, pod and container security
     * contexts, ports, emptyDir mounts, an HTTP readiness probe), running the stand-in on its ports.
     * Secret volumes and env go: the stand-in reads neither.
     */
    const fromDeployment = (name: string, pod: string, targets: Record<string, string> = {}) => {
      const t = deployment(name).spec.template;
      const c = t.spec.containers[0];
      const volumes = (t.spec.volumes ?? []).filter((v: any) => v.emptyDir);
      const kept = new Set(volumes.map((v: any) => v.name));
      return {
        metadata: { name: pod, namespace: SYSTEM, labels: t.metadata.labels },
        spec: {
          ...t.spec,
          ...onTheNode,
          volumes,
          containers: [
            {
              name: c.name,
              image: bed.image,
              command: ["python3", "-c", STAND_IN],
              env: [{ name: "PORTS", value: c.ports.map((p: any) => p.containerPort).join(",") }, targetsEnv(targets)],
              ports: c.ports,
              securityContext: c.securityContext,
              volumeMounts: (c.volumeMounts ?? []).filter((m: any) => kept.has(m.name)),
              ...(c.readinessProbe?.httpGet?.scheme === "HTTP" ? { readinessProbe: c.readinessProbe } : {}),
            },
          ],
        },
      };
    };

    /** A session pod as the operator makes it; with `targets`, its process is the prober. */
    const session = (name: string, targets?: Record<string, string>) => {
      const m = SessionMirrorKind.build(
        { name, namespace: SESSIONS, uid: `uid-${name}` },
        {
          sessionId: `ses_${name.replace(/[^a-z0-9]/g, "")}`,
          source: { namespace: "org-acme", name },
          cluster: "clu_gpua",
          owner: "usr_1",
          organization: "org_acme",
          image: bed.image,
          imageKind: "terminal",
          resources: { cpu: "250m", memory: "256Mi", gpuCount: 1, gpuModel: "NVIDIA-L4" },
          revision: 1,
        },
      );
      const p: any = podManifest(m, { namespace: SESSIONS });
      // No SessionMirror here: an owner that does not exist would have the garbage collector delete the pod.
      delete p.metadata.ownerReferences;
      Object.assign(p.spec, onTheNode, { tolerations: [...p.spec.tolerations, ...onTheNode.tolerations] });
      if (targets)
        Object.assign(p.spec.containers[0], { command: ["python3", "-c", STAND_IN], env: [targetsEnv(targets)] });
      return p;
    };

    /** Pod Security "restricted" as Berth's own pods have it (cdk8s/src/pod.ts), for pods that have no template. */
    const restricted = (ns: string, name: string, labels: Record<string, string>, env: Record<string, string>) => {
      const t = deployment("berth-api").spec.template.spec;
      return {
        metadata: { name, namespace: ns, labels },
        spec: {
          ...onTheNode,
          automountServiceAccountToken: false,
          securityContext: t.securityContext,
          volumes: [],
          containers: [
            {
              name: "stand-in",
              image: bed.image,
              command: ["python3", "-c", STAND_IN],
              env: Object.entries(env).map(([k, v]) => ({ name: k, value: v })),
              securityContext: t.containers[0].securityContext,
            },
          ],
        },
      };
    };

    /** Creates the pods and waits until each runs (and, with a readiness probe, is Ready); records their IPs. */
    const run = async (pods: any[], ready: (p: any) => boolean) => {
      for (const p of pods) await bed.kube.json("POST", podPath(p.metadata.namespace), p);
      await Promise.all(
        pods.map(async (p) => {
          const { name, namespace } = p.metadata;
          ip[name] = await eventually(
            async () => {
              const s = await getPod(namespace, name);
              if (s.status.phase === "Failed") throw new Error(`${name} failed: ${JSON.stringify(s.status)}`);
              return ready(s) ? (s.status.podIP as string) : undefined;
            },
            { what: `pod ${namespace}/${name}`, timeoutMs: 180_000, intervalMs: 500 },
          );
        }),
      );
    };
    const isReady = (p: any) => p.status.conditions?.some((c: any) => c.type === "Ready" && c.status === "True");
    const isRunning = (p: any) => Boolean(p.status.containerStatuses?.[0]?.state?.running && p.status.podIP);

    beforeAll(async () => {
      bed = await startPodsOnTheRealNode({
        cluster: "iso",
        node: NODE,
        registry: "iso-journey",
        options: { networkPolicy: true },
        // Two session pods, each asking a card as the operator's pods do.
        gpuCount: 2,
      });
      await createRuntimeClass(bed.kube);
      // Berth's namespaces (both charts name berth-system: their labels together, as applying the charts in
      // order leaves them), accounts and every policy, and the operator's sessions policy; then someone else's namespace.
      const namespaces = new Map<string, Record<string, string>>();
      for (const o of dist.filter((x) => x.kind === "Namespace"))
        namespaces.set(o.metadata.name, { ...namespaces.get(o.metadata.name), ...o.metadata.labels });
      for (const [name, labels] of namespaces)
        await bed.kube.json("POST", "/api/v1/namespaces", { metadata: { name, labels } });
      await bed.kube.json("POST", "/api/v1/namespaces", { metadata: { name: OUTSIDE } });
      for (const o of dist.filter((x) => x.kind === "ServiceAccount"))
        await bed.kube.json("POST", `/api/v1/namespaces/${o.metadata.namespace}/serviceaccounts`, o);
      const policies = [
        ...dist.filter((x) => x.kind === "NetworkPolicy"),
        sessionsNetworkPolicyManifest({ namespace: SESSIONS }),
      ];
      for (const o of policies)
        await bed.kube.json("POST", `/apis/networking.k8s.io/v1/namespaces/${o.metadata.namespace}/networkpolicies`, o);

      const at = (pod: string, port: number) => `${ip[pod]}:${port}`;
      // Targets first, then the API (which asks Postgres), then the clients, which need the targets' addresses.
      await run(
        [
          session("ses-target"),
          restricted(
            SYSTEM,
            "postgres",
            { "app.kubernetes.io/name": "berth-postgres", "app.kubernetes.io/part-of": "berth" },
            { PORTS: String(POSTGRES_PORT) },
          ),
        ],
        isReady,
      );
      const apiPorts = deployment("berth-api").spec.template.spec.containers[0].ports;
      const port = (name: string) => apiPorts.find((p: any) => p.name === name).containerPort as number;
      const [API, INTERNAL] = [port("http"), port("internal")];
      const SESSION_PORT = session("x").spec.containers[0].ports[0].containerPort as number;
      await run([fromDeployment("berth-api", "api", { postgres: at("postgres", POSTGRES_PORT) })], isReady);
      const toSession = at("ses-target", SESSION_PORT);
      const clients = [
        session("ses-client", {
          session: toSession,
          api: at("api", API),
          internal: at("api", INTERNAL),
          postgres: at("postgres", POSTGRES_PORT),
        }),
        fromDeployment("berth-gateway", "gateway", { session: toSession, internal: at("api", INTERNAL) }),
        fromDeployment("berth-operator", "operator", { session: toSession, internal: at("api", INTERNAL) }),
        restricted(
          OUTSIDE,
          "outsider",
          { app: "someone-else" },
          {
            TARGETS: targetsEnv({ api: at("api", API), internal: at("api", INTERNAL) }).value,
          },
        ),
      ];
      await run(clients, isRunning);
    }, 900_000);

    afterAll(async () => {
      // The node's stop deletes its pods; the cluster goes with the bed.
      await bed?.stop();
    }, 180_000);

    it("Berth's own policies: a session reaches nothing private, the internal plane only the operator and gateway", async () => {
      const cases: Record<string, Case> = {
        "a session → another session's app": { client: "ses-client", target: "session", expect: "refused" },
        "a session → the API": { client: "ses-client", target: "api", expect: "refused" },
        "a session → the internal plane": { client: "ses-client", target: "internal", expect: "refused" },
        "a session → Postgres": { client: "ses-client", target: "postgres", expect: "refused" },
        "another namespace → the internal plane": { client: "outsider", target: "internal", expect: "refused" },
        // The controls: the same targets and ports, from clients the policies admit.
        "the gateway → the session": { client: "gateway", target: "session", expect: "reached" },
        "the operator → the session": { client: "operator", target: "session", expect: "reached" },
        "the operator → the internal plane": { client: "operator", target: "internal", expect: "reached" },
        "the gateway → the internal plane": { client: "gateway", target: "internal", expect: "reached" },
        "another namespace → the API": { client: "outsider", target: "api", expect: "reached" },
        "the API → Postgres": { client: "api", target: "postgres", expect: "reached" },
      };
      const nsOf: Record<string, string> = {
        "ses-client": SESSIONS,
        gateway: SYSTEM,
        operator: SYSTEM,
        outsider: OUTSIDE,
        api: SYSTEM,
      };

      // A refusal counts only for tries made once kube-router filters every pod a policy selects here: before
      // that, a new pod's packets pass unfiltered.
      await eventually(
        async () =>
          [
            [SESSIONS, "ses-client"],
            [SESSIONS, "ses-target"],
            [SYSTEM, "api"],
            [SYSTEM, "gateway"],
          ].every(([ns, pod]) => filtered(ns as string, pod as string)) || undefined,
        { what: "kube-router filtering the selected pods", timeoutMs: 60_000, intervalMs: 500 },
      );
      const lines = async (pod: string) =>
        (await bed.kube.raw("GET", `${podPath(nsOf[pod] as string, pod)}/log`)).text.split("\n").filter(Boolean);
      const since: Record<string, number> = {};
      for (const pod of Object.keys(nsOf)) since[pod] = (await lines(pod)).length;

      // Reached: answered once (a new client waits for kube-router to admit it). Refused: no answer to any try
      // since the rules were in place, three at least.
      const look = async () => {
        const out: Record<string, string> = {};
        let settled = true;
        for (const [name, c] of Object.entries(cases)) {
          const log = await lines(c.client);
          const of = (l: string[]) => l.map((x) => x.split(" ")).filter((w) => w[1] === c.target);
          if (c.expect === "reached") {
            const tries = of(log);
            const ok = tries.some((w) => w[2] === "ok");
            out[name] = ok ? "reached" : `refused (${tries.at(-1)?.slice(2).join(" ") ?? "no try yet"})`;
            settled &&= ok;
          } else {
            const tries = of(log.slice(since[c.client]));
            const through = tries.find((w) => w[2] === "ok");
            out[name] = through ? `reached (${through.slice(2).join(" ")})` : "refused";
            settled &&= tries.length >= 3;
          }
        }
        return { out, settled };
      };
      const settled = await eventually(async () => ((await look()).settled ? true : undefined), {
        what: "every case tried",
        timeoutMs: 120_000,
        intervalMs: 1000,
      }).catch(() => false);
      const { out } = await look();
      expect({ settled, ...out }).toEqual({
        settled: true,
        ...Object.fromEntries(Object.entries(cases).map(([k, c]) => [k, c.expect])),
      });
    }, 600_000);

    it("session and Berth pods run as their manifests say, in the kernel's own words; the namespaces refuse a root pod", async () => {
      // The pods of the first case: a session as the operator makes it (its own app, the terminal image's
      // entry point) and Berth's Deployments' pods. Each container's first process, found through containerd.
      const tasks = execFileSync(
        "ctr",
        ["--address", bed.node.layout.containerdSocket, "-n", "k8s.io", "tasks", "ls"],
        {
          encoding: "utf8",
        },
      );
      const pidOf = new Map(
        tasks
          .split("\n")
          .slice(1)
          .map((l) => l.trim().split(/\s+/))
          .map((w) => [w[0], w[1]] as const),
      );
      const ZERO = "0000000000000000";
      const seen = async (ns: string, name: string) => {
        const p = await getPod(ns, name);
        const id = String(p.status.containerStatuses[0].containerID).replace(/^containerd:\/\//, "");
        const pid = pidOf.get(id);
        if (!pid) throw new Error(`${ns}/${name}: no containerd task ${id} in:\n${tasks}`);
        const text = readFileSync(`/proc/${pid}/status`, "utf8");
        const field = (k: string) =>
          text
            .match(new RegExp(`^${k}:\\s*(.*)$`, "m"))?.[1]
            ?.trim()
            .split(/\s+/)
            .join(" ");
        const root = readFileSync(`/proc/${pid}/mountinfo`, "utf8")
          .split("\n")
          .map((l) => l.split(" "))
          .find((w) => w[4] === "/");
        const state = {
          Uid: field("Uid"),
          Gid: field("Gid"),
          CapInh: field("CapInh"),
          CapPrm: field("CapPrm"),
          CapEff: field("CapEff"),
          CapBnd: field("CapBnd"),
          CapAmb: field("CapAmb"),
          NoNewPrivs: field("NoNewPrivs"),
          Seccomp: field("Seccomp"),
          root: root?.[5]?.split(",").includes("ro") ? "read-only" : "writable",
        };
        // What the pod asks (container over pod), and what restricted requires whatever it asks.
        const c = p.spec.containers[0].securityContext ?? {};
        const ps = p.spec.securityContext ?? {};
        const uid = c.runAsUser ?? ps.runAsUser;
        const gid = c.runAsGroup ?? ps.runAsGroup;
        expect(uid, `${name} names a non-root user`).toBeGreaterThan(0);
        const want = {
          Uid: `${uid} ${uid} ${uid} ${uid}`,
          Gid: `${gid} ${gid} ${gid} ${gid}`,
          CapInh: ZERO,
          CapPrm: ZERO,
          CapEff: ZERO,
          CapBnd: ZERO,
          CapAmb: ZERO,
          NoNewPrivs: "1",
          // 2: a seccomp filter (RuntimeDefault), not 0 (none).
          Seccomp: "2",
          root: c.readOnlyRootFilesystem === true ? "read-only" : "writable",
        };
        return { state, want, readOnlyAsked: c.readOnlyRootFilesystem === true };
      };
      for (const [ns, name] of [
        [SESSIONS, "ses-target"],
        [SYSTEM, "api"],
        [SYSTEM, "operator"],
        [SYSTEM, "gateway"],
      ] as const) {
        const { state, want, readOnlyAsked } = await seen(ns, name);
        expect(state, `${ns}/${name}: /proc/<pid>/status and mountinfo`).toEqual(want);
        // Berth's own processes write only /tmp; a session's app writes its home, so only they ask for it.
        expect(readOnlyAsked, `${ns}/${name} asks for a read-only root`).toBe(ns === SYSTEM);
      }

      for (const ns of [SESSIONS, SYSTEM]) {
        const root = {
          metadata: { name: "as-root" },
          spec: { ...onTheNode, containers: [{ name: "c", image: bed.image }] },
        };
        const res = await bed.kube.raw("POST", podPath(ns), root);
        expect(res.status, res.text).toBe(403);
        expect(JSON.parse(res.text).message).toContain('violates PodSecurity "restricted');
      }
    }, 120_000);
  },
);
