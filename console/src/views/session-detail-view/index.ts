import { define } from "../../components/define.ts";
import { BerthSessionDetailView } from "./berth-session-detail-view.ts";

define("berth-session-detail-view", BerthSessionDetailView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-session-detail-view": BerthSessionDetailView;
  }
}

export { BerthSessionDetailView };
