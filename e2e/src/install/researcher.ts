// biome-ignore-all lint/suspicious/noExplicitAny: the API's JSON as it comes
// A researcher on an install made by bed.ts, as an administrator and a member would set one up through
// the installed API: the terminal image offered with a preset this node fits, an organization, a member
// (her temporary password changed at first sign-in) and credits from the system wallet.
import { buildSessionImage } from "@berth/cdk8s/image/sessions";
import { HttpKube } from "@berth/controllers/kube";
import { ResourcePresetKind, resourcePath } from "@berth/crds";
import { offerSessionImages } from "../real/real-node-sessions.ts";
import { kubeConfigFrom } from "../testbed/kubeconfig.ts";
import { BED_CLUSTER, type BedInstall, call } from "./bed.ts";

/**
 * What a terminal needs and what Berth's own pods leave of this 2-core node (their requests add up to 1.4
 * CPUs): the catalog's presets ask 8 CPUs, real-node-sessions.ts's one.
 */
export const BED_PRESET = "bed-terminal";

export type Caller = (method: string, path: string, body?: unknown) => ReturnType<typeof call>;

/** The terminal image (built here, cached) in the bed's registry and the catalog, and BED_PRESET. */
export async function offerTerminal(install: BedInstall): Promise<{ name: string; ref: string }> {
  const kube = new HttpKube(kubeConfigFrom(install.fleet.cluster(BED_CLUSTER).kubeconfig));
  try {
    const images = await offerSessionImages(
      kube,
      [buildSessionImage("terminal", { quiet: true })],
      install.registry.host,
    );
    await kube.json("POST", resourcePath(ResourcePresetKind), {
      body: ResourcePresetKind.build(
        { name: BED_PRESET, labels: { "app.kubernetes.io/part-of": "berth" } },
        { displayName: "1 GPU (0.25 CPU, 512 MiB)", kind: "gpu", cpu: "250m", memory: "512Mi", gpuCount: 1 },
      ),
    });
    const terminal = images.terminal;
    if (!terminal) throw new Error("the terminal image was not offered");
    return terminal;
  } finally {
    kube.close();
  }
}

export interface Researcher {
  orgId: string;
  email: string;
  password: string;
  walletId: string;
  admin: Caller;
  member: Caller;
}

/** An organization, its member signed in with her own password, and `credits` (minor units) in its wallet. */
export async function aResearcherWithCredits(
  install: BedInstall,
  o: { organization: string; email: string; credits: string },
): Promise<Researcher> {
  const admin: Caller = (method, path, body) => call(install.apiUrl, install.admin.token, method, path, body);
  const must = (what: string, r: { status: number; body: any }, ok: number[]) => {
    if (!ok.includes(r.status)) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const org = must("organization", await admin("POST", "/api/v1/organizations", { name: o.organization }), [201]);
  const temporary = "Temporary-pass-8351";
  must(
    "member",
    await admin("POST", "/api/v1/users", {
      email: o.email,
      password: temporary,
      organization_id: org.id,
      role: "member",
    }),
    [201],
  );
  const first = must(
    "first sign-in",
    await call(install.apiUrl, undefined, "POST", "/api/v1/auth/login", { email: o.email, password: temporary }),
    [200],
  );
  const password = "Researcher-pass-6029";
  const changed = must(
    "password change",
    await call(install.apiUrl, first.access_token, "POST", "/api/v1/auth/password", {
      current_password: temporary,
      new_password: password,
    }),
    [200],
  );
  const member: Caller = (method, path, body) => call(install.apiUrl, changed.access_token, method, path, body);
  const wallet = must(
    "organization wallet",
    await admin("POST", "/api/v1/credits/wallets", { organization_id: org.id, owner_kind: "organization" }),
    [200, 201],
  );
  must(
    "credits",
    await admin("POST", "/api/v1/credits/allocations", {
      from_wallet_id: "wal_system",
      to_wallet_id: wallet.id,
      amount: o.credits,
      reason: "bed install",
    }),
    [201],
  );
  return { orgId: org.id, email: o.email, password, walletId: wallet.id, admin, member };
}

/** The charge lines of a session across its organization's wallets, from the installed API. */
export async function sessionCharges(r: Researcher, sessionId: string): Promise<any[]> {
  const all = (await r.admin("GET", `/api/v1/credits/wallets?organization=${r.orgId}&size=100`)).body.data as any[];
  const lines: any[] = [];
  for (const w of all) {
    const ledger = await r.admin("GET", `/api/v1/credits/wallets/${w.id}/ledger?kind=charge&size=100`);
    if (ledger.status !== 200) throw new Error(`ledger: ${ledger.status} ${JSON.stringify(ledger.body)}`);
    lines.push(...ledger.body.data);
  }
  return lines.filter((l) => l.session_id === sessionId);
}

/** What the offering's rate makes of these metered GPU-seconds, in minor units (api/src/domain/credits). */
export const chargeFor = (ratePerHour: bigint, gpuSeconds: number) =>
  (ratePerHour * BigInt(Math.round(gpuSeconds * 1000))) / 3_600_000n;
