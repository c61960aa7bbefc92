import { define } from "../define.ts";
import { BerthPager, type PageChange } from "./berth-pager.ts";

define("berth-pager", BerthPager);

declare global {
  interface HTMLElementTagNameMap {
    "berth-pager": BerthPager;
  }
  interface HTMLElementEventMap {
    "berth-page-change": CustomEvent<PageChange>;
  }
}

export { BerthPager, type PageChange };
