import { define } from "../../components/define.ts";
import { BerthAdminUsersView } from "./berth-admin-users-view.ts";
import { BerthUserImport } from "./berth-user-import.ts";

define("berth-admin-users-view", BerthAdminUsersView);
define("berth-user-import", BerthUserImport);

declare global {
  interface HTMLElementTagNameMap {
    "berth-admin-users-view": BerthAdminUsersView;
    "berth-user-import": BerthUserImport;
  }
}

export { BerthAdminUsersView, BerthUserImport };
