// What the wizard's steps share: the catalog it loaded and the cost preview with its refusal in words.
import type { CostPreview, Image, Offering, ResourcePreset } from "../../../api/openapi.gen.ts";
import type { RefusalText } from "../../../data/refusal.ts";

export interface Catalog {
  offerings: Offering[];
  presets: ResourcePreset[];
  images: Image[];
}

/** The cost preview, with its refusal in plain words when it says the session could not start now. */
export type Previewed = CostPreview & { refusalText?: RefusalText };

export const DURATIONS = [
  { s: 3600, label: "1 hour" },
  { s: 4 * 3600, label: "4 hours" },
  { s: 8 * 3600, label: "8 hours" },
  { s: 24 * 3600, label: "24 hours" },
];
