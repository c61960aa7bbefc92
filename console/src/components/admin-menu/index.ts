import { define } from "../define.ts";
import { BerthAdminMenu } from "./berth-admin-menu.ts";

define("berth-admin-menu", BerthAdminMenu);

declare global {
  interface HTMLElementTagNameMap {
    "berth-admin-menu": BerthAdminMenu;
  }
}

export { BerthAdminMenu };
