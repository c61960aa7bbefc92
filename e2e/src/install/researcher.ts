// A researcher on an install made by bed.ts, as an administrator and a member would set one up through
// the installed API: the terminal image offered with a preset this node fits, an organization, a member
// (her temporary password changed at first sign-in) and credits from the system wallet.
import { buildSessionImage } from "@berth/cdk8s/image/sessions";
import type { ApiClient } from "@berth/console/client";
import { HttpKube } from "@berth/controllers/kube";
import { ResourcePresetKind, resourcePath } from "@berth/crds";
import { apiAs } from "../api-client.ts";
import { offerSessionImages } from "../real/real-node-sessions.ts";
import { kubeConfigFrom } from "../testbed/kubeconfig.ts";
import { BED_CLUSTER, type BedInstall } from "./bed.ts";

/**
 * What a terminal needs and what Berth's own pods leave of this 2-core node (their requests add up to 1.4
 * CPUs): the catalog's presets ask 8 CPUs, real-node-sessions.ts's one.
 */
export const BED_PRESET = "bed-terminal";

/**
 * The terminal image (built here, cached) in the bed's registry and the catalog, and BED_PRESET asking
 * `cpu` (default 250m; the upgrade's two sessions ask less, so the rolling update's extra pods fit).
 */
export async function offerTerminal(
  install: BedInstall,
  o: { cpu?: string } = {},
): Promise<{ name: string; ref: string }> {
  const cpu = o.cpu ?? "250m";
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
        { displayName: `1 GPU (${cpu} CPU, 512 MiB)`, kind: "gpu", cpu, memory: "512Mi", gpuCount: 1 },
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
  admin: ApiClient;
  member: ApiClient;
}

/** An organization, its member signed in with her own password, and `credits` (minor units) in its wallet. */
export async function aResearcherWithCredits(
  install: BedInstall,
  o: { organization: string; email: string; credits: string },
): Promise<Researcher> {
  const admin = apiAs(install.apiUrl, install.admin.token);
  const org = await admin.call("createOrganization", { body: { name: o.organization } });
  const temporary = "Temporary-pass-8351";
  await admin.call("createUser", {
    body: { email: o.email, password: temporary, organization_id: org.id, role: "member" },
  });
  const first = await apiAs(install.apiUrl, "").call("login", { body: { email: o.email, password: temporary } });
  const password = "Researcher-pass-6029";
  const changed = await apiAs(install.apiUrl, first.access_token).call("changePassword", {
    body: { current_password: temporary, new_password: password },
  });
  // 201 opens the organization's wallet, 200 finds it open: either is the wallet.
  const wallet = await admin.call("openWallet", { body: { organization_id: org.id, owner_kind: "organization" } });
  await admin.call("allocateCredits", {
    body: { from_wallet_id: "wal_system", to_wallet_id: wallet.id, amount: o.credits, reason: "bed install" },
  });
  // Clients made at each use: a restore makes the API's Service again, and install.apiUrl follows it.
  const memberToken = changed.access_token;
  return {
    orgId: org.id,
    email: o.email,
    password,
    walletId: wallet.id,
    get admin() {
      return apiAs(install.apiUrl, install.admin.token);
    },
    get member() {
      return apiAs(install.apiUrl, memberToken);
    },
  };
}

/** The charge lines of a session across its organization's wallets, from the installed API. */
export async function sessionCharges(r: Researcher, sessionId: string) {
  const all = (await r.admin.call("listWallets", { query: { organization: r.orgId, size: 100 } })).data;
  const lines = [];
  for (const w of all) {
    const ledger = await r.admin.call("getWalletLedger", {
      params: { walletId: w.id },
      query: { kind: "charge", size: 100 },
    });
    lines.push(...ledger.data);
  }
  return lines.filter((l) => l.session_id === sessionId);
}

/** What the offering's rate makes of these metered GPU-seconds, in minor units (api/src/domain/credits). */
export const chargeFor = (ratePerHour: bigint, gpuSeconds: number) =>
  (ratePerHour * BigInt(Math.round(gpuSeconds * 1000))) / 3_600_000n;
