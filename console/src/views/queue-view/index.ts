import { define } from "../../components/define.ts";
import { BerthQueueView } from "./berth-queue-view.ts";

define("berth-queue-view", BerthQueueView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-queue-view": BerthQueueView;
  }
}

export { BerthQueueView };
