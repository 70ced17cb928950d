// The one caller of the exec runner's HTTP API (runner/src/server.ts) for tests and scripts:
// `POST <base><path>` with the runner's bearer token. What the answer means is the caller's.

interface RunnerAnswer {
  readonly status: number;
  readonly body: any;
}

export async function callRunner(
  base: string,
  token: string,
  path: string,
  body: unknown,
): Promise<RunnerAnswer> {
  const response = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === "" ? null : JSON.parse(text) };
}
