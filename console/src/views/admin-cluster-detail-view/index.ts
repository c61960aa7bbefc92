import { define } from "../../components/define.ts";
import { BerthAdminClusterDetailView } from "./berth-admin-cluster-detail-view.ts";

define("berth-admin-cluster-detail-view", BerthAdminClusterDetailView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-admin-cluster-detail-view": BerthAdminClusterDetailView;
  }
}

export { BerthAdminClusterDetailView };
