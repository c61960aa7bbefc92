import { define } from "../../components/define.ts";
import { BerthAdminOrganizationsView } from "./berth-admin-organizations-view.ts";

define("berth-admin-organizations-view", BerthAdminOrganizationsView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-admin-organizations-view": BerthAdminOrganizationsView;
  }
}

export { BerthAdminOrganizationsView };
