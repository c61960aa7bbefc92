// Domain errors, free of HTTP. Code below the route layer throws these; exactly one middleware
// (http/envelope.ts) maps them to the contract's envelope {error: {code, message, details, request_id,
// timestamp}}. ERROR_CODES is the one list of codes: the envelope, the OpenAPI document and the console
// all read it. Codes are stable (clients branch on them): add new ones, never rename or reuse one.

export const ERROR_CODES = {
  // 400
  validation_failed: {
    status: 400,
    description: "The request's parameters, query or body are invalid; details.issues names each bad field and why.",
  },
  malformed_json: { status: 400, description: "The request body is not valid JSON." },
  bad_request: { status: 400, description: "The request cannot be served as sent; the message says why." },
  import_csv_malformed: {
    status: 400,
    description:
      "The import's CSV cannot be read (unbalanced quotes, a missing or unknown column, no rows); details.line and details.reason say where and why. Nothing was imported.",
  },
  import_too_many_rows: {
    status: 400,
    description:
      "The import has more rows than the bound; details.limit_rows and details.rows give both. Split the file.",
  },
  webhook_url_invalid: {
    status: 400,
    description:
      "The webhook URL does not parse, is not https, or carries credentials; details.url and details.reason say which.",
  },
  image_reference_invalid: {
    status: 400,
    description:
      "The image reference does not parse, carries credentials, or a name or tag is outside the OCI grammar; details.reason (syntax, credentials, too_long) and details.issues say what to fix.",
  },
  gpu_fraction_not_offered: {
    status: 400,
    description:
      "The GPU fraction is not one Berth offers; details.allowed lists those it does (1 for whole cards, 1/2, 1/4, 1/8).",
  },
  gpu_slice_too_small: {
    status: 400,
    description:
      "The slice would guarantee less GPU memory than the sharing layer can isolate; details give the slice's memory, the minimum and the largest fraction that meets it.",
  },
  idle_timeout_out_of_bounds: {
    status: 400,
    description:
      "The idle timeout asked for is outside the resource policy's bounds; details.min and details.max give them.",
  },
  max_runtime_out_of_bounds: {
    status: 400,
    description: "The maximum running time asked for is above the resource policy's; details.max gives it.",
  },
  dockerfile_invalid: {
    status: 400,
    description:
      "The Dockerfile is empty or larger than the limit; details.reason (empty, too_large) and details.limit_bytes say which.",
  },
  mig_profile_unknown: {
    status: 400,
    description:
      "The MIG profile is not one of any card Berth knows (`<compute>g.<memory>gb`, e.g. 1g.10gb); details.allowed lists the known ones.",
  },
  mig_profile_not_for_model: {
    status: 400,
    description:
      "The MIG profile exists, but not on this GPU model (a 40 GB card has 1g.5gb, an 80 GB one 1g.10gb), or the model has no MIG; details.allowed lists the model's profiles.",
  },
  mig_layout_overfilled: {
    status: 400,
    description:
      "The layout asks more of one card than it has: 7 compute and 8 memory slices, and each profile at most its instances per card; details give the slices asked and, when one profile is over its own bound, that profile and its maximum.",
  },
  node_selector_invalid: {
    status: 400,
    description:
      "A node pool's selector is not one label requirement (`key=value` or `key in (a,b)`) with a valid label key and values; details.reason says what is wrong.",
  },
  // 401
  unauthenticated: { status: 401, description: "No bearer token, or the token is invalid. Sign in again." },
  token_expired: { status: 401, description: "The bearer token has expired. Sign in again (there is no refresh)." },
  invalid_credentials: { status: 401, description: "The email and password do not match an account." },
  // 403
  forbidden: { status: 403, description: "The caller may not do this." },
  password_change_required: {
    status: 403,
    description: "The account must change its password before calling anything but the password endpoints.",
  },
  current_password_required: {
    status: 403,
    description:
      "Your own password changes only at POST /api/v1/auth/password, with the current one (whatever your role); details.endpoint names it.",
  },
  signup_closed: {
    status: 403,
    description: "Sign-up is closed, or the email's domain is not among those allowed; details say which.",
  },
  quota_exceeded: {
    status: 403,
    description: "The request would exceed a quota or resource policy; details say which.",
  },
  // 404, 405
  not_found: { status: 404, description: "No such route, or no such object visible to the caller." },
  method_not_allowed: {
    status: 405,
    description: "The route exists but not for this method; the Allow header lists the methods it takes.",
  },
  // 409
  node_pool_overlap: {
    status: 409,
    description:
      "The node pool would share nodes with another pool of the cluster (same label with a common value, or a node reported with both labels); details.pool_id and details.nodes name the other pool and the nodes.",
  },
  mig_layout_overlap: {
    status: 409,
    description:
      "The MIG layout would mark nodes another layout of the cluster marks for the same GPU model (same label with a common value, or a node reported with both labels); details.layout_id and details.nodes name the other layout and the nodes.",
  },
  conflict: { status: 409, description: "The request conflicts with the current state of the object." },
  already_exists: { status: 409, description: "An object with this identity already exists." },
  idempotency_request_in_flight: {
    status: 409,
    description: "A request with this Idempotency-Key is still being processed; retry later.",
  },
  volume_on_another_cluster: {
    status: 409,
    description:
      "The volume's claim lives on another cluster than the one asked for; details say which and when the claim is released (`release_after`, `releasing`, `idle_release_seconds`).",
  },
  request_already_decided: {
    status: 409,
    description:
      "The request was already approved, denied or cancelled (details.status says which); a decision is made once.",
  },
  keep_running_limit_reached: {
    status: 409,
    description:
      "The session was kept running as often as its resource policy allows in this run period; details.used and details.max say so.",
  },
  webhook_limit_reached: {
    status: 409,
    description: "The organization already has the most webhook endpoints allowed; details.limit gives it.",
  },
  pool_in_use: {
    status: 409,
    description:
      "The storage pool still holds volumes (details.volumes counts them); move or delete them before deleting the pool or changing its cluster or storage class.",
  },
  pool_capacity_exceeded: {
    status: 409,
    description:
      "No single pool the volume could use has room for it (pools are never added together); details.pools gives each pool's free gigabytes and details.largest_available_gb the most any one pool has.",
  },
  volume_pool_not_shared: {
    status: 409,
    description:
      "The volume's pool is shared with selected clusters only, and the session was pinned to another; details.clusters lists those it may run on.",
  },
  volume_in_use: {
    status: 409,
    description: "A session still mounts the volume; details.sessions names them. End them before deleting it.",
  },
  volume_mounted: {
    status: 409,
    description:
      "A session that is not paused mounts the volume read-write, so a snapshot would catch files mid-write; details.sessions names them. Pause them (or end them) and ask again.",
  },
  snapshot_restoring: {
    status: 409,
    description:
      "A volume is still being made from the snapshot; details.volumes names them. Delete the snapshot once they are ready.",
  },
  snapshot_not_ready: {
    status: 409,
    description:
      "The snapshot cannot be restored in its state (details.state: creating, failed or deleting); only a ready snapshot is.",
  },
  volume_purged: {
    status: 409,
    description:
      "The volume was deleted and its grace period is over (details.purge_after): its data is gone and it cannot be restored.",
  },
  volume_locked: {
    status: 409,
    description:
      "An administrator locked the volume: it cannot be mounted, resized or deleted; details.reason says why.",
  },
  invalid_session_state: {
    status: 409,
    description:
      "The session's phase does not allow this action (e.g. resuming a running session); details give the phase, the desired state and the actions allowed now.",
  },
  image_in_use: {
    status: 409,
    description: "A session still uses the private image; details.sessions names them. End them before deleting it.",
  },
  build_limit_reached: {
    status: 409,
    description:
      "A build is already in flight for you (one per member) or for your organization (details.limit); details.scope says which. Wait for it or cancel it.",
  },
  cluster_in_use: {
    status: 409,
    description: "The cluster still has live sessions or GPU allocations; end them before deregistering it.",
  },
  insufficient_credits: {
    status: 409,
    description:
      "The wallet cannot pay for this movement; details give its spendable balance and the amount asked (minor units, strings).",
  },
  import_not_finished: {
    status: 409,
    description:
      "The user import has not ended yet (details.state: queued or running): its results and temporary passwords come when it has. Poll the import.",
  },
  // 410
  import_passwords_gone: {
    status: 410,
    description:
      "The import's temporary passwords are given once and then erased: details.reason says whether they were fetched already (fetched) or ended by the retention (expired). Reset those accounts' passwords instead.",
  },
  // 413, 415, 422, 429
  payload_too_large: {
    status: 413,
    description: "The request body is larger than the limit; details.limit_bytes gives it.",
  },
  import_file_too_large: {
    status: 413,
    description: "The import's CSV is larger than the bound; details.limit_bytes gives it. Split the file.",
  },
  unsupported_media_type: { status: 415, description: "The request body must be sent as application/json." },
  idempotency_key_reused: {
    status: 422,
    description: "This Idempotency-Key was already used with a different request.",
  },
  grantee_not_found: {
    status: 422,
    description: "A node pool grant names an organization or project that does not exist; details.grantee names it.",
  },
  // 422: cluster registration refused by the probe; details.checks holds every check's boolean.
  guarantee_unsatisfiable: {
    status: 422,
    description:
      "The resource policy's guarantees could not all be honoured: per GPU model the organizations' guarantees would add up to more than the fleet has (or a project's to more than its organization's). The message gives the arithmetic; details.models each model's sum and capacity.",
  },
  gpu_model_unavailable: {
    status: 422,
    description:
      "No cluster of the fleet (or the pinned cluster) has the offering's GPU model; details.reported_models lists the models it does have.",
  },
  gpu_sharing_unavailable: {
    status: 422,
    description:
      "The offering is a fraction of a card, and no cluster with its GPU model (or not the pinned one) runs a GPU sharing layer; details.sharing_clusters lists those that do, details.supported_layers the layers Berth drives.",
  },
  mig_profile_unavailable: {
    status: 422,
    description:
      "The offering is a MIG profile, and no node of its GPU model (on the pinned cluster, when pinned) is marked with a MIG layout of that profile and advertises it; details.mig_clusters lists the clusters that do.",
  },
  cluster_unreachable: {
    status: 422,
    description:
      "The cluster's API server did not answer before the probe's deadline (or refused the connection, or its certificate did not verify).",
  },
  cluster_credential_invalid: {
    status: 422,
    description: "The cluster answered 401 to the credential: the token or certificate is not valid there.",
  },
  cluster_credential_insufficient: {
    status: 422,
    description: "The credential is valid but lacks permissions Berth needs; details.missing_permissions lists them.",
  },
  gpu_runtime_class_missing: {
    status: 422,
    description: "The cluster has no RuntimeClass for GPU containers (by default `nvidia`, handler `nvidia`).",
  },
  gpu_device_plugin_missing: {
    status: 422,
    description:
      "The cluster shows no GPU device plugin: no nvidia-device-plugin DaemonSet and no node with allocatable nvidia.com/gpu.",
  },
  webhook_target_forbidden: {
    status: 422,
    description:
      "The webhook URL's host is, or resolves to, an address Berth does not call (loopback, private, link-local, carrier-grade NAT, unique-local, IPv4-mapped, ...) or does not resolve; details.address and details.reason say which. An operator can admit trusted internal hosts with BERTH_WEBHOOK_ALLOW_HOSTS.",
  },
  image_source_forbidden: {
    status: 422,
    description:
      "The image's registry is, or resolves to, an internal address Berth does not call; details.registry and details.reason say which. An operator can trust internal registries with BERTH_IMAGE_INTERNAL_REGISTRIES.",
  },
  image_unsigned: {
    status: 422,
    description:
      "Image signatures are required and this image has none by a trusted key; details.reference names the image and details.reason says why: not_pinned (named by tag; name it by digest), unsigned, untrusted (signed by a key not in the settings' image_signatures.keys), invalid (a signature of another digest).",
  },
  no_build_cluster: {
    status: 422,
    description:
      "No cluster of the fleet is marked for image builds; an administrator marks one with PUT /api/v1/image-builds/clusters/{cluster_id}.",
  },
  build_cluster_not_ready: {
    status: 422,
    description:
      "The cluster's registered credential may not do what builds need there (details.missing_permissions), or its builds namespace or the ImageBuild resource definition is missing (details.reason): the operator's install for builds makes both.",
  },
  export_too_large: {
    status: 422,
    description:
      "The export's range or row count is beyond its bound; details give the bounds and what was asked: narrow the range or add filters.",
  },
  too_many_requests: {
    status: 429,
    description: "Too many requests (for example failed sign-ins); retry after the Retry-After header.",
  },
  // 5xx
  internal: {
    status: 500,
    description: "An unexpected error. It is logged under the request id; nothing internal is returned.",
  },
  kubernetes_refused: {
    status: 500,
    description:
      "Berth's own Kubernetes credential was refused (401/403) for what this request needed: the installation's RBAC lacks a grant. details.method and details.resource name it; an administrator fixes the install, retrying does not help.",
  },
  unavailable: {
    status: 503,
    description: "A dependency (database, cluster) is not reachable right now; retry later.",
  },
} as const satisfies Record<string, { status: number; description: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;
export const ERROR_CODE_LIST = Object.keys(ERROR_CODES) as ErrorCode[];

export type ErrorDetails = Record<string, unknown>;

export interface ValidationIssue {
  /** Where the bad value is, from the request's root: ["body", "email"], ["query", "size"]. */
  path: (string | number)[];
  message: string;
  /** zod's issue code (too_small, invalid_type, ...) or ours. */
  code: string;
}

/** Base of every error the API answers on purpose. `code` decides the HTTP status (ERROR_CODES). */
export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;
  /** Extra response headers the envelope sets (Allow, Retry-After, WWW-Authenticate). */
  readonly headers: Record<string, string>;
  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, headers: Record<string, string> = {}) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.details = details;
    this.headers = headers;
  }
  get status(): number {
    return ERROR_CODES[this.code].status;
  }
}

