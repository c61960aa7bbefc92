import { define } from "../define.ts";
import { BerthApp } from "./berth-app.ts";

define("berth-app", BerthApp);

declare global {
  interface HTMLElementTagNameMap {
    "berth-app": BerthApp;
  }
}

export { BerthApp };
