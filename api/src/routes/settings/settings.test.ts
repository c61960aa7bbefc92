// /api/v1/system/settings and /api/v1/system/branding over HTTP with the real API and database.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  anIdentityWorld,
  type IdentityTestApi,
  type IdentityWorld,
  startIdentityTestApi,
} from "../../domain/identity/identity.test-support.ts";
import { readSystemSettings } from "../../domain/settings/settings.ts";

// A 1x1 PNG.
const PNG =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

describe("/api/v1/system/settings", () => {
  let t: IdentityTestApi;
  let w: IdentityWorld;
  const patch = (token: string, json: unknown) => t.request("PATCH", "/api/v1/system/settings", { token, json });

  beforeAll(async () => {
    t = await startIdentityTestApi();
    w = await anIdentityWorld(t);
  });
  afterAll(async () => {
    await t?.stop();
  });

  it("answers the defaults: Berth, sign-up closed, binpack", async () => {
    const r = await t.request("GET", "/api/v1/system/settings", { token: w.superAdmin.token });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      branding: { product_name: "Berth", logo: null, accent_color: "#2563eb", support_url: null },
      signup: { policy: "closed", allowed_domains: [], organization_id: null },
      placement: { policy: "binpack" },
      hardware_faults: {
        xids: [48, 63, 64, 74, 79, 92, 94, 95],
        ecc_double_bit: true,
        threshold: 1,
        window_minutes: 60,
        action: "cordon",
      },
      image_signatures: { required: false, keys: [] },
    });
  });

  it("changes what is sent, keeps the rest, shows the branding publicly and audits before and after", async () => {
    const r = await patch(w.superAdmin.token, {
      branding: { product_name: "Acme GPU", logo: PNG, accent_color: "#FF8800" },
      signup: { policy: "approval", allowed_domains: ["Example.ORG"], organization_id: w.orgA.id },
      placement: { policy: "spread" },
    });
    expect(r.status).toBe(200);
    expect(r.body.branding).toEqual({
      product_name: "Acme GPU",
      logo: PNG,
      accent_color: "#FF8800",
      support_url: null,
    });
    expect(r.body.signup.allowed_domains).toEqual(["example.org"]);
    expect((await readSystemSettings(t.database.db)).placement.policy).toBe("spread");
    const again = await patch(w.superAdmin.token, { branding: { support_url: "https://help.example.org" } });
    expect(again.body.branding).toMatchObject({ product_name: "Acme GPU", support_url: "https://help.example.org" });

    const pub = await t.request("GET", "/api/v1/system/branding");
    expect(pub.status).toBe(200);
    expect(pub.body).toEqual({ ...again.body.branding, signup: "approval" });

    const audit = await t.request("GET", "/api/v1/audit-logs?action=system.settings.update", {
      token: w.superAdmin.token,
    });
    expect(audit.body.pagination.total).toBe(2);
    const first = audit.body.data[1];
    expect(first.diff.before.placement).toEqual({ policy: "binpack" });
    expect(first.diff.after.placement).toEqual({ policy: "spread" });
    expect(first.actor.id).toBe(w.superAdmin.id);
  });

  it("is super_admin only: others get 403, and their attempt is audited as denied", async () => {
    for (const u of [w.adminA, w.memberA, w.outsider]) {
      expect((await t.request("GET", "/api/v1/system/settings", { token: u.token })).status).toBe(403);
      const r = await patch(u.token, { placement: { policy: "binpack" } });
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe("forbidden");
    }
    expect((await readSystemSettings(t.database.db)).placement.policy).toBe("spread");
    const denied = await t.request("GET", "/api/v1/audit-logs?action=system.settings.update&outcome=denied", {
      token: w.superAdmin.token,
    });
    expect(denied.body.pagination.total).toBe(3);
    const expired = await t.request("GET", "/api/v1/system/settings", {
      token: await t.expiredTokenFor(w.superAdmin.id),
    });
    expect(expired.body.error.code).toBe("token_expired");
  });

  it("refuses bad values with the envelope and writes nothing", async () => {
    const big = `data:image/png;base64,${Buffer.alloc(70 * 1024, 1).toString("base64")}`;
    const cases: [unknown, string][] = [
      [{ branding: { logo: big } }, "branding.logo"],
      [{ branding: { logo: "https://example.org/logo.png" } }, "branding.logo"],
      [{ branding: { accent_color: "red" } }, "branding.accent_color"],
      [{ branding: { support_url: "javascript:alert(1)" } }, "branding.support_url"],
      [{ branding: { colour: "#000000" } }, "branding"],
      [{ signup: { policy: "sometimes" } }, "signup.policy"],
      [{ signup: { allowed_domains: ["not a domain"] } }, "signup.allowed_domains.0"],
      [{ signup: { organization_id: "org_nope" } }, "signup.organization_id"],
      [{ placement: { policy: "random" } }, "placement.policy"],
      [{ hardware_faults: { xids: [79, 79] } }, "hardware_faults.xids"],
      [{ hardware_faults: { xids: [0] } }, "hardware_faults.xids.0"],
      [{ hardware_faults: { xids: ["79"] } }, "hardware_faults.xids.0"],
      [{ hardware_faults: { threshold: 0 } }, "hardware_faults.threshold"],
      [{ hardware_faults: { window_minutes: 1.5 } }, "hardware_faults.window_minutes"],
      [{ hardware_faults: { window_minutes: 20_000 } }, "hardware_faults.window_minutes"],
      [{ hardware_faults: { action: "reboot" } }, "hardware_faults.action"],
      // No key listed, and this installation has no signing key of its own: every session would be refused.
      [{ image_signatures: { required: true } }, "image_signatures.keys"],
      [{ theme: "dark" }, ""],
      [{}, ""],
    ];
    for (const [body, path] of cases) {
      const r = await patch(w.superAdmin.token, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe("validation_failed");
      const paths = r.body.error.details.issues.map((i: { path: (string | number)[] }) => i.path.slice(1).join("."));
      if (path) expect(paths, JSON.stringify(body)).toContain(path);
    }
    const s = await readSystemSettings(t.database.db);
    expect(s.branding.product_name).toBe("Acme GPU");
    expect(s.signup.policy).toBe("approval");
    expect(s.hardware_faults.threshold).toBe(1);
  });

  it("changes the hardware-fault rule for a super_admin only, and refuses an expired token", async () => {
    const rule = { hardware_faults: { xids: [79, 48], threshold: 3, window_minutes: 30, action: "drain" } };
    for (const u of [w.adminA, w.memberA, w.outsider]) expect((await patch(u.token, rule)).status).toBe(403);
    const expired = await patch(await t.expiredTokenFor(w.superAdmin.id), rule);
    expect([expired.status, expired.body.error.code]).toEqual([401, "token_expired"]);
    const r = await patch(w.superAdmin.token, rule);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.hardware_faults).toEqual({ ...rule.hardware_faults, ecc_double_bit: true });
  });
});