export class NotFound extends DomainError {
  constructor(kind: string, id?: string, details: ErrorDetails = {}) {
    super("not_found", id === undefined ? `${kind} not found` : `${kind} ${id} not found`, {
      kind,
      ...(id === undefined ? {} : { id }),
      ...details,
    });
  }
}

export class Conflict extends DomainError {
  constructor(
    message: string,
    details: ErrorDetails = {},
    code: Extract<
      ErrorCode,
      | "conflict"
      | "already_exists"
      | "volume_on_another_cluster"
      | "idempotency_request_in_flight"
      | "pool_in_use"
      | "pool_capacity_exceeded"
      | "volume_in_use"
      | "volume_locked"
      | "volume_purged"
      | "volume_mounted"
      | "snapshot_restoring"
      | "snapshot_not_ready"
      | "volume_pool_not_shared"
      | "request_already_decided"
      | "image_in_use"
      | "build_limit_reached"
      | "node_pool_overlap"
      | "mig_layout_overlap"
    > = "conflict",
  ) {
    super(code, message, details);
  }
}

export class Invalid extends DomainError {
  readonly issues: ValidationIssue[];
  constructor(message: string, issues: ValidationIssue[] = []) {
    super("validation_failed", message, { issues });
    this.issues = issues;
  }
}

