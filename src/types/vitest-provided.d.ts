// What vitest.config.ts provides to the workers tests (`inject`): how many runs the property
// tests make. `npm run fuzz` raises them.
import "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    fuzzRuns: number;
    fuzzSeed: number;
    propertyRuns: number;
  }
}
