import { define } from "../../components/define.ts";
import { BerthFairShareView } from "./berth-fair-share-view.ts";

define("berth-fair-share-view", BerthFairShareView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-fair-share-view": BerthFairShareView;
  }
}

export { BerthFairShareView };
