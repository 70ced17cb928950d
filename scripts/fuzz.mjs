// `npm run fuzz`: the HTTP fuzz at 10,000 malformed requests and each property at 10,000 runs.
// The fuzz runs in batches of 400 with their own seeds: one workerd of the test pool holding
// 10,000 requests in one test overflowed its stack (measured), so each batch gets a fresh pool.
import { spawnSync } from "node:child_process";

const BATCHES = 25;
const vitest = (files, env) => {
  const run = spawnSync("npx", ["vitest", "run", "--project", "workers", ...files], {
    stdio: "inherit",
    env: { ...process.env, ...env },
  });
  if (run.status !== 0) process.exit(run.status ?? 1);
};

vitest(["src/domain/history.property.test.ts", "src/domain/liveness.property.test.ts"], {
  PROPERTY_RUNS: "10000",
});
for (let batch = 0; batch < BATCHES; batch += 1) {
  console.log(`fuzz: batch ${batch + 1} of ${BATCHES} (400 requests, seed ${42 + batch})`);
  vitest(["test/workers/http-fuzz.property.test.ts"], {
    FUZZ_RUNS: "400",
    FUZZ_SEED: String(42 + batch),
  });
}
console.log(`fuzz: ${BATCHES * 400} malformed requests, every answer a 4xx problem+json`);
