import { define } from "../../components/define.ts";
import { BerthVolumesView } from "./berth-volumes-view.ts";

define("berth-volumes-view", BerthVolumesView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-volumes-view": BerthVolumesView;
  }
}

export { BerthVolumesView };
