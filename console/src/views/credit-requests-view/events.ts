// What the ask and decide parts tell the credit requests page (typed, namespaced events).
import type { CreditRequest } from "../../api/openapi.gen.ts";
import type { Directory } from "../../data/credits.ts";

/** The page's notice changes (undefined: cleared as a new action starts). */
export type CreditNoticeEvent = CustomEvent<{ text: string | undefined }>;

export const CREDIT_NOTICE = "berth-credit-notice";
/** A request was sent: the list reloads. */
export const CREDIT_REQUEST_SENT = "berth-credit-request-sent";
/** A request was decided: the list and the header's balance reload, the decision closes. */
export const CREDIT_REQUEST_DECIDED = "berth-credit-request-decided";
/** The decision was closed without deciding. */
export const CREDIT_DECIDE_CLOSE = "berth-credit-decide-close";

export function fire(el: HTMLElement, type: string, detail?: unknown): void {
  el.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
}

/** "you", the requester's email when the person may see it, else their id. */
export function requesterName(r: CreditRequest, d: Directory, me: string | undefined): string {
  return r.requester_id === me ? "you" : (d.users.get(r.requester_id) ?? r.requester_id);
}
