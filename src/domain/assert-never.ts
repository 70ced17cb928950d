// The exhaustiveness check of a switch over a closed union: a new member that a switch does not
// handle stops compilation there. Reaching it at run time means a value escaped its type (a bug).

export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(value)}`);
}
