// The SSRF guard's decisions (pure, with an injected resolver): what is refused without the allowlist,
// what the allowlist admits, and which URLs do not parse as webhook targets.
import { describe, expect, it } from "vitest";
import { isDomainError } from "../../errors.ts";
import { parseWebhookUrl, refusedBecause, WebhookGuard } from "./ssrf.ts";

const names: Record<string, string[]> = {
  "public.example.test": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
  "internal.example.test": ["10.0.0.1"],
  "mixed.example.test": ["93.184.215.14", "192.168.1.5"],
  "metadata.example.test": ["169.254.169.254"],
};
const resolve = async (h: string) => {
  const a = names[h];
  if (!a) throw new Error("ENOTFOUND");
  return a;
};

async function codeOf(p: Promise<unknown>): Promise<{ code: string; details: Record<string, unknown> } | "ok"> {
  try {
    await p;
    return "ok";
  } catch (err) {
    if (!isDomainError(err)) throw err;
    return { code: err.code, details: err.details };
  }
}

describe("the SSRF guard", () => {
  const guard = new WebhookGuard({ allowHosts: [], resolve });

  it.each([
    ["https://127.0.0.1/hook", "loopback"],
    ["https://127.8.9.10/hook", "loopback"],
    ["https://169.254.169.254/latest/meta-data", "link-local"],
    ["https://[::1]/hook", "loopback"],
    ["https://[::ffff:10.0.0.1]/hook", "IPv4-mapped"],
    ["https://[::ffff:7f00:1]/hook", "IPv4-mapped"],
    ["https://10.1.2.3/hook", "private"],
    ["https://172.20.0.1/hook", "private"],
    ["https://192.168.0.10/hook", "private"],
    ["https://100.64.0.1/hook", "carrier-grade NAT"],
    ["https://[fd00::1]/hook", "unique-local"],
    ["https://[fe80::1]/hook", "link-local"],
    ["https://0.0.0.0/hook", "unspecified"],
    ["https://0x7f.1/hook", "loopback"], // the URL parser's own IPv4 forms end up as 127.0.0.1
    ["https://internal.example.test/hook", "private"],
    ["https://metadata.example.test/hook", "link-local"],
    ["https://mixed.example.test/hook", "private"], // one bad address is enough
  ])("refuses %s (%s) without the allowlist", async (url, reason) => {
    const r = await codeOf(guard.check(url));
    expect(r).not.toBe("ok");
    if (r === "ok") return;
    expect(r.code).toBe("webhook_target_forbidden");
    expect(r.details.reason).toBe(`a ${reason} address`);
  });

  it("refuses a name that does not resolve", async () => {
    expect(await codeOf(guard.check("https://nowhere.example.test/"))).toMatchObject({
      code: "webhook_target_forbidden",
      details: { reason: "does not resolve" },
    });
  });

  it("admits a public name, and connects to an address it checked", async () => {
    const t = await guard.check("https://public.example.test:8443/in?x=1");
    expect(t.hostname).toBe("public.example.test");
    expect(names["public.example.test"]).toContain(t.address);
  });

  it("admits internal hosts an operator trusts, by name, by address and by CIDR", async () => {
    const g = new WebhookGuard({ allowHosts: ["internal.example.test", "127.0.0.1", "fd00::/8"], resolve });
    expect(await codeOf(g.check("https://internal.example.test/"))).toBe("ok");
    expect(await codeOf(g.check("https://127.0.0.1:9000/"))).toBe("ok");
    expect(await codeOf(g.check("https://[fd00::5]/"))).toBe("ok");
    expect(await codeOf(g.check("https://127.0.0.2/"))).toMatchObject({ code: "webhook_target_forbidden" });
    expect(await codeOf(g.check("https://metadata.example.test/"))).toMatchObject({ code: "webhook_target_forbidden" });
  });

  it.each([
    ["http://public.example.test/hook", "must use https"],
    ["not a url", "does not parse as an absolute URL"],
    ["https://user:pass@public.example.test/", "must not carry a user name or password"],
    ["ftp://public.example.test/", "must use https"],
    [`https://public.example.test/${"a".repeat(2100)}`, "is longer than 2048 characters"],
  ])("refuses %s as webhook_url_invalid", (url, reason) => {
    try {
      parseWebhookUrl(url);
      expect.unreachable();
    } catch (err) {
      expect(isDomainError(err) && err.code).toBe("webhook_url_invalid");
      expect(isDomainError(err) && err.details.reason).toBe(reason);
    }
  });

  it("says why an address is refused, and nothing for public ones", () => {
    expect(refusedBecause("8.8.8.8")).toBeNull();
    expect(refusedBecause("2001:4860:4860::8888")).toBeNull();
    expect(refusedBecause("64:ff9b::a00:1")).toBe("IPv4-translated (NAT64)");
  });
});
