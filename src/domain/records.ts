// Records keyed by ids the clients choose (handles, envelope ids). An id may be `__proto__` or
// `constructor`: a plain `record[id]` would then read Object.prototype's members, and an
// assignment would set the prototype. Reads go through `own`; records written key by key are
// made without a prototype. A record of loaded rows is fenced: `own` refuses a key it was not
// loaded for, so a rule that reads a row its `needs` did not name fails instead of misbehaving.

const LOADED = Symbol("loaded keys");
type Fenced = { readonly [LOADED]?: ReadonlySet<string> };

export class UnloadedRowError extends Error {}

export function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  const loaded = (record as Fenced)[LOADED];
  if (loaded !== undefined && !loaded.has(key)) {
    throw new UnloadedRowError(
      `row ${JSON.stringify(key)} was read but not loaded: a rule's needs miss it`,
    );
  }
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/**
 * Marks `record` as holding the rows of exactly `keys` (present or not). Copies (`copyOf`,
 * spreads) are not fenced: a rule may read what it wrote itself.
 */
export function fence<T>(record: Record<string, T>, keys: Iterable<string>): Record<string, T> {
  Object.defineProperty(record, LOADED, { value: new Set(keys), enumerable: false });
  return record;
}

/** An empty record without a prototype: `record[id] = value` always makes an own entry. */
export const dict = <T>(): Record<string, T> => Object.create(null) as Record<string, T>;

/** A copy without a prototype, safe to assign into by id. */
export const copyOf = <T>(record: Readonly<Record<string, T>>): Record<string, T> =>
  Object.assign(dict<T>(), record);
