// Package boundaries and import cycles, checked on the repository's own import graph (scripts/imports.ts),
// and the house's habits that a file's text shows: clients made only where processes are composed, no
// handler writing a raw response, no database or cluster read in a route, one spelling of resource paths.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cycles, importGraph, WORKSPACES, workspaceOf } from "./imports.ts";

const root = join(import.meta.dirname, "..");
const graph = await importGraph(root);

describe("the repository's imports", () => {
  it("all resolve, including every @berth/* subpath", () => {
    expect(graph.unresolved, `imports that resolve to nothing:\n${graph.unresolved.join("\n")}`).toEqual([]);
  });

  it("reach another workspace only through its package name, never by relative path", () => {
    const reaching = graph.edges
      .filter((e) => e.specifier.startsWith(".") && workspaceOf(e.from) !== workspaceOf(e.to))
      .map((e) => `${e.from}: ${e.specifier}`);
    expect(
      reaching,
      `relative imports into another workspace (use @berth/<workspace>/<subpath>):\n${reaching.join("\n")}`,
    ).toEqual([]);
  });

  it("name only @berth/* packages their workspace declares as a dependency", () => {
    const declared = new Map<string, Set<string>>(
      WORKSPACES.map((ws) => {
        const pkg = JSON.parse(readFileSync(join(root, ws, "package.json"), "utf8"));
        return [ws, new Set(Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }))] as const;
      }),
    );
    const undeclared = graph.edges
      .filter((e) => e.specifier.startsWith("@berth/") && workspaceOf(e.from) !== workspaceOf(e.to))
      .filter((e) => {
        const ws = workspaceOf(e.from);
        const name = e.specifier.split("/").slice(0, 2).join("/");
        return declared.has(ws) && !declared.get(ws)?.has(name);
      })
      .map((e) => `${e.from}: ${e.specifier} (add it to ${workspaceOf(e.from)}/package.json)`);
    expect(undeclared, `imports of undeclared workspaces:\n${undeclared.join("\n")}`).toEqual([]);
  });

  // Type-only imports count: they are erased at run time, but a loop of types still ties the files together
  // (neither can be read, moved or tested without the other), and the loops named in issue 17 were mostly
  // of this kind. madge and dpdm count them too by default.
  it("form no cycle between files", () => {
    const found = cycles(graph.edges);
    const listed = found.map(({ loop, files }) =>
      files.length + 1 > loop.length ? `${loop.join(" -> ")} (in a tangle of: ${files.join(", ")})` : loop.join(" -> "),
    );
    expect(listed, `import cycles (one loop per tangle of files):\n${listed.join("\n")}`).toEqual([]);
  });
});

