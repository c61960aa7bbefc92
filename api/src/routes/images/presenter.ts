// Private images on the wire: the row's fields picked by name (claims and attempts stay inside).
import type { PrivateImageRow } from "../../db/operations/images/types.ts";
import { isoTimestamp } from "../../http/timestamp.ts";
import type { PrivateImage } from "./schemas.ts";

const num = (v: string | number | null) => (v === null ? null : Number(v));
const iso = (d: Date | string) => isoTimestamp(new Date(d));

/** `pullPrefix`: Berth's registry as clusters name it (the reference of a ready image). */
export function presentPrivateImage(r: PrivateImageRow, pullPrefix: string | undefined): PrivateImage {
  return {
    id: r.id,
    name: r.repository.split("/").at(-1) ?? r.repository,
    tag: r.tag,
    display_name: r.display_name,
    kind: r.kind,
    owner: r.owner_id,
    organization_id: r.organization_id,
    source: r.source,
    source_reference: r.source_reference,
    state: r.state,
    progress: { bytes_copied: Number(r.bytes_copied ?? 0), bytes_total: num(r.bytes_total) },
    image: r.state === "ready" && r.digest && pullPrefix ? `${pullPrefix}/${r.repository}@${r.digest}` : null,
    digest: r.digest,
    size_bytes: num(r.size_bytes),
    failure: r.state === "failed" ? { code: r.failure_code ?? "registry_error", reason: r.failure_reason ?? "" } : null,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
    ready_at: r.ready_at ? iso(r.ready_at) : null,
  };
}
