import { define } from "../../components/define.ts";
import { BerthWalletView } from "./berth-wallet-view.ts";

define("berth-wallet-view", BerthWalletView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-wallet-view": BerthWalletView;
  }
}

export { BerthWalletView };
