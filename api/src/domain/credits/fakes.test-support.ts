// A management cluster stand-in for tests of the door over HTTP: serves catalog objects and accepts
// Session resources, so POST /api/v1/sessions runs its whole path up to the write.
import type { KubeApi, KubeResponse, RequestOptions } from "@berth/controllers/kube";
import { ImageKind, type KindPath, OfferingKind, ResourcePresetKind, resourcePath } from "@berth/crds";
import { examples } from "@berth/crds/testing";

const path = (k: KindPath, name: string) => resourcePath(k, { name });

export class FakeManagementCluster implements KubeApi {
  readonly server = "https://fake-management.invalid";
  readonly objects = new Map<string, unknown>();
  readonly created: { path: string; body: unknown }[] = [];
  readonly patches: { path: string; body: unknown }[] = [];
  readonly deleted: string[] = [];
  /** ResourcePolicy objects the catalog lists (set them before the first read: the catalog caches 5 s). */
  readonly policies: unknown[] = [];
  constructor() {
    this.objects.set(path(OfferingKind, "h100"), examples.Offering());
    this.objects.set(path(ResourcePresetKind, "gpu-small"), examples.ResourcePreset());
    this.objects.set(path(ImageKind, "jupyterlab"), examples.Image());
  }
  async request<T = unknown>(method: string, p: string, opts: RequestOptions = {}): Promise<KubeResponse<T>> {
    if (method === "GET") {
      if (p.endsWith("/resourcepolicies")) return { status: 200, body: { items: structuredClone(this.policies) } as T };
      const o = this.objects.get(p);
      return o ? { status: 200, body: structuredClone(o) as T } : { status: 404, body: { reason: "NotFound" } as T };
    }
    if (method === "POST") {
      const body = structuredClone(opts.body) as { metadata?: Record<string, unknown> };
      body.metadata = {
        ...body.metadata,
        resourceVersion: "1",
        uid: `uid-${this.created.length}`,
        creationTimestamp: new Date().toISOString(),
      };
      this.created.push({ path: p, body });
      const name = body.metadata.name as string | undefined;
      if (name) {
        if (this.objects.has(`${p}/${name}`)) return { status: 409, body: { reason: "AlreadyExists" } as T };
        this.objects.set(`${p}/${name}`, body);
      }
      return { status: 201, body: body as T };
    }
    if (method === "PATCH") {
      this.patches.push({ path: p, body: structuredClone(opts.body) });
      const sub = p.endsWith("/status");
      const key = sub ? p.slice(0, -"/status".length) : p;
      const o = this.objects.get(key) as Record<string, Record<string, unknown>> | undefined;
      if (!o) return { status: 404, body: { reason: "NotFound" } as T };
      const patch = opts.body as Record<string, Record<string, unknown>>;
      // A merge patch, one level deep (enough for spec and status).
      if (sub) o.status = { ...(o.status ?? {}), ...patch.status };
      else o.spec = { ...(o.spec ?? {}), ...patch.spec };
      return { status: 200, body: structuredClone(o) as T };
    }
    if (method === "DELETE") {
      this.deleted.push(p);
      return this.objects.delete(p)
        ? { status: 200, body: {} as T }
        : { status: 404, body: { reason: "NotFound" } as T };
    }
    return { status: 405, body: {} as T };
  }
  async json<T = unknown>(method: string, p: string, opts?: RequestOptions): Promise<T> {
    const r = await this.request<T>(method, p, opts);
    if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status}`);
    return r.body;
  }
  watch(): Promise<void> {
    return new Promise(() => {});
  }
}
