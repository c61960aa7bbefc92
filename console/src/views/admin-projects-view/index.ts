import { define } from "../../components/define.ts";
import { BerthAdminProjectsView } from "./berth-admin-projects-view.ts";

define("berth-admin-projects-view", BerthAdminProjectsView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-admin-projects-view": BerthAdminProjectsView;
  }
}

export { BerthAdminProjectsView };
