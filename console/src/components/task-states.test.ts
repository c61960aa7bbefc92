// @vitest-environment happy-dom
// The pending, error and empty states every page shows through renderTask, rendered by Lit in a DOM.
import { Task } from "@lit/task";
import { html, LitElement } from "lit";
import { afterEach, describe, expect, it } from "vitest";
import { ApiError } from "../api/client.ts";
import { renderTask } from "./task-states.ts";

interface Deferred<T> {
  promise: Promise<T>;
  resolve(v: T): void;
  reject(e: unknown): void;
}
function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((a, b) => {
    resolve = a;
    reject = b;
  });
  return { promise, resolve, reject };
}

let next: Deferred<string[]>;

class TaskProbe extends LitElement {
  task = new Task(this, { task: async () => next.promise, args: () => [] });
  override render() {
    return renderTask(this.task, {
      pendingLabel: "Loading things…",
      isEmpty: (v) => v.length === 0,
      empty: () => html`<berth-empty-state heading="No thing yet">Make one.</berth-empty-state>`,
      complete: (v) => html`<ul>${v.map((x) => html`<li>${x}</li>`)}</ul>`,
    });
  }
}
customElements.define("task-probe", TaskProbe);

async function mount(): Promise<TaskProbe> {
  const el = document.createElement("task-probe") as TaskProbe;
  document.body.append(el);
  await el.updateComplete;
  return el;
}
const settle = async (el: LitElement) => {
  for (let i = 0; i < 5; i++) {
    await new Promise((r) => setTimeout(r, 0));
    await el.updateComplete;
  }
};
const deepText = (root: Element | ShadowRoot): string =>
  [...root.childNodes]
    .map((n) =>
      n instanceof Element
        ? (n.shadowRoot ? deepText(n.shadowRoot) : "") + deepText(n)
        : n.nodeType === 3
          ? n.textContent
          : "",
    )
    .join(" ")
    .replace(/\s+/g, " ");

afterEach(() => {
  document.body.innerHTML = "";
});

describe("a page's data states", () => {
  it("says what it is loading while it waits", async () => {
    next = deferred();
    const el = await mount();
    const pending = el.shadowRoot?.querySelector("berth-pending");
    expect(pending?.getAttribute("label")).toBe("Loading things…");
    await (pending as LitElement).updateComplete;
    expect(pending?.shadowRoot?.querySelector('[role="status"]')?.textContent).toContain("Loading things…");
  });

  it("shows the API's message, code and request id when it fails, with a way to try again", async () => {
    next = deferred();
    const el = await mount();
    next.reject(
      new ApiError({ status: 403, code: "forbidden", message: "you may not see these", requestId: "req_abc123" }),
    );
    await settle(el);
    const panel = el.shadowRoot?.querySelector("berth-error-panel") as LitElement;
    await panel.updateComplete;
    const text = deepText(panel.shadowRoot as ShadowRoot);
    expect(text).toContain("you may not see these");
    expect(text).toContain("req_abc123");
    expect(panel.shadowRoot?.querySelector('[role="alert"]')?.getAttribute("data-code")).toBe("forbidden");
    next = deferred();
    const retry = panel.shadowRoot?.querySelector("button");
    if (!retry) throw new Error("no Try again button");
    retry.click();
    next.resolve(["again"]);
    await settle(el);
    expect(el.shadowRoot?.querySelector("li")?.textContent).toBe("again");
  });

  it("says what to do when there is nothing", async () => {
    next = deferred();
    const el = await mount();
    next.resolve([]);
    await settle(el);
    const empty = el.shadowRoot?.querySelector("berth-empty-state") as LitElement;
    expect(empty.getAttribute("heading")).toBe("No thing yet");
  });

  it("keeps showing the last value while it refreshes, instead of flashing a spinner", async () => {
    next = deferred();
    const el = await mount();
    next.resolve(["one"]);
    await settle(el);
    next = deferred();
    void el.task.run();
    await settle(el);
    expect(el.shadowRoot?.querySelector("li")?.textContent).toBe("one");
    expect(el.shadowRoot?.querySelector("berth-pending")).toBeNull();
  });
});
