import { z } from "zod";
import { Branding, PlacementSettings, SignupPolicy } from "../../domain/settings/schemas.ts";

export const SystemSettingsBody = z
  .object({ branding: Branding, signup: SignupPolicy, placement: PlacementSettings })
  .meta({ id: "SystemSettings" });

export const UpdateSystemSettingsBody = z
  .object({
    branding: Branding.partial().strict().optional(),
    signup: SignupPolicy.partial().strict().optional(),
    placement: PlacementSettings.partial().strict().optional(),
  })
  .strict()
  .refine((b) => b.branding !== undefined || b.signup !== undefined || b.placement !== undefined, {
    message: "name at least one of branding, signup, placement",
  })
  .meta({ id: "UpdateSystemSettingsRequest" });

export const PublicBranding = Branding.extend({
  signup: z.enum(["closed", "open", "approval"]).meta({ description: "Whether the sign-in page offers sign-up." }),
}).meta({ id: "PublicBranding" });
