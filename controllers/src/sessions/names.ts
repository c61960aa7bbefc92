// Moved to @berth/crds (crds/src/names.ts): kept as a re-export while controllers' own files still import it here.
export {
  ANNOTATIONS,
  DEFAULT_GATEWAY_NAMESPACE,
  DEFAULT_SESSIONS_NAMESPACE,
  GATEWAY_POD_LABELS,
  LABELS,
  labelValue,
  MIRROR_FINALIZER,
  newSessionId,
  organizationNamespace,
  PAUSE_REASON_ANNOTATION,
  SESSION_ID,
  sessionIdOf,
  sessionResourceName,
} from "@berth/crds";
