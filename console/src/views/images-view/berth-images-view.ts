// Images: the member's private images (import from a public registry with live progress, build from a
// Dockerfile with a live log, delete) and the catalog's public images. Progress arrives as `image.updated` on the event stream (polling when the
// stream cannot be held); the API decides everything (docs/dev/images.md).
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import type { LiveChange } from "../../api/live-feed.ts";
import type { Image, ImageBuild, PrivateImage } from "../../api/openapi.gen.ts";
import { auth } from "../../app/context.ts";
import { onSessionsChanged } from "../../app/live.ts";
import { confirmAction } from "../../components/confirm-dialog/index.ts";
import "../../components/build-log/index.ts";
import "../../components/empty-state/index.ts";
import "../../components/error-panel/index.ts";
import {
  cancelImageBuild,
  createImageBuild,
  deletePrivateImage,
  importImage,
  loadImageBuilds,
  loadImages,
  loadPrivateImages,
} from "../../app/images.ts";
import { renderTask } from "../../components/task-states.ts";
import { formatBytes, formatTime } from "../../data/format.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { IMAGES_TEST_IDS } from "../../test-ids/images.ts";

const STATE_LABEL: Record<PrivateImage["state"], string> = {
  importing: "Importing",
  building: "Building",
  ready: "Ready",
  failed: "Failed",
};

export class BerthImagesView extends LitElement {
  static override styles = [tokens, shared, page];
  static override properties = {
    error: { state: true },
    notice: { state: true },
    busy: { state: true },
    following: { state: true },
  };
  declare following: string;
  declare error: unknown;
  declare notice: string | undefined;
  declare busy: boolean;
  #unsubscribe: (() => void) | undefined;

