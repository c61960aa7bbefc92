// Step 6: the volumes to mount: what is mountable, what is read-only, which would keep the session on
// one cluster.
import type { Task } from "@lit/task";
import { html, nothing } from "lit";
import type { StorageVolume } from "../../../api/openapi.gen.ts";
import { renderTask } from "../../../components/task-states.ts";
import { NEW_SESSION_TEST_IDS } from "../../../test-ids/new-session.ts";

export type Mounts = Record<string, { path: string; readOnly: boolean }>;

export interface VolumesStepProps {
  volumes: Task<readonly unknown[], { data: StorageVolume[] }>;
  mounts: Mounts;
  cluster: string;
  onToggle: (v: StorageVolume, on: boolean) => void;
  onMounts: (mounts: Mounts) => void;
}

/** The mounts with `v` chosen or not; shared with the member read-only, it is mounted read-only. */
export function toggledMounts(mounts: Mounts, v: StorageVolume, on: boolean): Mounts {
  const next = { ...mounts };
  if (on)
    next[v.id] = {
      path: `/home/jovyan/${v.name.replace(/[^A-Za-z0-9._-]+/g, "-")}`,
      readOnly: v.shared_with_me === "read_only",
    };
  else delete next[v.id];
  return next;
}

export function volumesStep(p: VolumesStepProps) {
  return html`<fieldset data-testid=${NEW_SESSION_TEST_IDS.stepVolumes}>
      <legend>6. Volumes (optional)</legend>
      <p class="hint">Files on a volume outlive the session. <a href="/storage/volumes">Manage volumes</a></p>
      ${renderTask(p.volumes, {
        pendingLabel: "Loading your volumes…",
        errorHeading: "Your volumes could not be loaded",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          html`<p class="muted" data-testid=${NEW_SESSION_TEST_IDS.noVolumes}>You have no volume yet. <a href="/storage/volumes">Create one</a> to keep files between sessions.</p>`,
        complete: (r) =>
          html`<ul class="volume-list" style="list-style:none;padding:0">${r.data.map((v) => {
            const m = p.mounts[v.id];
            const id = `vol-${v.id}`;
            const pinConflict = !!m && !!v.bound_cluster && !!p.cluster && p.cluster !== v.bound_cluster;
            return html`<li data-testid=${NEW_SESSION_TEST_IDS.volumeChoice} data-volume-id=${v.id} style="margin-bottom:.75rem">
              <label class="check" for=${id}><input type="checkbox" id=${id} .checked=${!!m} ?disabled=${v.locked} @change=${(e: Event) => p.onToggle(v, (e.target as HTMLInputElement).checked)} />
                <strong>${v.name}</strong> <span class="muted">${v.size_gb} GB on ${v.pool}</span></label>
              ${v.shared_with_me ? html`<span class="badge tone-muted" data-testid=${NEW_SESSION_TEST_IDS.volumeShared}>Shared with you · ${v.shared_with_me === "read_only" ? "read-only" : "read-write"}</span>` : nothing}
              ${v.locked ? html`<span class="badge tone-warn" data-testid=${NEW_SESSION_TEST_IDS.volumeLocked}>Locked${v.lock_reason ? `: ${v.lock_reason}` : ""}: cannot be mounted</span>` : nothing}
              ${v.bound_cluster ? html`<p class="hint" data-testid=${NEW_SESSION_TEST_IDS.volumeKeepsCluster}>Its claim is on ${v.bound_cluster}: a session mounting it runs there until the claim is released (about 15 minutes after its last session).</p>` : nothing}
              ${pinConflict ? html`<p class="tone-warn" data-testid=${NEW_SESSION_TEST_IDS.volumePinConflict}>You pinned another cluster: this session would be refused. Choose "Any cluster" or ${v.bound_cluster}.</p>` : nothing}
              ${
                m
                  ? html`<div class="row" style="align-items:flex-end">
                    <div class="field"><label for="${id}-path">Mount at</label><input id="${id}-path" .value=${m.path} @input=${(e: Event) => p.onMounts({ ...p.mounts, [v.id]: { ...m, path: (e.target as HTMLInputElement).value } })} required /></div>
                    <label class="check"><input type="checkbox" .checked=${m.readOnly} ?disabled=${v.shared_with_me === "read_only"} @change=${(e: Event) => p.onMounts({ ...p.mounts, [v.id]: { ...m, readOnly: (e.target as HTMLInputElement).checked } })} /> read-only</label>
                  </div>`
                  : nothing
              }
            </li>`;
          })}</ul>`,
      })}
    </fieldset>`;
}
