import { define } from "../../components/define.ts";
import { BerthWebhooksView } from "./berth-webhooks-view.ts";

define("berth-webhooks-view", BerthWebhooksView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-webhooks-view": BerthWebhooksView;
  }
}

export { BerthWebhooksView };
