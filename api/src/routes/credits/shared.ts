// What the credits route files share (wallets.ts, allocations.ts, requests.ts, refills.ts).
export const TAGS = ["credits"];
/** Amounts come as strings of minor units (1 credit = 1,000,000). */
export const units = (s: string) => BigInt(s);
