// The Wallet resources: `kubectl get wallets` shows each wallet's owner, limits and balance. Postgres
// is the truth; the resource is a mirror written by the worker on change, never per charge: each pass
// takes the wallets whose ledger moved since their last mirror (last_sequence > mirrored_sequence) and
// writes one status per wallet, however many charges happened in between (coalesced).
//
// plan(row, observed) is pure (what the resource should say); apply writes only what differs. The
// status carries balance and lastAppliedSequence from the same row, so they always agree. A spec edited
// with kubectl is put back from Postgres at the wallet's next change: limits are changed through the API.
import { type KubeApi, KubeError } from "@berth/controllers/kube";
import {
  LABELS,
  resourcePath,
  setCondition,
  type Wallet,
  WalletConditionType,
  WalletKind,
  WalletReason,
} from "@berth/crds";
import type { Knex } from "knex";
import type { Logger } from "pino";
import type { WalletRow } from "../../db/operations/ledger/types.ts";
import { spendable } from "./ledger.ts";

const walletPath = (namespace: string, name?: string) =>
  resourcePath(WalletKind, { namespace, ...(name ? { name } : {}) });

export function planSpec(w: WalletRow): Wallet["spec"] {
  return {
    owner: { kind: w.owner_kind, id: w.owner_id },
    ...(w.display_name ? { displayName: w.display_name } : {}),
    allocations: [],
    limits: {
      overdraft: w.overdraft,
      ...(w.max_spend_per_day ? { maxSpendPerDay: w.max_spend_per_day } : {}),
      ...(w.max_spend_per_month ? { maxSpendPerMonth: w.max_spend_per_month } : {}),
    },
  };
}

export function planStatus(
  w: WalletRow,
  observed: Wallet["status"] | undefined,
  now: Date,
): NonNullable<Wallet["status"]> {
  let conditions = setCondition(
    observed?.conditions,
    {
      type: WalletConditionType.Synced,
      status: "True",
      reason: WalletReason.UpToDate,
      message: "balance mirrored from the ledger",
    },
    now,
  );
  const funded = w.allow_negative || spendable(w) > 0n;
  conditions = setCondition(
    conditions,
    {
      type: WalletConditionType.Funded,
      status: funded ? "True" : "False",
      reason: funded ? WalletReason.BalanceAvailable : WalletReason.BalanceExhausted,
      message: funded ? "the balance can pay for usage" : "the balance is at its floor",
    },
    now,
  );
  return { ...(observed ?? {}), balance: w.balance ?? "0", lastAppliedSequence: Number(w.last_sequence), conditions };
}

const specKey = (s: Wallet["spec"]) =>
  JSON.stringify([
    s.owner,
    s.displayName ?? null,
    s.limits.overdraft,
    s.limits.maxSpendPerDay ?? null,
    s.limits.maxSpendPerMonth ?? null,
  ]);

export class WalletMirror {
  readonly #db: Knex;
  readonly #kube: KubeApi;
  readonly #log: Logger;
  readonly #clock: { now(): Date };
  readonly #namespaces = new Set<string>();
  /** Writes made (tests and the bench read it to show the coalescing). */
  writes = 0;

  constructor(o: { db: Knex; kube: KubeApi; log: Logger; clock: { now(): Date } }) {
    this.#db = o.db;
    this.#kube = o.kube;
    this.#log = o.log.child({ component: "wallet-mirror" });
    this.#clock = o.clock;
  }

  /** One pass: every wallet whose ledger moved since its last mirror, up to `limit`. */
  async sync(limit = 500): Promise<number> {
    const rows = (await this.#db("wallets")
      .whereRaw("last_sequence > mirrored_sequence")
      .whereNotNull("cr_name")
      .orderBy("id")
      .limit(limit)) as WalletRow[];
    let done = 0;
    for (const w of rows) {
      try {
        await this.#apply(w);
        await this.#db("wallets")
          .where({ id: w.id })
          .where("mirrored_sequence", "<", w.last_sequence)
          .update({ mirrored_sequence: w.last_sequence });
        done++;
      } catch (err) {
        this.#log.warn(
          { err, kind: "Wallet", namespace: w.cr_namespace, name: w.cr_name },
          "mirroring a wallet failed; retried on the next pass",
        );
      }
    }
    return done;
  }

  async #apply(w: WalletRow): Promise<void> {
    const ns = w.cr_namespace as string;
    const name = w.cr_name as string;
    let observed = await this.#get(ns, name);
    if (!observed) {
      await this.#ensureNamespace(ns);
      const created = await this.#kube.request("POST", walletPath(ns), {
        body: WalletKind.build(
          { name, namespace: ns, labels: { [LABELS.partOf]: "berth", [LABELS.walletId]: w.id } },
          planSpec(w),
        ),
      });
      this.writes++;
      if (created.status === 409) observed = await this.#get(ns, name);
      else if (created.status >= 300) throw new KubeError("POST", walletPath(ns), created.status, created.body);
      else observed = WalletKind.schema.parse(created.body);
    } else if (w.owner_kind !== "system" && specKey(observed.spec) !== specKey(planSpec(w))) {
      const { owner: _immutable, ...rest } = planSpec(w);
      const r = await this.#kube.request("PATCH", walletPath(ns, name), { body: { spec: rest } });
      this.writes++;
      if (r.status >= 300) throw new KubeError("PATCH", walletPath(ns, name), r.status, r.body);
    }
    const status = planStatus(w, observed?.status, this.#clock.now());
    if (
      observed?.status?.balance === status.balance &&
      observed?.status?.lastAppliedSequence === status.lastAppliedSequence
    )
      return;
    const r = await this.#kube.request("PATCH", `${walletPath(ns, name)}/status`, { body: { status } });
    this.writes++;
    if (r.status >= 300) throw new KubeError("PATCH", `${walletPath(ns, name)}/status`, r.status, r.body);
  }

  async #get(ns: string, name: string): Promise<Wallet | undefined> {
    const r = await this.#kube.request("GET", walletPath(ns, name));
    if (r.status === 404) return undefined;
    if (r.status >= 300) throw new KubeError("GET", walletPath(ns, name), r.status, r.body);
    return WalletKind.schema.parse(r.body);
  }

  async #ensureNamespace(ns: string): Promise<void> {
    if (this.#namespaces.has(ns)) return;
    const r = await this.#kube.request("POST", "/api/v1/namespaces", {
      body: {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: ns, labels: { [LABELS.partOf]: "berth", [LABELS.role]: "organization" } },
      },
    });
    if (r.status !== 201 && r.status !== 409) throw new KubeError("POST", "/api/v1/namespaces", r.status, r.body);
    this.#namespaces.add(ns);
  }
}
