import { define } from "../define.ts";
import { BerthCheckList } from "./berth-check-list.ts";

define("berth-check-list", BerthCheckList);

declare global {
  interface HTMLElementTagNameMap {
    "berth-check-list": BerthCheckList;
  }
}

export { BerthCheckList };
