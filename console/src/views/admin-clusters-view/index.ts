import { define } from "../../components/define.ts";
import { BerthAdminClustersView } from "./berth-admin-clusters-view.ts";

define("berth-admin-clusters-view", BerthAdminClustersView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-admin-clusters-view": BerthAdminClustersView;
  }
}

export { BerthAdminClustersView };
