// Reads the bearer token of an Authorization header, as the Worker and the runner both take it.
// Comparing it with the tokens a program accepts is left to that program.

export function bearerToken(header: string | undefined | null): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match?.[1] ?? null;
}
