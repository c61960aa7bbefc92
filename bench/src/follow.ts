// biome-ignore-all lint/suspicious/noExplicitAny: the bench reads Kubernetes JSON as it comes
import { HttpKube, Informer } from "@berth/controllers/kube";
import { kubeConfigFrom } from "@berth/e2e";

/**
 * Follows a collection with list+watch (no polling: a 1,000-item list every 100 ms would load the
 * apiserver and this process more than what is measured) and records when each object first matched.
 */
export function follow(kubeconfig: string, path: string, pred: (o: any) => boolean) {
  const seen = new Map<string, number>();
  const inf = new Informer<any>({
    kube: new HttpKube(kubeConfigFrom(kubeconfig)),
    path,
    onEvent: (e) => {
      if (e.type === "upsert" && pred(e.object) && !seen.has(e.object.metadata.name))
        seen.set(e.object.metadata.name, performance.now());
    },
  });
  inf.start();
  return {
    seen,
    store: inf.store,
    async until(count: number, timeoutMs: number, filter: (name: string) => boolean = () => true): Promise<number> {
      const t0 = performance.now();
      for (;;) {
        const n = [...seen.keys()].filter(filter).length;
        if (n >= count) return performance.now() - t0;
        if (performance.now() - t0 > timeoutMs)
          throw new Error(`only ${n} of ${count} after ${(timeoutMs / 1000).toFixed(2)} s (${path})`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop: () => inf.stop(),
  };
}
