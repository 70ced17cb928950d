// Records keyed by ids the clients choose (handles, envelope ids). An id may be `__proto__` or
// `constructor`: a plain `record[id]` would then read Object.prototype's members, and an
// assignment would set the prototype. Reads go through `own`; records written key by key are
// made without a prototype.

export const own = <T>(record: Readonly<Record<string, T>>, key: string): T | undefined =>
  Object.hasOwn(record, key) ? record[key] : undefined;

/** An empty record without a prototype: `record[id] = value` always makes an own entry. */
export const dict = <T>(): Record<string, T> => Object.create(null) as Record<string, T>;

/** A copy without a prototype, safe to assign into by id. */
export const copyOf = <T>(record: Readonly<Record<string, T>>): Record<string, T> =>
  Object.assign(dict<T>(), record);
