// Step 1: the GPU offering, with its tier, hourly rate and the GPUs free now.
import { html } from "lit";
import type { GpuAvailability } from "../../../api/openapi.gen.ts";
import "../../../components/empty-state/index.ts";
import { formatCredits } from "../../../data/format.ts";
import { offeredNow, roomForOffering, tierLabel } from "../../../data/wizard.ts";
import { NEW_SESSION_TEST_IDS } from "../../../test-ids/new-session.ts";
import type { Catalog } from "./types.ts";

export interface OfferingStepProps {
  catalog: Catalog;
  /** Undefined while the free GPUs are being checked. */
  availability: GpuAvailability | undefined;
  offering: string;
  onPick: (name: string) => void;
}

export function offeringStep(p: OfferingStepProps) {
  const rows = p.availability?.clusters ?? [];
  // MIG offerings only where marked nodes advertise their profile (and not before availability answers).
  const offerings = p.catalog.offerings.filter((o) => !o.mig_profile || (p.availability && offeredNow(rows, o)));
  return html`<fieldset data-testid=${NEW_SESSION_TEST_IDS.stepOffering}>
      <legend>1. GPU offering</legend>
      ${
        offerings.length === 0
          ? html`<berth-empty-state heading="No offering is available">Ask an administrator to add or enable a GPU offering.</berth-empty-state>`
          : html`<div class="choices">
            ${offerings.map((o) => {
              const avail = roomForOffering(rows, o);
              const id = `off-${o.name}`;
              return html`<label class="choice" for=${id}>
                <input type="radio" id=${id} name="offering" value=${o.name} .checked=${p.offering === o.name} @change=${() => p.onPick(o.name)} data-testid=${NEW_SESSION_TEST_IDS.offering(o.name)} />
                <span class="choice-body">
                  <strong>${o.display_name}</strong>
                  <span data-testid=${NEW_SESSION_TEST_IDS.offeringTier(o.name)}>${tierLabel(o)} · ${o.tier}</span>
                  <span>${formatCredits(o.hourly_credit_rate)} credits / hour</span>
                  <span class=${avail.free > 0 ? "tone-ok" : "tone-warn"} data-testid=${NEW_SESSION_TEST_IDS.offeringFree(o.name)}>${p.availability ? (o.mig_profile ? `${avail.free} ${avail.unit} free now` : `${avail.free} of ${avail.total} ${avail.unit} free now`) : "checking free GPUs…"}</span>
                </span>
              </label>`;
            })}
          </div>`
      }
    </fieldset>`;
}
