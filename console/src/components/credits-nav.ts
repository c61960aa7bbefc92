// The tab row of the credits pages: wallets, requests, and allocations, budgets and refills for those who
// manage wallets.
import { html, nothing } from "lit";
import { CREDITS_TEST_IDS } from "../test-ids/credits.ts";

export type CreditsTab = "wallets" | "requests" | "allocations" | "budgets";

export function creditsNav(here: CreditsTab, manager: boolean) {
  const tab = (name: CreditsTab, href: string, label: string) =>
    html`<a href=${href} aria-current=${here === name ? "page" : "false"} data-testid=${CREDITS_TEST_IDS.tab(name)}>${label}</a>`;
  return html`<nav class="subnav" aria-label="Credits">
    ${tab("wallets", "/credits", "Wallets")} ${tab("requests", "/credits/requests", "Requests")}
    ${manager ? tab("allocations", "/credits/allocations", "Allocations") : nothing}
    ${manager ? tab("budgets", "/credits/budgets", "Budgets and refills") : nothing}
  </nav>`;
}
