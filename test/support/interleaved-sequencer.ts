// The order the test files start in: vitest's own (longest first, failed first), then the
// projects taken in turn. The workers pool's files mostly wait on timers (alarm retries, settle
// windows) while the e2e files keep the CPU busy starting wrangler dev; sorted by size alone the
// workers files all ran last, on their own, for the final two minutes of a CI run.
import { BaseSequencer, type TestSpecification } from "vitest/node";

export default class InterleavedSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const queues = new Map<string, TestSpecification[]>();
    for (const file of sorted) {
      const name = file.project.name;
      queues.set(name, [...(queues.get(name) ?? []), file]);
    }
    const turns: TestSpecification[] = [];
    while (turns.length < sorted.length) {
      for (const queue of queues.values()) {
        const next = queue.shift();
        if (next !== undefined) turns.push(next);
      }
    }
    return turns;
  }
}
