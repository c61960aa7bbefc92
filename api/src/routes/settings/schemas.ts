import { z } from "zod";
import {
  Branding,
  HardwareFaultSettings,
  ImageSignatureSettings,
  PlacementSettings,
  SignupPolicy,
} from "../../domain/settings/schemas.ts";

export const SystemSettingsBody = z
  .object({
    branding: Branding,
    signup: SignupPolicy,
    placement: PlacementSettings,
    hardware_faults: HardwareFaultSettings,
    image_signatures: ImageSignatureSettings,
  })
  .meta({ id: "SystemSettings" });

export const UpdateSystemSettingsBody = z
  .object({
    branding: Branding.partial().strict().optional(),
    signup: SignupPolicy.partial().strict().optional(),
    placement: PlacementSettings.partial().strict().optional(),
    hardware_faults: HardwareFaultSettings.partial().strict().optional(),
    image_signatures: ImageSignatureSettings.partial().strict().optional(),
  })
  .strict()
  .refine(
    (b) =>
      b.branding !== undefined ||
      b.signup !== undefined ||
      b.placement !== undefined ||
      b.hardware_faults !== undefined ||
      b.image_signatures !== undefined,
    { message: "name at least one of branding, signup, placement, hardware_faults, image_signatures" },
  )
  .meta({ id: "UpdateSystemSettingsRequest" });

export const PublicBranding = Branding.extend({
  signup: z.enum(["closed", "open", "approval"]).meta({ description: "Whether the sign-in page offers sign-up." }),
}).meta({ id: "PublicBranding" });
