// The creates waiting at each organization's door in this process (admission.ts batches them), one set
// per Deps. Its entries are admission.ts' own: this file stays free of Deps so Deps can name it.
export class AdmissionQueues {
  /** Organization id -> the creates waiting for its next batch (the head batch is in flight). */
  readonly byOrganization = new Map<string, unknown[]>();
}
