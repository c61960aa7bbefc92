// The berth.dev CustomResourceDefinitions, exactly as committed in crds/generated (one source of truth).
import { loadCrds } from "@berth/crds/manifests";
import { ApiObject } from "cdk8s";
import { Construct } from "constructs";

export class Crds extends Construct {
  constructor(scope: Construct, id: string) {
    super(scope, id);
    for (const crd of loadCrds()) new ApiObject(this, crd.metadata.name, crd as never);
  }
}
