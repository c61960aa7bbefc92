// System settings (docs/dev/governance.md): super_admins read and change them; the branding (and
// whether sign-up is offered) is public, for the sign-in page.
import { getSystemSettings, readSystemSettings, updateSystemSettings } from "../../domain/settings/settings.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { PublicBranding, SystemSettingsBody, UpdateSystemSettingsBody } from "./schemas.ts";

export const getSystemSettingsRoute = defineRoute({
  method: "get",
  path: "/api/v1/system/settings",
  operationId: "getSystemSettings",
  tags: ["system"],
  summary: "Branding, sign-up policy, placement policy and the hardware-fault rule (super_admin)",
  auth: "user",
  responses: { 200: SystemSettingsBody },
  handler: async ({ deps, principal }) => ({ status: 200, body: await getSystemSettings(deps, principal) }),
});

export const updateSystemSettingsRoute = defineRoute({
  method: "patch",
  path: "/api/v1/system/settings",
  operationId: "updateSystemSettings",
  tags: ["system"],
  summary: "Change system settings (super_admin); fields not sent keep their value",
  description:
    "Each group is merged over its current value and checked whole; nothing is written unless every group is valid. The logo is a data: URL of a PNG, JPEG, WebP or SVG image of at most 64 KiB. The placement policy applies from the worker's next placement pass; the hardware-fault rule (which XIDs, whether double-bit ECC errors count, how many within how many minutes, cordon or drain) from the next metrics an operator forwards. Audited as system.settings.update with before and after.",
  auth: "user",
  body: UpdateSystemSettingsBody,
  audit: "system.settings.update",
  responses: { 200: SystemSettingsBody },
  handler: async ({ deps, principal, body, audit }) => {
    audit.target("system_settings", Object.keys(body).join(","));
    const { before, after } = await updateSystemSettings(deps, principal, body);
    audit.change(before, after);
    return { status: 200, body: after };
  },
});

export const getBrandingRoute = defineRoute({
  method: "get",
  path: "/api/v1/system/branding",
  operationId: "getBranding",
  tags: ["system"],
  summary: "The product's name, logo, accent colour and support link (public)",
  description: "No token needed: the console's sign-in page reads it.",
  auth: "public",
  responses: { 200: PublicBranding },
  handler: async ({ deps }) => {
    const s = await readSystemSettings(deps.db);
    return {
      status: 200,
      body: { ...s.branding, signup: s.signup.policy },
      headers: { "Cache-Control": "public, max-age=30" },
    };
  },
});

export const routes: RouteDef[] = [getSystemSettingsRoute, updateSystemSettingsRoute, getBrandingRoute];
