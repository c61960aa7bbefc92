// /api/v1/credits: wallets and their ledgers, allocations, credit requests and refills
// (docs/dev/billing.md). Every creating or money-moving write takes an Idempotency-Key; amounts are
// strings of minor units (1 credit = 1,000,000).
// One file per sub-noun: wallets.ts, allocations.ts, requests.ts, refills.ts (in the OpenAPI document's order).
import type { RouteDef } from "../../http/route.ts";
import { routes as allocations } from "./allocations.ts";
import { routes as refills } from "./refills.ts";
import { routes as requests } from "./requests.ts";
import { routes as wallets } from "./wallets.ts";

export const routes: RouteDef[] = [...wallets, ...allocations, ...requests, ...refills];