export class Forbidden extends DomainError {
  constructor(message = "you may not do this", details: ErrorDetails = {}) {
    super("forbidden", message, details);
  }
}

export class Unauthorized extends DomainError {
  constructor(message = "a valid bearer token is required", details: ErrorDetails = {}) {
    super("unauthenticated", message, details, { "WWW-Authenticate": 'Bearer realm="berth"' });
  }
}

export class TokenExpired extends DomainError {
  constructor(message = "the bearer token has expired; sign in again") {
    super(
      "token_expired",
      message,
      {},
      { "WWW-Authenticate": 'Bearer realm="berth", error="invalid_token", error_description="token expired"' },
    );
  }
}

export class InvalidCredentials extends DomainError {
  constructor(message = "email or password is incorrect") {
    super("invalid_credentials", message);
  }
}

export class PasswordChangeRequired extends DomainError {
  constructor(message = "change your password before using the API") {
    super("password_change_required", message);
  }
}

export class QuotaExceeded extends DomainError {
  constructor(message: string, details: ErrorDetails = {}) {
    super("quota_exceeded", message, details);
  }
}

export class TooManyRequests extends DomainError {
  constructor(message: string, retryAfterSeconds: number, details: ErrorDetails = {}) {
    super(
      "too_many_requests",
      message,
      { retry_after_seconds: retryAfterSeconds, ...details },
      { "Retry-After": String(Math.max(1, Math.ceil(retryAfterSeconds))) },
    );
  }
}

export class Unavailable extends DomainError {
  constructor(message: string, details: ErrorDetails = {}, headers: Record<string, string> = {}) {
    super("unavailable", message, details, headers);
  }
}

export function isDomainError(err: unknown): err is DomainError {
  return err instanceof DomainError;
}
