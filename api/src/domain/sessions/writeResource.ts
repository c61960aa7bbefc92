// The Session resource's create on the management cluster, made safe to retry (createSession.ts).
import type { Session } from "@berth/crds";
import { type SessionsRuntime, sessionPath } from "./runtime.ts";

/**
 * Creates the Session resource. When no answer came (a timeout, a reset) or the name is taken (a retried
 * POST landed), the apiserver may have created it: it is read back, and one that exists is the create
 * done; otherwise it is deleted, so that a session answered as failed does not come to life through the
 * worker.
 */
export async function writeResource(
  rt: SessionsRuntime,
  namespace: string,
  name: string,
  body: Session,
): Promise<void> {
  await rt.ensureNamespace(namespace);
  const readBack = async (failure: Error): Promise<void> => {
    const back = await rt.kube.request("GET", sessionPath(namespace, name)).catch(() => undefined);
    if (back?.status === 200) return;
    // Unreadable, or not there yet (a POST still on its way can land after the read): delete it anyway.
    await rt.kube.request("DELETE", sessionPath(namespace, name)).catch(() => undefined);
    throw failure;
  };
  let res: { status: number; body: unknown };
  try {
    res = await rt.kube.request("POST", sessionPath(namespace), { body });
  } catch (e) {
    return readBack(e as Error);
  }
  if (res.status === 201) return;
  const failure = new Error(
    `creating the Session resource answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`,
  );
  // 409: the name is this create's alone, so a retried POST (the client's, on a stale connection) landed.
  if (res.status === 409) return readBack(failure);
  throw failure;
}
