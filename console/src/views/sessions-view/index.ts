import { define } from "../../components/define.ts";
import { BerthSessionsView } from "./berth-sessions-view.ts";

define("berth-sessions-view", BerthSessionsView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-sessions-view": BerthSessionsView;
  }
}

export { BerthSessionsView };
