import { define } from "../../components/define.ts";
import { BerthAdminUsersView } from "./berth-admin-users-view.ts";

define("berth-admin-users-view", BerthAdminUsersView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-admin-users-view": BerthAdminUsersView;
  }
}

export { BerthAdminUsersView };
