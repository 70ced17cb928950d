// The full output's wire shapes (contract §9 "Outputs of any size"), shared by the Worker that
// checks them and the runner that uploads: part limits, the part header, the completion's field.
import { z } from "zod";

/** One part fits every Workers plan's request body limit (100 MB on Free). */
export const MAX_PART_BYTES = 64 * 1024 * 1024;
/** Parts per output: one R2 list (at most 1,000 keys) sees them all at completion. */
export const MAX_PARTS = 1000;
/** The request header that carries a part's SHA-256 (64 lowercase hex digits). */
export const PART_SHA256_HEADER = "x-content-sha256";
export const SHA256_HEX = /^[0-9a-f]{64}$/;

const sha256 = z.string().regex(SHA256_HEX, "64 lowercase hex digits");

export const fullOutputPart = z.strictObject({
  bytes: z.int().min(1).max(MAX_PART_BYTES),
  sha256,
});

/**
 * What a completion names: the whole output's size and hash and its parts in order (part `i` is
 * the one uploaded to `…/output/parts/i`). The whole hash is the runner's; each part's the service
 * checked on arrival.
 */
export const fullOutputBody = z
  .strictObject({
    bytes: z.int().min(1),
    sha256,
    parts: z.array(fullOutputPart).min(1).max(MAX_PARTS),
  })
  .superRefine((body, issues) => {
    const sum = body.parts.reduce((total, part) => total + part.bytes, 0);
    if (sum !== body.bytes) {
      issues.addIssue({
        code: "custom",
        path: ["bytes"],
        message: `is ${body.bytes}, but the parts add up to ${sum}`,
      });
    }
  });

export type FullOutputBody = z.infer<typeof fullOutputBody>;

/** What a part upload answers. */
export const partReceipt = z.strictObject({
  index: z.int().min(0),
  bytes: z.int().min(1),
  sha256,
});
