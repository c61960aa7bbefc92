// @vitest-environment happy-dom
// Signing in over a stubbed API: a page the person opens while their account still loads is not undone
// when it arrives (a journey once clicked Limits then and was put back on the dashboard).
import { afterEach, expect, it, vi } from "vitest";
import { auth, router } from "../../app/context.ts";
import "./index.ts";

afterEach(() => {
  auth.signOut();
  document.body.replaceChildren();
  vi.unstubAllGlobals();
});

const json = (body: unknown) => new Response(JSON.stringify(body), { headers: { "Content-Type": "application/json" } });

it("keeps the page opened while the account loaded, and takes a person who did nothing to their next page", async () => {
  let answerMe: () => void = () => {};
  const meAnswered = new Promise<void>((r) => {
    answerMe = r;
  });
  vi.stubGlobal(
    "fetch",
    vi.fn(async (url: string) => {
      if (String(url).endsWith("/auth/login"))
        return json({
          access_token: "t",
          token_type: "bearer",
          expires_in: 3600,
          must_change_password: false,
          user: { id: "usr_a", email: "a@example.test" },
        });
      if (String(url).endsWith("/auth/me")) {
        await meAnswered;
        return json({ id: "usr_a", email: "a@example.test", is_super_admin: false, memberships: [] });
      }
      return json({});
    }),
  );
  const signIn = async () => {
    history.replaceState(null, "", "/login");
    router.resolve();
    const view = document.createElement("berth-login-view");
    document.body.append(view);
    await view.updateComplete;
    const form = view.shadowRoot?.querySelector("form") as HTMLFormElement;
    (form.querySelector("#email") as HTMLInputElement).value = "a@example.test";
    (form.querySelector("#password") as HTMLInputElement).value = "a long enough password";
    form.dispatchEvent(new Event("submit", { cancelable: true }));
    await vi.waitFor(() => expect(auth.signedIn).toBe(true));
  };

  await signIn();
  router.navigate("/quotas"); // a click on Limits while /auth/me is on its way
  answerMe();
  await vi.waitFor(() => expect(auth.me).toBeDefined());
  await new Promise((r) => setTimeout(r, 0));
  expect(location.pathname).toBe("/quotas");
  expect(router.current.route.name).toBe("quotas");

  auth.signOut();
  await signIn(); // /auth/me answers at once now
  await vi.waitFor(() => expect(location.pathname).toBe("/dashboard"));
});
