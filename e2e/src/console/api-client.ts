// Kept where the console journeys import it from; the client is shared with the other e2e tests.
export * from "../api-client.ts";
