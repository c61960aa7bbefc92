// Every session reason now lives in @berth/crds (SessionReason): kept as a re-export under its old name
// while controllers' own files still import it here.
export { SessionReason as Reason } from "@berth/crds";
