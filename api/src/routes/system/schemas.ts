import { z } from "zod";

export const Health = z.object({ status: z.literal("ok") }).meta({ id: "Health" });

export const OpenApiDocument = z
  .record(z.string(), z.unknown())
  .meta({ description: "The OpenAPI 3.1 document of this API." });
