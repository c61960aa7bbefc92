// Steps 2 to 4: the resource preset, the image (the member's own tagged) and where the session runs and
// what it is called.
import { html, nothing } from "lit";
import type { GpuAvailability } from "../../../api/openapi.gen.ts";
import { clustersForModel, imageTag } from "../../../data/wizard.ts";
import { NEW_SESSION_TEST_IDS } from "../../../test-ids/new-session.ts";
import type { Catalog } from "./types.ts";

export function presetStep(p: { catalog: Catalog; preset: string; onPick: (name: string) => void }) {
  return html`<fieldset>
      <legend>2. Resources</legend>
      <div class="field"><label for="preset">Preset</label>
        <select id="preset" name="preset" data-testid=${NEW_SESSION_TEST_IDS.preset} @change=${(e: Event) => p.onPick((e.target as HTMLSelectElement).value)}>
          ${p.catalog.presets.map((x) => html`<option value=${x.name} ?selected=${x.name === p.preset}>${x.display_name} — ${x.cpu} CPU, ${x.memory} memory${x.gpu_count ? `, ${x.gpu_count} GPU` : ""}</option>`)}
        </select>
      </div>
    </fieldset>`;
}

export function imageStep(p: {
  catalog: Catalog;
  image: string;
  me: string | undefined;
  onPick: (name: string) => void;
}) {
  return html`<fieldset>
      <legend>3. Image</legend>
      ${
        p.catalog.images.length === 0
          ? html`<p class="muted">No image is available. Ask an administrator, or import one of your own.</p>`
          : html`<div class="choices">${p.catalog.images.map((img) => {
              const tag = imageTag(img, p.me);
              const id = `img-${img.name}`;
              return html`<label class="choice" for=${id}>
              <input type="radio" id=${id} name="image" value=${img.name} .checked=${p.image === img.name} @change=${() => p.onPick(img.name)} data-testid=${NEW_SESSION_TEST_IDS.image(img.name)} />
              <span class="choice-body"><strong>${img.display_name} ${tag === "yours" ? html`<span class="badge tone-info" data-testid=${NEW_SESSION_TEST_IDS.imageYours}>Yours</span>` : tag === "private" ? html`<span class="badge tone-muted">Private</span>` : nothing}</strong>
                <span class="muted">${img.kind}</span><code class="muted">${img.image}</code></span>
            </label>`;
            })}</div>`
      }
    </fieldset>`;
}

export interface ClusterStepProps {
  catalog: Catalog;
  availability: GpuAvailability | undefined;
  offering: string;
  preset: string;
  cluster: string;
  name: string;
  onCluster: (id: string) => void;
  onName: (name: string) => void;
}

export function clusterStep(p: ClusterStepProps) {
  const offering = p.catalog.offerings.find((o) => o.name === p.offering);
  const preset = p.catalog.presets.find((x) => x.name === p.preset);
  const gpus = preset?.gpu_count || offering?.gpu_count || 1;
  const choices = offering
    ? clustersForModel(
        p.availability?.clusters ?? [],
        offering.gpu_model,
        gpus,
        offering.fraction,
        offering.mig_profile,
      )
    : [];
  return html`<fieldset>
      <legend>4. Where and what to call it</legend>
      <div class="grid2">
        <div class="field"><label for="cluster">Cluster</label>
          <select id="cluster" name="cluster" data-testid=${NEW_SESSION_TEST_IDS.clusterPin} aria-describedby="cluster-hint" @change=${(e: Event) => p.onCluster((e.target as HTMLSelectElement).value)}>
            <option value="" ?selected=${!p.cluster}>Any cluster (recommended)</option>
            ${choices.map((ch) => html`<option value=${ch.id} ?selected=${ch.id === p.cluster}>${ch.name} — ${ch.free} of ${ch.total} free${ch.fits ? "" : " (would wait)"}</option>`)}
          </select>
          <p class="hint" id="cluster-hint">Pinning waits for that cluster even when another has room.</p>
        </div>
        <div class="field"><label for="name">Name (optional)</label><input id="name" name="name" maxlength="128" .value=${p.name} @input=${(e: Event) => p.onName((e.target as HTMLInputElement).value)} placeholder="my-experiment" data-testid=${NEW_SESSION_TEST_IDS.sessionName} /></div>
      </div>
    </fieldset>`;
}