// Every periodic pass runs on controllers/src/kube/periodic.ts (a pass, then a wait after it ends; stop waits
// for the pass in flight). A timer that re-arms itself — `setTimeout(tick, …)` inside `tick`, or a
// `setInterval` — is the hand-rolled loop it replaced, with its own stop flag and its own overlap rules.
describe("periodic work", () => {
  const PERIODIC_HOMES = ["controllers/src/", "api/src/worker/", "operator/src/"];
  const allowed = new Map<string, string>([
    ["controllers/src/kube/periodic.ts", "the helper itself"],
    ["operator/src/routes.ts", "a stream's keep-alive bytes, not a pass"],
  ]);
  const inScope = (f: string) =>
    PERIODIC_HOMES.some((h) => f.startsWith(h)) && !allowed.has(f) && !/\.test(-support)?\.ts$/.test(f);

  /** `setTimeout(name, …)` inside the body of `name` (a function or an arrow): a timer re-arming its own pass. */
  function selfArming(source: string): string[] {
    const found: string[] = [];
    for (const call of source.matchAll(/setTimeout\(\s*([A-Za-z_$][\w$]*)\s*,/g)) {
      const name = call[1] as string;
      const decl = new RegExp(`(?:const|let)\\s+${name}\\s*=\\s*(?:async\\s*)?\\(|function\\s+${name}\\s*\\(`).exec(
        source,
      );
      if (!decl) continue;
      // The body: from the first brace after the declaration to the one that closes it.
      const open = source.indexOf("{", decl.index);
      let depth = 0;
      let close = open;
      for (; close < source.length; close++) {
        if (source[close] === "{") depth++;
        else if (source[close] === "}" && --depth === 0) break;
      }
      const at = call.index ?? 0;
      if (open >= 0 && open < at && at < close) found.push(call[0]);
    }
    return found;
  }

  it("runs on the one periodic pass, with no timer re-arming itself and no setInterval beside it", () => {
    const loops = graph.files.filter(inScope).flatMap((f) => {
      const source = readFileSync(join(root, f), "utf8");
      const hits = [...selfArming(source), ...(source.match(/\bsetInterval\(/g) ?? [])];
      return hits.map((h) => `${f}: ${h}`);
    });
    expect(
      loops,
      `hand-rolled periodic loops (use PeriodicPass from controllers/src/kube/periodic.ts):\n${loops.join("\n")}`,
    ).toEqual([]);
  });

  it("the check finds the loops it forbids", () => {
    const tick = "const tick = () => {\n  this.#running = this.pass().finally(() => setTimeout(tick, 10));\n};";
    expect(selfArming(tick)).toEqual(["setTimeout(tick,"]);
    const sleep = "const timer = setTimeout(done, ms);\nfunction done() { resolve(); }";
    expect(selfArming(sleep)).toEqual([]);
    const debounce = "const flush = () => { send(); };\nconst onEvent = () => { timer ??= setTimeout(flush, 5); };";
    expect(selfArming(debounce)).toEqual([]);
  });
});

const isTest = (f: string) => /\.test\.ts$|\.test-support\.ts$/.test(f);
const textOf = (f: string) => readFileSync(join(root, f), "utf8");
/** The lines of the given files that match, as `file:line: text`. */
function matching(files: string[], pattern: RegExp): string[] {
  return files.flatMap((f) =>
    textOf(f)
      .split("\n")
      .flatMap((line, i) => (pattern.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])),
  );
}

describe("the house's habits", () => {
  // Where each process is composed: its clients are made there and handed down (api/src/deps.ts).
  const COMPOSITION_ROOTS = new Set([
    "api/src/buildDeps.ts", // makeClusterClients: the API's and the worker's (api/src/worker/worker.ts)
    "operator/src/operator.ts",
    "operator/src/gateway/podGate.ts", // the gateway's one client, made once as the gateway starts
  ]);

  it("make Kubernetes clients only in the composition roots", () => {
    const sources = graph.files.filter(
      (f) => ["api", "controllers", "operator", "crds"].includes(workspaceOf(f)) && !isTest(f),
    );
    const made = matching(sources, /new HttpKube\b/).filter((l) => !COMPOSITION_ROOTS.has(l.split(":")[0] ?? ""));
    expect(made, `clients made on the side (take one from the composition root):\n${made.join("\n")}`).toEqual([]);
  });

  it("leave the raw response to the route layer (api/src/http)", () => {
    const sources = graph.files.filter((f) => f.startsWith("api/src/") && !f.startsWith("api/src/http/") && !isTest(f));
    const raw = matching(sources, /\.respond\s*=\s*false|\bctx\.res\b|\.writeHead\(/);
    expect(raw, `raw responses outside the route layer (answer csv, sse or text):\n${raw.join("\n")}`).toEqual([]);
  });

  it("read no database and no cluster in api/src/routes (domain functions do)", () => {
    const routes = graph.files.filter((f) => f.startsWith("api/src/routes/") && !isTest(f));
    const knex = matching(routes, /from\s+["']knex["']/);
    const reads = graph.edges
      .filter((e) => routes.includes(e.from) && !e.typeOnly)
      .filter((e) => e.to.startsWith("api/src/db/operations/") || e.to.startsWith("controllers/src/kube/"))
      .map((e) => `${e.from}: ${e.specifier}`);
    expect([...knex, ...reads], "database or cluster reads in routes").toEqual([]);
  });

  it("spell a Berth resource's path only through resourcePath (crds/src/paths.ts)", () => {
    // The function itself, and its cases, which say what it spells.
    const sources = graph.files.filter((f) => f !== "crds/src/paths.ts" && f !== "crds/src/paths.test.ts");
    const spelled = matching(sources, /\/apis\/berth\.dev\/|\/apis\/\$\{\w*(?:Kind|kind|\bk)\.group\}/);
    expect(spelled, `resource paths spelled by hand (use resourcePath):\n${spelled.join("\n")}`).toEqual([]);
  });
});

// The console's views and components only render: what they show comes through a loader per noun in
// console/src/app/ (sessions.ts, credits.ts, …), so the same list is fetched one way everywhere and a view
// can be read without the wire format.
describe("the console's views and components", () => {
  const dirs = ["console/src/views", "console/src/components"];
  const files = dirs.flatMap((d) =>
    (readdirSync(join(root, d), { recursive: true }) as string[])
      .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
      .map((f) => join(d, f)),
  );

  it("are found", () => {
    expect(files.length).toBeGreaterThan(30);
  });

  it("never call the API client themselves (api.call, api.fetchRaw): a loader in console/src/app does", () => {
    const calling = files.filter((f) =>
      /\bapi\.(call|fetchRaw)\b|import\s*\{[^}]*\bapi\b[^}]*\}\s*from\s*"[./]*app\/context\.ts"/.test(
        readFileSync(join(root, f), "utf8"),
      ),
    );
    expect(
      calling,
      `views or components calling the API (move the call into a loader in console/src/app/):\n${calling.join("\n")}`,
    ).toEqual([]);
  });

  it("carry their test ids from console/src/test-ids/, the modules the e2e page objects find them by", () => {
    const literal = files.flatMap((f) =>
      readFileSync(join(root, f), "utf8")
        .split("\n")
        .flatMap((line, i) => (/data-testid="/.test(line) ? [`${f}:${i + 1}`] : [])),
    );
    expect(literal, `test ids spelled in a view (add them to test-ids/):\n${literal.join("\n")}`).toEqual([]);
  });

  // One test-id module per page or area, so a view (and the page object beside it) holds only its page's
  // ids; shell.ts is the header's and the shared components', open to all. Each module, with the view and
  // component folders that render its ids:
  const RENDERED_BY: Record<string, string[]> = {
    audit: ["views/audit-view"],
    budgets: ["views/budgets-view"],
    catalog: ["views/admin-catalog-view"],
    clusters: ["views/admin-clusters-view", "views/admin-cluster-detail-view", "components/check-list"],
    credits: [
      "views/credits-view",
      "views/wallet-view",
      "views/credit-requests-view",
      "views/allocations-view",
      "components/credits-nav.ts",
    ],
    dashboard: ["views/dashboard-view"],
    directory: [
      "views/admin-organizations-view",
      "views/admin-projects-view",
      "views/admin-users-view",
      "components/members-panel.ts",
    ],
    "fair-share": ["views/fair-share-view"],
    "idle-limits": ["views/admin-idle-limits-view"],
    images: ["views/images-view", "components/build-log"],
    "log-viewer": ["components/log-viewer"],
    login: ["views/login-view", "views/password-view"],
    "monitoring-panel": ["components/monitoring-panel", "components/timeseries-chart"],
    "mig-layouts": ["components/mig-layouts"],
    "new-session": ["views/session-new-view"],
    "node-pools": ["components/node-pools"],
    "notification-settings": ["views/notification-settings-view"],
    pools: ["views/admin-pools-view"],
    queue: ["views/queue-view"],
    "quota-inbox": ["views/quota-inbox-view"],
    quotas: ["views/quotas-view"],
    session: ["views/session-detail-view"],
    sessions: ["views/sessions-view"],
    settings: ["views/settings-view", "views/signup-view", "views/signup-requests-view", "components/settings-nav.ts"],
    "user-import": ["views/admin-users-view"],
    volumes: ["views/volumes-view"],
    webhooks: ["views/webhooks-view"],
  };
  const TEST_IDS_DIR = "console/src/test-ids/";
  const moduleOf = (f: string) => f.slice(TEST_IDS_DIR.length, -".ts".length);
  const under = (f: string, folder: string) => f === `console/src/${folder}` || f.startsWith(`console/src/${folder}/`);

  it("take ids only from their own page's test-id module (or the shell's)", () => {
    const foreign = graph.edges
      .filter((e) => files.includes(e.from) && e.to.startsWith(TEST_IDS_DIR))
      .filter((e) => moduleOf(e.to) !== "shell" && !(RENDERED_BY[moduleOf(e.to)] ?? []).some((d) => under(e.from, d)))
      .map((e) => `${e.from}: ${e.specifier}`);
    expect(
      foreign,
      `ids taken from another page's module (move the id, or list the folder in RENDERED_BY):\n${foreign.join("\n")}`,
    ).toEqual([]);
  });

  it("leave no test-id module unlisted or unused", () => {
    const modules = readdirSync(join(root, TEST_IDS_DIR)).map((f) => moduleOf(`${TEST_IDS_DIR}${f}`));
    const used = new Set(graph.edges.filter((e) => files.includes(e.from)).map((e) => e.to));
    const unlisted = modules.filter((m) => m !== "shell" && !(m in RENDERED_BY));
    const unused = modules.filter((m) => !used.has(`${TEST_IDS_DIR}${m}.ts`));
    expect({ unlisted, unused }).toEqual({ unlisted: [], unused: [] });
  });
});

// Console journeys (e2e/src/console/*.test.ts) drive page objects (e2e/src/console/pages/): a renamed test id
// then fails the type-check in one place, and a journey reads as what the person does.
describe("the console's journeys", () => {
  const dir = "e2e/src/console";
  const journeys = readdirSync(join(root, dir))
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => join(dir, f));

  it("find elements by test id only through a page object", () => {
    const raw = journeys.flatMap((f) =>
      readFileSync(join(root, f), "utf8")
        .split("\n")
        .flatMap((line, i) => (/getByTestId\(|data-testid/.test(line) ? [`${f}:${i + 1}`] : [])),
    );
    expect(raw, `test ids found in a journey (add a page object method):\n${raw.join("\n")}`).toEqual([]);
  });

  /** A locator made in a journey: a query on a page or locator, or a page method that takes a selector. */
  const RAW_LOCATOR =
    /\.(?:locator|getByTestId|getByRole|getByText|getByLabel|getByPlaceholder|getByTitle|getByAltText)\(|\.(?:textContent|innerText|innerHTML|waitForSelector)\(\s*["'`]|\.\$\$?(?:eval)?\(/;

  it("make no locator of their own: elements come from page objects' methods", () => {
    const raw = matching(journeys, RAW_LOCATOR).filter((l) => !/^[^:]+:\d+: \/\//.test(l));
    expect(raw, `locators made in a journey (add a page object method):\n${raw.join("\n")}`).toEqual([]);
  });

  it("the locator check finds what it forbids", () => {
    for (const line of [
      'await page.getByRole("link", { name: "Volumes" }).click();',
      'await mig.root.getByText("none").waitFor();',
      'expect(await tab.textContent("h1")).toBe("x");',
      'await page.locator("berth-dialog").waitFor();',
    ])
      expect(RAW_LOCATOR.test(line), line).toBe(true);
    for (const line of ['await credits.askAmount().fill("100");', 'await page.keyboard.press("Tab");'])
      expect(RAW_LOCATOR.test(line), line).toBe(false);
  });
});

// Journeys and e2e tests read and set up state through the typed client (e2e/src/api-client.ts), so a
// renamed field fails the type-check: a raw `t.request(method, path)` answers `any`. So do the benches'
// and the cdk8s least-privilege journey's calls. One file is left, with why.
describe("the e2e tests on the typed client", () => {
  const dirs = ["e2e/src"];
  const LEFT: Record<string, string> = {
    // The internal plane's routes (/internal/*, the JWKS) are not in the public document, so they have no
    // operation to call; its public calls are typed.
    "e2e/src/clusters/operator-reports-through-the-internal-plane.test.ts": "internal routes",
  };
  const files = [
    ...dirs.flatMap((dir) =>
      (readdirSync(join(root, dir), { recursive: true }) as string[])
        .filter((f) => f.endsWith(".ts"))
        .map((f) => join(dir, f)),
    ),
    "cdk8s/src/least-privilege.test.ts",
  ].filter((f) => !(f in LEFT));
  /** Untyped calls: the bed's `call`, the test API's `t.request`, or any `call(who, "METHOD", …)`, across line breaks. */
  const UNTYPED_CALL = /\bbed\.call\(|\bt\.request\(|\bcall\(\s*[\w.]+\s*,\s*["'](?:GET|POST|PUT|PATCH|DELETE)["']/g;
  const untypedCalls = (source: string) => source.match(UNTYPED_CALL) ?? [];

  it("call the API through the typed client, never the bed's untyped call", () => {
    expect(files.length).toBeGreaterThan(150);
    const raw = files.flatMap((f) => untypedCalls(textOf(f)).map((c) => `${f}: ${c}`));
    expect(raw, `untyped API calls (use bedApi or apiAs from e2e/src/api-client.ts):\n${raw.join("\n")}`).toEqual([]);
  });

  it("the check finds the calls it forbids", () => {
    expect(
      untypedCalls('const r = await bed.call(\n  bed.superAdmin,\n  "POST",\n  "/api/v1/credits/allocations",'),
    ).toEqual(["bed.call("]);
    expect(untypedCalls('await call(alice, "GET", "/api/v1/queue");')).toEqual(['call(alice, "GET"']);
    expect(untypedCalls('await bed.t.request("POST", "/api/v1/clusters", { token });')).toEqual(["t.request("]);
    // A cluster's own kube client is not Berth's API.
    expect(untypedCalls('await gpu.request("PATCH", path, { json });')).toEqual([]);
    expect(untypedCalls('await bedApi(bed, bed.alice).call("getSession", { params: { sessionId: id } });')).toEqual([]);
  });
});

// Page objects (e2e/src/console/pages/): one class per file, the file named after it, so a journey's import
// names the page it drives and a page's methods are found in one place.
describe("the console's page objects", () => {
  const dir = "e2e/src/console/pages";
  const files = readdirSync(join(root, dir)).filter((f) => f.endsWith(".ts"));
  const kebab = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, "$1-$2").toLowerCase();

  it("are one exported class per file, the file named after it", () => {
    const off = files.flatMap((f) => {
      const classes = [...textOf(join(dir, f)).matchAll(/^(export )?class (\w+)/gm)];
      const names = classes.map((c) => `${c[1] ? "" : "(not exported) "}${c[2]}`);
      const one = classes[0];
      return classes.length === 1 && one?.[1] && `${kebab(one[2] as string)}.ts` === f
        ? []
        : [`${f}: ${names.join(", ")}`];
    });
    expect(files.length).toBeGreaterThan(20);
    expect(off, `page object files with other than one class named after the file:\n${off.join("\n")}`).toEqual([]);
  });
});

// Benches call Berth's API through bench/src/api.ts or the console's generated client (answers typed,
// retries spelled once): a method string beside an /api/v1/ path is a hand-made client answering `any`.
// Kubernetes' own /api/v1/ paths (nodes, namespaces, their pods) are not the API's.
describe("the benches", () => {
  /** Requests spelled as (method, Berth path), across line breaks: `call(token, "POST", "/api/v1/sessions"`. */
  const rawCalls = (source: string) =>
    source.match(
      /["'](?:GET|POST|PUT|PATCH|DELETE)["']\s*,\s*[`"']\/api\/v1\/(?!nodes\b|namespaces\b|pods\b)[^`"']*/g,
    ) ?? [];

  it("call the API through the typed client (bench/src/api.ts), never a method and a path by hand", () => {
    const files = (readdirSync(join(root, "bench/src")) as string[])
      .filter((f) => f.endsWith(".ts"))
      .map((f) => `bench/src/${f}`);
    const raw = files.flatMap((f) => rawCalls(textOf(f)).map((c) => `${f}: ${c.replace(/\s+/g, " ")}`));
    expect(
      raw,
      `API calls by method and path (use answering or apiAs from bench/src/api.ts):\n${raw.join("\n")}`,
    ).toEqual([]);
  });

  it("the check finds the calls it forbids", () => {
    expect(rawCalls('await call(\n  u.token,\n  "POST",\n  "/api/v1/sessions",\n  body);')).toEqual([
      '"POST",\n  "/api/v1/sessions',
    ]);
    expect(rawCalls("call(t, 'GET', `/api/v1/queue`)")).toEqual(["'GET', `/api/v1/queue"]);
    expect(rawCalls('kube.json("GET", `/api/v1/nodes/n`); kube.json("POST", "/api/v1/namespaces")')).toEqual([]);
  });
});

// api/ names its files in camelCase (postCharge.ts, sessionStore.ts); the part before the first dot is the
// name, what follows is a kind (.test, .pg.test, .test-support). Left, with their reason:
const API_KEBAB_LEFT = new Set([
  // the worker's entry point, named beside main.ts in package.json, cdk8s' pods and the Containerfile
  "api/src/worker-main.ts",
  "api/src/worker-main.test.ts",
]);

describe("api's file names", () => {
  it("are camelCase (a kebab-case name is renamed, or listed with its reason)", () => {
    const files = (readdirSync(join(root, "api/src"), { recursive: true }) as string[])
      .filter((f) => f.endsWith(".ts"))
      .map((f) => `api/src/${f}`);
    const kebab = files.filter((f) => f.split("/").at(-1)?.split(".")[0]?.includes("-") && !API_KEBAB_LEFT.has(f));
    expect(kebab, `kebab-case file names in api/ (rename to camelCase):\n${kebab.join("\n")}`).toEqual([]);
  });
});
