import { define } from "../define.ts";
import { BerthWalletBalance } from "./berth-wallet-balance.ts";

define("berth-wallet-balance", BerthWalletBalance);

declare global {
  interface HTMLElementTagNameMap {
    "berth-wallet-balance": BerthWalletBalance;
  }
}

export { BerthWalletBalance };
