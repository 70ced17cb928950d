// What one wake costs on Cloudflare at list prices (bench/lib/prices.ts), from the figures the
// bench measures per wake; which figures a system has is the caller's.
import { DO_BILLED_GB, PRICE } from "./prices";

/** One wake's billed units; a unit a system does not use is left out. */
export interface WakeUnits {
  /** The serving processes' CPU per wake, all of it (an upper bound of the Worker's own). */
  cpuMs: number;
  /** How long the object is active for the wake (billed as duration). */
  activeMs?: number;
  doRequests?: number;
  sqliteRowsRead?: number;
  sqliteRowsWritten?: number;
  d1RowsWritten?: number;
}

/** USD per million wakes, by billed item: one Worker request (the result's POST) and the rest. */
export function wakeBill(units: WakeUnits): Record<string, number> {
  const bill: Record<string, number> = {
    "Workers requests": PRICE.workerRequest,
    "Workers CPU": units.cpuMs * PRICE.workerCpuMs,
  };
  if (units.doRequests !== undefined) bill["DO requests"] = units.doRequests * PRICE.doRequest;
  if (units.activeMs !== undefined) {
    bill["DO duration"] = (units.activeMs / 1000) * DO_BILLED_GB * PRICE.doGbSecond;
  }
  if (units.sqliteRowsRead !== undefined) {
    bill["SQLite rows read"] = units.sqliteRowsRead * PRICE.sqliteRowRead;
  }
  if (units.sqliteRowsWritten !== undefined) {
    bill["SQLite rows written"] = units.sqliteRowsWritten * PRICE.sqliteRowWritten;
  }
  if (units.d1RowsWritten !== undefined) {
    bill["D1 rows written"] = units.d1RowsWritten * PRICE.d1RowWritten;
  }
  return bill;
}
