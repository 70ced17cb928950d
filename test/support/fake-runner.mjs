// A stand-in exec runner for the Agents SDK kit's tests in the workers pool (the real runner is a
// Node process; its own tests run it). exec_command puts every command in the background; the
// test ends one with `POST /_finish/<handle>` and reads its armed callback to post the completion
// as the runner would; write_stdin then answers with the result. A command starting `quick:` exits
// at once (exit code 0, the rest as its output). Under the base path `/hostile/<mode>` it answers
// as a broken runner does: `huge` (10 MB), `never` (no answer for minutes), `garbage` (an HTML
// page), `shape` (JSON of the wrong shape), `escaped` (the largest allowed output, JSON-escaped), `down` (a proxy's 502), `redirect` (a 307 to the good
// runner). Under `/noarm` it starts commands but refuses to arm a callback; under `/mute` it
// starts them but answers every write_stdin with garbage. Plain JavaScript, loaded as is.
const jobs = new Map();

const TEN_MB = 10 * 1024 * 1024;

/** What a broken runner answers, whatever was asked. */
async function hostile(mode) {
  switch (mode) {
    case "huge": {
      const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
      let sent = 0;
      const body = new ReadableStream({
        pull(controller) {
          if (sent >= TEN_MB) return controller.close();
          sent += chunk.byteLength;
          controller.enqueue(chunk);
        },
      });
      return new Response(body, { headers: { "content-type": "application/json" } });
    }
    case "never":
      await new Promise((resolve) => setTimeout(resolve, 300_000));
      return json({ output: "too late" });
    case "garbage":
      return new Response("<html><body>It works!</body></html>", { status: 200 });
    case "shape":
      return json({ output: 5, session_id: ["not", "a", "string"] });
    case "escaped":
      // The most output max_output_tokens allows (200,000 tokens of 4 bytes), every byte a
      // control character JSON writes as six (\u0001): the worst answer a real runner gives.
      return json({ exit_code: 0, output: "\u0001".repeat(200_000 * 4) });
    case "redirect":
      return new Response(null, {
        status: 307,
        headers: { location: "http://runner.test/v1/exec_command" },
      });
    default:
      return new Response("<html>502 Bad Gateway</html>", { status: 502 });
  }
}
let started = 0;

const json = (body, status = 200) => Response.json(body, { status });

export default {
  async fetch(request) {
    let url = new URL(request.url);
    let parts = url.pathname.split("/").filter(Boolean);
    if (parts[0] === "hostile") return hostile(parts[1]);
    // Under `/noarm` the runner starts commands but refuses to arm their callbacks (a full disk
    // for its journal, say): 503 with a problem.
    if (parts[0] === "noarm" && parts[2] === "processes" && parts[4] === "callback") {
      return json({ code: "unavailable", detail: "the journal cannot be written" }, 503);
    }
    if (parts[0] === "mute" && parts[1] === "v1" && parts[2] === "write_stdin") {
      return hostile("garbage");
    }
    if (parts[0] === "noarm" || parts[0] === "mute") {
      url = new URL(`/${parts.slice(1).join("/")}`, url);
      parts = parts.slice(1);
    }
    // Under `/reuse/<handle>` the runner names every background command <handle>, as a replaced
    // sandbox whose process ids start again does.
    let reuse = null;
    if (parts[0] === "reuse") {
      reuse = decodeURIComponent(parts[1]);
      url = new URL(`/${parts.slice(2).join("/")}`, url);
      parts = parts.slice(2);
    }
    if (url.pathname === "/v1/exec_command") {
      const input = await request.json();
      if (typeof input.cmd === "string" && input.cmd.startsWith("quick:")) {
        return json({ exit_code: 0, output: input.cmd.slice("quick:".length), wall_time_ms: 1 });
      }
      started += 1;
      const handle = reuse ?? `bg-${Date.now().toString(36)}-${started}`;
      jobs.set(handle, {
        workspace: input.workspace,
        cmd: input.cmd,
        callback: null,
        result: null,
        killed: false,
        authorization: request.headers.get("authorization"),
      });
      return json({ session_id: handle, output: "started\n", wall_time_ms: input.yield_time_ms });
    }
    if (parts[0] === "v1" && parts[1] === "processes" && parts[3] === "callback") {
      const job = jobs.get(decodeURIComponent(parts[2]));
      if (job === undefined) return json({ code: "not_found", detail: "no such process" }, 404);
      job.callback = await request.json();
      return json({ armed: true });
    }
    if (parts[0] === "v1" && parts[1] === "processes" && parts[3] === "kill") {
      const job = jobs.get(decodeURIComponent(parts[2]));
      if (job === undefined) return json({ code: "not_found", detail: "no such process" }, 404);
      job.killed = true;
      return json({ exit_code: null, output: "", killed: job.result === null });
    }
    if (url.pathname === "/v1/write_stdin") {
      const input = await request.json();
      const job = jobs.get(input.session_id);
      if (job === undefined) return json({ code: "not_found", detail: "no such process" }, 404);
      return job.result === null
        ? json({ session_id: input.session_id, output: "" })
        : json({ exit_code: job.result.exit_code, output: job.result.output });
    }
    if (parts[0] === "_jobs") {
      // The handles a workspace (an agent session) started, oldest first.
      const workspace = url.searchParams.get("workspace");
      return json({
        jobs: [...jobs.entries()]
          .filter(([, job]) => job.workspace === workspace)
          .map(([handle, job]) => ({ handle, ...job })),
      });
    }
    if (parts[0] === "_finish" && request.method === "POST") {
      const job = jobs.get(decodeURIComponent(parts[1]));
      if (job === undefined) return json({ code: "not_found" }, 404);
      job.result = await request.json();
      return json({ callback: job.callback });
    }
    return json({ code: "not_found" }, 404);
  },
};
