// Cloudflare's list prices for Workers Paid, beyond the included amounts: USD per million of each
// unit. Read 2026-12-02 from the pricing pages:
// - Workers (https://developers.cloudflare.com/workers/platform/pricing/): $0.30 per million
//   requests, $0.02 per million CPU milliseconds.
// - Durable Objects (https://developers.cloudflare.com/durable-objects/platform/pricing/): $0.15 per
//   million requests (RPC sessions and alarm invocations count), $12.50 per million GB-s of
//   duration, each active object billed as 128 MB; SQLite storage $0.001 per million rows read,
//   $1.00 per million rows written, $0.20 per GB-month stored.
// - D1 (https://developers.cloudflare.com/d1/platform/pricing/): $0.001 per million rows read,
//   $1.00 per million rows written.
// - Workflows (https://developers.cloudflare.com/workflows/reference/pricing/): Workers Standard
//   pricing (requests and CPU time), plus $0.20 per GB-month stored.
// - R2 (https://developers.cloudflare.com/r2/pricing/): $4.50 per million Class A operations,
//   $0.36 per million Class B, $0.015 per GB-month stored.
export const PRICE = {
  workerRequest: 0.3,
  workerCpuMs: 0.02,
  doRequest: 0.15,
  doGbSecond: 12.5,
  sqliteRowRead: 0.001,
  sqliteRowWritten: 1.0,
  d1RowWritten: 1.0,
  r2ClassA: 4.5,
  r2ClassB: 0.36,
  /** USD per GB-month, not per million. */
  r2GbMonth: 0.015,
} as const;

/** The GB each active object is billed for: 128 MB, reckoned as the pricing page's examples do. */
export const DO_BILLED_GB = 0.128;
