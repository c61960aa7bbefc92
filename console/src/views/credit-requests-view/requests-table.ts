// The table of credit requests: who asked, for which wallet, how much, why, and where it stands; the
// requester may withdraw a pending one, an administrator decide it.
import { html, nothing } from "lit";
import type { CreditRequest } from "../../api/openapi.gen.ts";
import { type Directory, formatCredits, STATUS_LABEL, STATUS_TONE } from "../../data/credits.ts";
import { formatRelative, formatTime } from "../../data/format.ts";
import { CREDITS_TEST_IDS } from "../../test-ids/credits.ts";
import { requesterName } from "./events.ts";

export interface RequestsTableProps {
  rows: CreditRequest[];
  directory: Directory;
  me: string | undefined;
  manager: boolean;
  onWithdraw: (r: CreditRequest) => void;
  onDecide: (r: CreditRequest) => void;
}

export function requestsTable(p: RequestsTableProps) {
  const d = p.directory;
  // Focusable: at a phone's width the table scrolls sideways, and decided rows have nothing to reach.
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Credit requests"><table data-testid=${CREDITS_TEST_IDS.requestsTable}>
      <caption class="visually-hidden">Credit requests</caption>
      <thead><tr><th scope="col">Asked</th><th scope="col">By</th><th scope="col">For</th><th scope="col" class="num">Amount</th>
        <th scope="col">Reason</th><th scope="col">Status</th><th scope="col">Actions</th></tr></thead>
      <tbody>${p.rows.map((r) => {
        const who = requesterName(r, d, p.me);
        const forWhat = r.project_id
          ? `${d.projects.get(r.project_id) ?? r.project_id} (project)`
          : r.requester_id === p.me
            ? "Your wallet"
            : "Their own wallet";
        return html`<tr data-testid=${CREDITS_TEST_IDS.requestRow} data-request-id=${r.id} data-status=${r.status}>
          <td><span title=${formatTime(r.created_at)}>${formatRelative(r.created_at)}</span></td>
          <td>${who === "you" ? "You" : who}</td>
          <td>${forWhat}<br /><span class="muted">${d.organizations.get(r.organization_id) ?? r.organization_id}</span></td>
          <td class="num" data-testid=${CREDITS_TEST_IDS.requestAmount}>${formatCredits(r.amount)}${
            r.approved_amount && r.approved_amount !== r.amount
              ? html`<br /><span class="muted">${formatCredits(r.approved_amount)} approved</span>`
              : nothing
          }</td>
          <td class="reason">${r.reason}${r.decision_note ? html`<br /><span class="muted">Note: ${r.decision_note}</span>` : nothing}</td>
          <td><span class="badge ${STATUS_TONE[r.status]}" data-testid=${CREDITS_TEST_IDS.requestStatus}>${STATUS_LABEL[r.status]}</span>${
            r.decided_at ? html`<br /><span class="muted">${formatRelative(r.decided_at)}</span>` : nothing
          }</td>
          <td class="actions">${
            r.status !== "pending"
              ? html`<span class="muted">—</span>`
              : r.requester_id === p.me
                ? html`<button type="button" @click=${() => p.onWithdraw(r)} aria-label="Withdraw your request for ${formatCredits(r.amount)} credits" data-testid=${CREDITS_TEST_IDS.requestWithdraw}>Withdraw</button>`
                : p.manager
                  ? html`<button type="button" class="primary" @click=${() => p.onDecide(r)} aria-label="Decide the request of ${who} for ${formatCredits(r.amount)} credits" data-testid=${CREDITS_TEST_IDS.requestDecide}>Decide</button>`
                  : html`<span class="muted">Waiting</span>`
          }</td>
        </tr>`;
      })}</tbody>
    </table></div>`;
}
