import { define } from "../../components/define.ts";
import { BerthCreditsView } from "./berth-credits-view.ts";

define("berth-credits-view", BerthCreditsView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-credits-view": BerthCreditsView;
  }
}

export { BerthCreditsView };
