import { ClusterKind } from "./cluster.ts";
import { ImageKind } from "./image.ts";
import { ImageBuildKind } from "./image-build.ts";
import { OfferingKind } from "./offering.ts";
import { PoolKind } from "./pool.ts";
import { ResourcePolicyKind } from "./resource-policy.ts";
import { ResourcePresetKind } from "./resource-preset.ts";
import { SessionKind } from "./session.ts";
import { SessionMirrorKind } from "./session-mirror.ts";
import { VolumeKind } from "./volume.ts";
import { WalletKind } from "./wallet.ts";

export * from "./cluster.ts";
export * from "./image.ts";
export * from "./image-build.ts";
export * from "./offering.ts";
export * from "./pool.ts";
export * from "./resource-policy.ts";
export * from "./resource-preset.ts";
export * from "./session.ts";
export * from "./session-mirror.ts";
export * from "./volume.ts";
export * from "./wallet.ts";

/** Every kind, in the order the generator writes them. */
export const allKinds = [
  SessionKind,
  WalletKind,
  VolumeKind,
  PoolKind,
  ClusterKind,
  OfferingKind,
  ImageKind,
  ResourcePresetKind,
  ResourcePolicyKind,
  SessionMirrorKind,
  ImageBuildKind,
] as const;
