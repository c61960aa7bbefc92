// @berth/e2e: the fleet the journeys run on, from the provider BERTH_E2E_PROVIDER names (testbed by
// default, or kind: e2e/src/provider), and the test bed's parts (a fleet of real clusters as local processes).

// Shadows the test bed's own startFleet (an explicit export wins over `export *`).
export { PROVIDERS, type ProviderName, providerName, startFleet } from "./provider/index.ts";
export * from "./testbed/index.ts";
