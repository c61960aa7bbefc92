// The system settings' shapes and defaults (stored per group in system_settings). The domain owns them:
// the route layer reuses them for its bodies, so a value the API accepts is one the domain accepts.
import { z } from "zod";
import { parsePublicKey } from "../images/signatures.ts";

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
    product_name: z.string().regex(/\S/, "not only spaces").trim().min(1).max(64),
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

/** XIDs that mean the card or its link is unwell (not a program's own fault, such as 13 or 31). */
export const DEFAULT_FAULT_XIDS = [48, 63, 64, 74, 79, 92, 94, 95];

export const HardwareFaultSettings = z
  .object({
    xids: z
      .array(z.int().min(1).max(1023))
      .max(64)
      .refine((a) => new Set(a).size === a.length, { message: "each XID once", params: { code: "duplicate" } })
      .meta({
        description: "The XID codes that count towards the rule, each once; empty: none does.",
        uniqueItems: true,
      }),
    ecc_double_bit: z.boolean().meta({ description: "Double-bit (uncorrectable) ECC errors count too." }),
    threshold: z.int().min(1).max(1000).meta({ description: "How many counted faults on one node cordon it." }),
    window_minutes: z
      .int()
      .min(1)
      .max(10080)
      .meta({ description: "Within how many minutes (faults before the node's last uncordon never count)." }),
    action: z.enum(["cordon", "drain"]).meta({
      description:
        "cordon: no new sessions there, running ones warned; drain: also their pods are evicted and the sessions placed again on other nodes.",
    }),
  })
  .strict()
  .meta({ id: "HardwareFaultSettings" });
export type HardwareFaultSettings = z.infer<typeof HardwareFaultSettings>;

const SigningKeyName = z.string().regex(/\S/, "not only spaces").trim().min(1).max(64);
const PublicKeyPem = z
  .string()
  .max(4096)
  .regex(
    /^-----BEGIN PUBLIC KEY-----[\s\S]+-----END PUBLIC KEY-----\s*$/,
    "must be a PEM public key (-----BEGIN PUBLIC KEY-----)",
  )
  .superRefine((pem, ctx) => {
    try {
      parsePublicKey(pem);
    } catch (e) {
      ctx.addIssue({ code: "custom", message: `not a key Berth can verify with: ${(e as Error).message}` });
    }
  });

export const ImageSignatureSettings = z
  .object({
    required: z.boolean().meta({
      description:
        "true: a session starts, and an image is imported or added to the catalog, only if its digest is signed by one of the keys (or Berth's own).",
    }),
    keys: z
      .array(z.object({ name: SigningKeyName, public_key: PublicKeyPem }).strict())
      .max(20)
      .refine((a) => new Set(a.map((k) => k.name)).size === a.length, {
        message: "each key name once",
        params: { code: "duplicate_name" },
      })
      .meta({ description: "Public keys (ECDSA P-256 or Ed25519, PEM) whose signatures are trusted, by name." }),
  })
  .strict()
  .meta({ id: "ImageSignatureSettings" });
export type ImageSignatureSettings = z.infer<typeof ImageSignatureSettings>;

export const SETTING_SCHEMAS = {
  branding: Branding,
  signup: SignupPolicy,
  placement: PlacementSettings,
  hardware_faults: HardwareFaultSettings,
  image_signatures: ImageSignatureSettings,
} as const;
export type SettingKey = keyof typeof SETTING_SCHEMAS;

export interface SystemSettings {
  branding: Branding;
  signup: SignupPolicy;
  placement: PlacementSettings;
  hardware_faults: HardwareFaultSettings;
  image_signatures: ImageSignatureSettings;
}

export const DEFAULT_SETTINGS: SystemSettings = {
  branding: { product_name: "Berth", logo: null, accent_color: "#2563eb", support_url: null },
  signup: { policy: "closed", allowed_domains: [], organization_id: null },
  placement: { policy: "binpack" },
  hardware_faults: {
    xids: DEFAULT_FAULT_XIDS,
    ecc_double_bit: true,
    threshold: 1,
    window_minutes: 60,
    action: "cordon",
  },
  image_signatures: { required: false, keys: [] },
};
