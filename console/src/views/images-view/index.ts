import { define } from "../../components/define.ts";
import { BerthImagesView } from "./berth-images-view.ts";

define("berth-images-view", BerthImagesView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-images-view": BerthImagesView;
  }
}

export { BerthImagesView };
