import { define } from "../../components/define.ts";
import { BerthAdminPoolsView } from "./berth-admin-pools-view.ts";

define("berth-admin-pools-view", BerthAdminPoolsView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-admin-pools-view": BerthAdminPoolsView;
  }
}

export { BerthAdminPoolsView };
