import { define } from "../define.ts";
import { BerthNodePools } from "./berth-node-pools.ts";

define("berth-node-pools", BerthNodePools);

declare global {
  interface HTMLElementTagNameMap {
    "berth-node-pools": BerthNodePools;
  }
}

export { BerthNodePools };
