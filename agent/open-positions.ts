// Which tool calls of a conversation no result answers, by position: some providers number calls
// per turn (call_0 in every turn), so one id can name several calls, answered or not. Each kit's
// format (open-tool-calls.ts, openai-agents/) lists its calls and results in order for these.

/** A tool call or a tool result, in conversation order, by the id it carries. */
export interface CallOrResult {
  readonly kind: "call" | "result";
  readonly id: string;
}

/**
 * The indexes (into `entries`) of the calls left without a result, oldest first. A result answers
 * the latest call before it under its id: a call is open when no result with its id follows it
 * before the next call with that id.
 */
export function openCallIndexes(entries: readonly CallOrResult[]): number[] {
  const latest = new Map<string, number>();
  const open: number[] = [];
  entries.forEach((entry, index) => {
    const before = latest.get(entry.id);
    if (entry.kind === "result") {
      latest.delete(entry.id);
      return;
    }
    if (before !== undefined) open.push(before);
    latest.set(entry.id, index);
  });
  open.push(...latest.values());
  return open.sort((a, b) => a - b);
}

/**
 * For each open call (their ids, oldest first), the recovered result that is its own: the n-th
 * open call under an id gets the n-th recovered result under it, as recovery lists them in the
 * order it found the calls. A call with none left gets undefined.
 */
export function ownResults<R extends { readonly toolCallId: string }>(
  openIds: readonly string[],
  recovered: readonly R[],
): Array<R | undefined> {
  const queues = new Map<string, R[]>();
  for (const call of recovered)
    queues.set(call.toolCallId, [...(queues.get(call.toolCallId) ?? []), call]);
  return openIds.map((id) => queues.get(id)?.shift());
}