  #mine = new Task(this, {
    task: async (_a, { signal }) => loadPrivateImages(signal),
    args: () => [],
  });
  #builds = new Task(this, {
    task: async (_a, { signal }) => loadImageBuilds(signal),
    args: () => [],
  });
  #catalog = new Task(this, {
    task: async (_a, { signal }) => loadImages(signal),
    args: () => [],
  });

  constructor() {
    super();
    this.error = undefined;
    this.notice = undefined;
    this.busy = false;
    this.following = "";
  }

  override connectedCallback(): void {
    super.connectedCallback();
    // An image's progress or outcome (image.updated), or a poll tick while the stream is down. A burst
    // comes as one call with all its events; an end's notification.created counts as an end too.
    this.#unsubscribe = onSessionsChanged((_last, burst) => {
      const ended = (c: LiveChange) => {
        const kind = (c.data as { notification?: { kind?: string } } | undefined)?.notification?.kind;
        return (
          c.message?.event === "notification.created" &&
          (kind === "image_build.finished" || kind === "image_import.finished")
        );
      };
      const ready = (c: LiveChange) =>
        c.message?.event === "image.updated" && (c.data as { image?: PrivateImage })?.image?.state === "ready";
      if (burst.some((c) => c.source === "poll" || c.message?.event === "image.updated" || ended(c)))
        void this.#mine.run();
      if (burst.some((c) => ended(c) || ready(c))) void this.#catalog.run();
    }, 300);
  }

  override disconnectedCallback(): void {
    this.#unsubscribe?.();
    super.disconnectedCallback();
  }

  get #orgs(): string[] {
    return [...new Set((auth.me?.memberships ?? []).map((m) => m.organization_id))];
  }

  async #import(e: SubmitEvent): Promise<void> {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const f = new FormData(form);
    const opt = (k: string) => {
      const v = String(f.get(k) ?? "").trim();
      return v ? { [k]: v } : {};
    };
    this.error = undefined;
    this.notice = undefined;
    this.busy = true;
    try {
      const img = await importImage({
        reference: String(f.get("reference") ?? "").trim(),
        ...opt("name"),
        ...opt("tag"),
        ...opt("organization_id"),
        kind: String(f.get("kind") ?? "jupyterlab") as PrivateImage["kind"],
      });
      this.notice = `Importing ${img.source_reference}: progress shows below.`;
      form.reset();
      void this.#mine.run();
    } catch (err) {
      this.error = err;
    } finally {
      this.busy = false;
    }
  }

  async #build(e: SubmitEvent): Promise<void> {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const f = new FormData(form);
    const opt = (k: string) => {
      const v = String(f.get(k) ?? "").trim();
      return v ? { [k]: v } : {};
    };
    this.error = undefined;
    this.notice = undefined;
    this.busy = true;
    try {
      const b = await createImageBuild({
        dockerfile: String(f.get("dockerfile") ?? ""),
        name: String(f.get("name") ?? "").trim(),
        ...opt("tag"),
        ...opt("base_image"),
        ...opt("organization_id"),
        kind: String(f.get("kind") ?? "jupyterlab") as PrivateImage["kind"],
      });
      this.notice = b.reused
        ? "An identical build of yours answered: its result is reused."
        : "Build queued: its log follows below.";
      this.following = b.id;
      void this.#builds.run();
      void this.#mine.run();
    } catch (err) {
      this.error = err;
    } finally {
      this.busy = false;
    }
  }

  async #cancel(b: ImageBuild): Promise<void> {
    this.error = undefined;
    try {
      await cancelImageBuild(b.id);
      this.notice = "Build cancelled.";
      void this.#builds.run();
      void this.#mine.run();
    } catch (err) {
      this.error = err;
    }
  }

  #buildsTable(rows: ImageBuild[]) {
    return html`<div class="table-wrap"><table data-testid=${IMAGES_TEST_IDS.buildsTable}>
      <caption class="visually-hidden">Your builds</caption>
      <thead><tr><th scope="col">Build</th><th scope="col">State</th><th scope="col">Started</th><th scope="col">Actions</th></tr></thead>
      <tbody>${rows.map(
        (b) => html`<tr data-testid=${IMAGES_TEST_IDS.buildRow} data-build-id=${b.id} data-state=${b.state}>
          <td><code>${b.id}</code>${b.base_image ? html`<br /><small class="muted">from ${b.base_image}</small>` : nothing}</td>
          <td data-testid=${IMAGES_TEST_IDS.buildState}>${b.state}${b.failure_reason ? html`<br /><small>${b.failure_reason}</small>` : nothing}</td>
          <td>${formatTime(b.created_at)}</td>
          <td class="actions">
            <button type="button" @click=${() => (this.following = b.id)} aria-pressed=${this.following === b.id ? "true" : "false"} aria-label="Log of ${b.id}">Log</button>
            ${b.state === "queued" || b.state === "running" ? html`<button type="button" class="danger" @click=${() => this.#cancel(b)} aria-label="Cancel ${b.id}">Cancel</button>` : nothing}
          </td></tr>`,
      )}</tbody></table></div>`;
  }

  async #delete(img: PrivateImage): Promise<void> {
    if (
      !(await confirmAction({
        heading: `Delete ${img.display_name}?`,
        body:
          img.state === "importing"
            ? "The import stops and its slot is freed."
            : "Sessions can no longer start from it. Sessions using it now must end first.",
        confirmLabel: "Delete",
        danger: true,
      }))
    )
      return;
    this.error = undefined;
    try {
      await deletePrivateImage(img.id);
      this.notice = `${img.display_name} deleted.`;
      void this.#mine.run();
      void this.#catalog.run();
    } catch (err) {
      this.error = err;
    }
  }

  #progress(img: PrivateImage) {
    if (img.state === "failed")
      return html`<span data-testid=${IMAGES_TEST_IDS.imageFailure}>${img.failure?.reason ?? "failed"}</span>`;
    if (img.state === "ready") return html`${formatBytes(img.size_bytes)}`;
    const { bytes_copied: done, bytes_total: total } = img.progress;
    return total
      ? html`<progress data-testid=${IMAGES_TEST_IDS.imageProgress} max=${total} value=${done} aria-label="Copied ${formatBytes(done)} of ${formatBytes(total)}"></progress>
          <small>${formatBytes(done)} of ${formatBytes(total)}</small>`
      : html`<small>Resolving…</small>`;
  }

  #mineTable(rows: PrivateImage[]) {
    return html`<div class="table-wrap"><table data-testid=${IMAGES_TEST_IDS.myImagesTable}>
      <caption class="visually-hidden">Your private images</caption>
      <thead><tr><th scope="col">Image</th><th scope="col">From</th><th scope="col">State</th><th scope="col">Size / progress</th><th scope="col">Added</th><th scope="col">Actions</th></tr></thead>
      <tbody>${rows.map(
        (i) => html`<tr data-testid=${IMAGES_TEST_IDS.myImageRow} data-image-id=${i.id} data-state=${i.state}>
          <td><strong>${i.display_name}</strong><br /><small class="muted">${i.kind}</small>${i.image ? html`<br /><code class="muted">${i.image}</code>` : nothing}</td>
          <td><code>${i.source_reference ?? "build"}</code></td>
          <td data-testid=${IMAGES_TEST_IDS.myImageState}>${STATE_LABEL[i.state]}</td>
          <td>${this.#progress(i)}</td>
          <td>${formatTime(i.created_at)}</td>
          <td class="actions"><button type="button" class="danger" @click=${() => this.#delete(i)} aria-label="Delete ${i.display_name}">Delete</button></td>
        </tr>`,
      )}</tbody></table></div>`;
  }

  #catalogTable(rows: Image[]) {
    return html`<div class="table-wrap"><table data-testid=${IMAGES_TEST_IDS.catalogImagesTable}>
      <caption class="visually-hidden">Catalog images</caption>
      <thead><tr><th scope="col">Image</th><th scope="col">Kind</th><th scope="col">Reference</th></tr></thead>
      <tbody>${rows.map(
        (i) => html`<tr data-testid=${IMAGES_TEST_IDS.catalogImageRow} data-image=${i.name}>
          <td><strong>${i.display_name}</strong>${i.description ? html`<br /><small class="muted">${i.description}</small>` : nothing}</td>
          <td>${i.kind}</td><td><code>${i.image}</code></td></tr>`,
      )}</tbody></table></div>`;
  }

  override render() {
    const orgs = this.#orgs;
    return html`<h1>Images</h1>
      <p>Bring your own environment: import an image from a public registry as your private image. Sessions pull it from Berth's registry by digest.</p>
      ${this.notice ? html`<p class="success" role="status">${this.notice}</p>` : nothing}
      ${this.error ? html`<berth-error-panel heading="That did not work" .error=${this.error}></berth-error-panel>` : nothing}
      <form style="margin:1rem 0" @submit=${this.#import} aria-label="Import an image" data-testid=${IMAGES_TEST_IDS.importForm}>
        <div class="row">
          <div style="flex:3;min-width:16rem"><label for="i-ref">Image reference</label><input id="i-ref" name="reference" required maxlength="1024" placeholder="docker.io/library/python:3.12" data-testid=${IMAGES_TEST_IDS.importReference} /></div>
          <div style="flex:1;min-width:8rem"><label for="i-name">Name (optional)</label><input id="i-name" name="name" maxlength="128" pattern="[a-z0-9]+([._-][a-z0-9]+)*" /></div>
          <div style="flex:1;min-width:6rem"><label for="i-tag">Tag (optional)</label><input id="i-tag" name="tag" maxlength="128" /></div>
          <div style="flex:1;min-width:8rem"><label for="i-kind">Opens as</label><select id="i-kind" name="kind"><option value="jupyterlab">JupyterLab</option><option value="code-server">Code editor</option><option value="terminal">Terminal</option></select></div>
          ${
            orgs.length > 1
              ? html`<div style="flex:1;min-width:8rem"><label for="i-org">Organization</label><select id="i-org" name="organization_id">${orgs.map((o) => html`<option value=${o}>${o}</option>`)}</select></div>`
              : nothing
          }
        </div>
        <button class="primary" type="submit" ?disabled=${this.busy} data-testid=${IMAGES_TEST_IDS.importSubmit}>Import</button>
      </form>
      <h2>Build from a Dockerfile</h2>
      <form style="margin:1rem 0" @submit=${this.#build} aria-label="Build an image" data-testid=${IMAGES_TEST_IDS.buildForm}>
        <label for="b-file">Dockerfile (ARG BASE_IMAGE names the base image, when you choose one)</label>
        <textarea id="b-file" name="dockerfile" required rows="6" style="width:100%;font-family:var(--berth-font-mono)" placeholder="ARG BASE_IMAGE&#10;FROM $BASE_IMAGE&#10;RUN pip install numpy"></textarea>
        <div class="row">
          <div style="flex:1;min-width:8rem"><label for="b-name">Name</label><input id="b-name" name="name" required maxlength="128" pattern="[a-z0-9]+([._-][a-z0-9]+)*" /></div>
          <div style="flex:1;min-width:6rem"><label for="b-tag">Tag (optional)</label><input id="b-tag" name="tag" maxlength="128" /></div>
          <div style="flex:1;min-width:10rem"><label for="b-base">Base image</label><select id="b-base" name="base_image"><option value="">None</option>${(this.#catalog.value?.data ?? []).map((i) => html`<option value=${i.name}>${i.display_name}</option>`)}</select></div>
          <div style="flex:1;min-width:8rem"><label for="b-kind">Opens as</label><select id="b-kind" name="kind"><option value="jupyterlab">JupyterLab</option><option value="code-server">Code editor</option><option value="terminal">Terminal</option></select></div>
          ${
            this.#orgs.length > 1
              ? html`<div style="flex:1;min-width:8rem"><label for="b-org">Organization</label><select id="b-org" name="organization_id">${this.#orgs.map((o) => html`<option value=${o}>${o}</option>`)}</select></div>`
              : nothing
          }
        </div>
        <button class="primary" type="submit" ?disabled=${this.busy} data-testid=${IMAGES_TEST_IDS.buildSubmit}>Build</button>
      </form>
      ${renderTask(this.#builds, {
        pendingLabel: "Loading your builds…",
        isEmpty: (r) => r.data.length === 0,
        empty: () => html`<p class="muted">No build yet.</p>`,
        complete: (r) => this.#buildsTable(r.data.slice(0, 10)),
      })}
      ${
        this.following
          ? html`<berth-build-log build-id=${this.following} @berth-build-ended=${() => {
              void this.#builds.run();
              void this.#mine.run();
              void this.#catalog.run();
            }}></berth-build-log>`
          : nothing
      }
      <h2>Yours</h2>
      ${renderTask(this.#mine, {
        pendingLabel: "Loading your images…",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          html`<berth-empty-state heading="No image of your own yet">Import one above; it counts against your ${this.#mine.value?.limit ?? 20}.</berth-empty-state>`,
        complete: (r) =>
          html`<p class="muted" data-testid=${IMAGES_TEST_IDS.imageCount}>${r.count} of ${r.limit} private images used (failed ones do not count).</p>${this.#mineTable(r.data)}`,
      })}
      <h2>Catalog</h2>
      ${renderTask(this.#catalog, {
        pendingLabel: "Loading the catalog…",
        isEmpty: (r) => r.data.filter((i) => i.visibility === "public").length === 0,
        empty: () => html`<berth-empty-state heading="No public image">An administrator adds them.</berth-empty-state>`,
        complete: (r) => this.#catalogTable(r.data.filter((i) => i.visibility === "public")),
      })}`;
  }
}
