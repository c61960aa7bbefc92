import { define } from "../define.ts";
import { BerthAccountMenu } from "./berth-account-menu.ts";

define("berth-account-menu", BerthAccountMenu);

declare global {
  interface HTMLElementTagNameMap {
    "berth-account-menu": BerthAccountMenu;
  }
}

export { BerthAccountMenu };
