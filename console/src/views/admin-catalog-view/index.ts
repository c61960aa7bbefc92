import { define } from "../../components/define.ts";
import { BerthAdminCatalogView } from "./berth-admin-catalog-view.ts";

define("berth-admin-catalog-view", BerthAdminCatalogView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-admin-catalog-view": BerthAdminCatalogView;
  }
}

export { BerthAdminCatalogView };
