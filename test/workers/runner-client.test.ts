// The Worker's calls to a session's runner: a runner that answers too much, never, or garbage is
// a value the caller can say in words, never a hang or a throw. runner.test is the stand-in runner.
import { describe, expect, it } from "vitest";
import { outputBudget } from "../../shared/output-budget";
import { RUNNER_ANSWER_MAX_BYTES, RunnerClient } from "../../src/mcp/runner-client";
import { MAX_OUTPUT_TOKENS } from "../../src/mcp/tool-inputs";
import { uniqueId } from "../support/api";

const TOKEN = "runner-client-token";
const runnerAt = (path = "", marginMs = 2_000) =>
  new RunnerClient({ url: `http://runner.test${path}`, token: TOKEN }, fetch, marginMs);

describe("the runner client", () => {
  it("a command that exits within its yield answers its exit code and output", async () => {
    const answer = await runnerAt().execCommand({ cmd: "quick:hello", workspace: "w" });
    expect(answer).toEqual({
      ok: true,
      value: { exit_code: 0, output: "hello" },
    });
  });

  it("a command that outlives its yield answers its session_id, and the runner saw the token", async () => {
    const workspace = uniqueId("rc-bg");
    const answer = await runnerAt().execCommand({ cmd: "sleep 60", workspace });
    expect(answer.ok && answer.value.session_id).toMatch(/^bg-/);
    const jobs = await (await fetch(`http://runner.test/_jobs?workspace=${workspace}`)).json<any>();
    expect(jobs.jobs[0].authorization).toBe(`Bearer ${TOKEN}`);
  });

  it("an answer past the size cap is refused as too large after reading no more than the cap", async () => {
    const answer = await runnerAt("/hostile/huge").execCommand({ cmd: "x", workspace: "w" });
    expect(answer).toMatchObject({ ok: false, reason: "too_large", status: 200 });
    expect(answer.ok ? "" : answer.detail).toContain(String(RUNNER_ANSWER_MAX_BYTES));
  });

  it("the largest output the tools allow, every byte JSON-escaped to six, is read whole", async () => {
    const answer = await runnerAt("/hostile/escaped").execCommand({ cmd: "x", workspace: "w" });
    expect(answer.ok, answer.ok ? "" : answer.detail).toBe(true);
    expect(answer.ok && answer.value.output.length).toBe(outputBudget(MAX_OUTPUT_TOKENS));
  });

  it("a runner that never answers is given up after the yield and the margin", async () => {
    const answer = await runnerAt("/hostile/never", 200).execCommand({
      cmd: "x",
      workspace: "w",
      yield_time_ms: 0,
    });
    expect(answer).toMatchObject({ ok: false, reason: "timeout", status: null });
  });

  it("HTML, JSON of the wrong shape and a proxy's 502 are garbage, and a runner's problem is a refusal with its code", async () => {
    for (const mode of ["garbage", "shape", "down"]) {
      const answer = await runnerAt(`/hostile/${mode}`).execCommand({ cmd: "x", workspace: "w" });
      expect(answer, mode).toMatchObject({ ok: false, reason: "garbage" });
    }
    const refused = await runnerAt().writeStdin({ session_id: "no-such-process" });
    expect(refused).toMatchObject({ ok: false, reason: "refused", status: 404, code: "not_found" });
  });

  it("a redirect is never followed: the allowlist holds for the URL actually called", async () => {
    const answer = await runnerAt("/hostile/redirect").execCommand({
      cmd: "quick:x",
      workspace: "w",
    });
    expect(answer).toMatchObject({ ok: false, reason: "garbage", status: 307 });
  });

  it("no failure's detail carries the token", async () => {
    for (const mode of ["huge", "garbage", "shape", "down"]) {
      const answer = await runnerAt(`/hostile/${mode}`).kill("h");
      expect(JSON.stringify(answer)).not.toContain(TOKEN);
    }
  });
});
