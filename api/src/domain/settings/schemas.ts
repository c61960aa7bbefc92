// The system settings' shapes and defaults (stored per group in system_settings). The domain owns them:
// the route layer reuses them for its bodies, so a value the API accepts is one the domain accepts.
import { z } from "zod";

/** Logo: a data: URL of a small PNG, JPEG, WebP or SVG image (the console shows it on the sign-in page). */
export const MAX_LOGO_BYTES = 64 * 1024;

const LogoDataUrl = z
  .string()
  .max(Math.ceil((MAX_LOGO_BYTES * 4) / 3) + 64, `must be at most ${MAX_LOGO_BYTES / 1024} KiB of image`)
  .regex(
    /^data:image\/(png|jpeg|webp|svg\+xml);base64,[A-Za-z0-9+/]+={0,2}$/,
    "must be a data: URL of a PNG, JPEG, WebP or SVG image in base64 (data:image/png;base64,…)",
  )
  .refine((s) => Buffer.byteLength(s.slice(s.indexOf(",") + 1), "base64") <= MAX_LOGO_BYTES, {
    message: `must be at most ${MAX_LOGO_BYTES / 1024} KiB of image`,
  });

export const Branding = z
  .object({
    product_name: z.string().trim().min(1).max(64),
    logo: LogoDataUrl.nullable(),
    accent_color: z.string().regex(/^#[0-9a-fA-F]{6}$/, "must be a colour as #RRGGBB"),
    support_url: z
      .url({ protocol: /^https?$/, error: "must be an http(s) URL" })
      .max(2048)
      .nullable(),
  })
  .strict()
  .meta({ id: "Branding" });
export type Branding = z.infer<typeof Branding>;

const Domain = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, "must be a domain name (example.org)");

export const SignupPolicy = z
  .object({
    policy: z.enum(["closed", "open", "approval"]),
    allowed_domains: z.array(Domain).max(100).meta({ description: "Empty: any domain (when not closed)." }),
    organization_id: z
      .string()
      .min(1)
      .max(128)
      .nullable()
      .meta({ description: "The organization new accounts join as members; null: none." }),
  })
  .strict()
  .meta({ id: "SignupPolicy" });
export type SignupPolicy = z.infer<typeof SignupPolicy>;

export const PlacementSettings = z
  .object({
    policy: z.enum(["binpack", "spread"]).meta({
      description: "binpack: the fullest cluster that still fits (keeps whole GPUs free); spread: the emptiest.",
    }),
  })
  .strict()
  .meta({ id: "PlacementSettings" });
export type PlacementSettings = z.infer<typeof PlacementSettings>;

export const SETTING_SCHEMAS = { branding: Branding, signup: SignupPolicy, placement: PlacementSettings } as const;
export type SettingKey = keyof typeof SETTING_SCHEMAS;

export interface SystemSettings {
  branding: Branding;
  signup: SignupPolicy;
  placement: PlacementSettings;
}

export const DEFAULT_SETTINGS: SystemSettings = {
  branding: { product_name: "Berth", logo: null, accent_color: "#2563eb", support_url: null },
  signup: { policy: "closed", allowed_domains: [], organization_id: null },
  placement: { policy: "binpack" },
};
