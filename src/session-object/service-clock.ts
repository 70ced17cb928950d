// When this isolate took its first event: the earliest the service can have been up since it
// last started. Module state, so it outlives an object closed when idle (that is no restart)
// and dies with the process (a restart or a deploy). Read only inside an event: at module scope
// a Worker's clock does not run.

let upSince: number | undefined;

/** Marks the isolate's first event (idempotent) and returns when it was. */
export function serviceUpSince(): number {
  upSince ??= Date.now();
  return upSince;
}
