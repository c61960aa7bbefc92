import { define } from "../../components/define.ts";
import { BerthQuotasView } from "./berth-quotas-view.ts";

define("berth-quotas-view", BerthQuotasView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-quotas-view": BerthQuotasView;
  }
}

export { BerthQuotasView };
