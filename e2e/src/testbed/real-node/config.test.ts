import { describe, expect, test } from "vitest";
import { parse } from "yaml";
import { cniConfig, containerdConfig, kubeletConfig, registryHostsToml } from "./config.ts";
import { nodeLayout } from "./layout.ts";
import { describeQuirks, type HostQuirks, needsForwardRule } from "./quirks.ts";

const l = nodeLayout("gpu-b-real-1", "/var/lib/berth-real-node");
const thisMachine: HostQuirks = {
  cgroup: "v1",
  capSysResource: false,
  forwardPolicy: "none",
  bridgeNetfilter: true,
  ipForward: false,
};
const plain: HostQuirks = {
  cgroup: "v2",
  capSysResource: true,
  forwardPolicy: "ACCEPT",
  bridgeNetfilter: false,
  ipForward: true,
};

describe("the real node's configuration", () => {
  test("containerd restricts oom_score_adj, keeps the pods' network namespaces under its state and maps the nvidia handler to runc", () => {
    const toml = containerdConfig(l, { cniBinDir: "/bin/cni", pauseImage: "berth.local/testbed/pause:1" });
    expect(toml).toContain("restrict_oom_score_adj = true");
    expect(toml).toContain("netns_mounts_under_state_dir = true");
    expect(toml).toContain(`state = "${l.run}/containerd"`);
    expect(toml).toContain('sandbox_image = "berth.local/testbed/pause:1"');
    expect(toml).toMatch(/runtimes\.nvidia\]\n {2}runtime_type = "io\.containerd\.runc\.v2"/);
    expect(toml).toContain(`config_path = "${l.registryHosts}"`);
    expect(registryHostsToml("127.0.0.1:5000")).toContain('server = "http://127.0.0.1:5000"');
  });

  test("the kubelet tolerates cgroup v1 only where the machine has it, and serves on loopback with its own cgroupRoot", () => {
    const v1 = parse(kubeletConfig(l, { port: 1, healthzPort: 2, quirks: thisMachine }));
    expect(v1).toMatchObject({ failCgroupV1: false, oomScoreAdj: 0, address: "127.0.0.1", cgroupRoot: l.cgroupRoot });
    const v2 = parse(kubeletConfig(l, { port: 1, healthzPort: 2, quirks: plain }));
    expect(v2).not.toHaveProperty("failCgroupV1");
  });

  test("each node's kubelet keeps its pods' logs in its own folder, under the key the kubelet reads", () => {
    // k8s.io/kubelet/config/v1beta1: `podLogsDir`. Under another key every node used /var/log/pods, and a
    // kubelet removes the folders there of pods it does not know: the other nodes' (their logs cut short).
    const config = parse(kubeletConfig(l, { port: 1, healthzPort: 2, quirks: plain }));
    expect(config.podLogsDir).toBe(l.podLogs);
    expect(l.podLogs).not.toBe(nodeLayout("builds-real-1").podLogs);
    expect(Object.keys(config).filter((k) => k.startsWith("podLogs"))).toEqual(["podLogsDir"]);
  });

  test("names, links and subnets fit Linux and differ per node", () => {
    const other = nodeLayout("builds-real-1");
    expect(l.bridge.length).toBeLessThanOrEqual(15);
    expect(l.bridge).not.toBe(other.bridge);
    expect(l.cgroupRoot).not.toBe(other.cgroupRoot);
    expect(l.podCidr).toMatch(/^10\.234\.\d+\.0\/24$/);
    expect(JSON.parse(cniConfig(l, l.podCidr)).plugins[0]).toMatchObject({ bridge: l.bridge, isGateway: true });
  });
});

describe("the machine's quirks", () => {
  test("each quirk met is said in one line; a plain machine says nothing", () => {
    const lines = describeQuirks(thisMachine, l.bridge);
    expect(lines.map((x) => x.split(":")[0])).toEqual([
      "CAP_SYS_RESOURCE is missing from the capability bounding set",
      "cgroup v1",
      "ip_forward is 0",
    ]);
    expect(describeQuirks(plain, l.bridge)).toEqual([]);
  });

  test("a FORWARD policy of DROP needs the bridge's own rule only when bridged frames go through iptables", () => {
    expect(needsForwardRule({ ...plain, forwardPolicy: "DROP", bridgeNetfilter: true })).toBe(true);
    expect(needsForwardRule({ ...plain, forwardPolicy: "DROP", bridgeNetfilter: false })).toBe(false);
    expect(describeQuirks({ ...plain, forwardPolicy: "DROP", bridgeNetfilter: true }, l.bridge)[0]).toContain(
      `an ACCEPT rule for ${l.bridge}-to-${l.bridge} traffic`,
    );
  });
});
