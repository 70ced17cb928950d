// A stand-in exec runner for the Agents SDK kit's tests in the workers pool (the real runner is a
// Node process; its own tests run it). exec_command puts every command in the background; the
// test ends one with `POST /_finish/<handle>` and reads its armed callback to post the completion
// as the runner would; write_stdin then answers with the result. Plain JavaScript, loaded as is.
const jobs = new Map();
let started = 0;

const json = (body, status = 200) => Response.json(body, { status });

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const parts = url.pathname.split("/").filter(Boolean);
    if (url.pathname === "/v1/exec_command") {
      const input = await request.json();
      started += 1;
      const handle = `bg-${Date.now().toString(36)}-${started}`;
      jobs.set(handle, {
        workspace: input.workspace,
        cmd: input.cmd,
        callback: null,
        result: null,
      });
      return json({ session_id: handle, output: "started\n", wall_time_ms: input.yield_time_ms });
    }
    if (parts[0] === "v1" && parts[1] === "processes" && parts[3] === "callback") {
      const job = jobs.get(decodeURIComponent(parts[2]));
      if (job === undefined) return json({ code: "not_found", detail: "no such process" }, 404);
      job.callback = await request.json();
      return json({ armed: true });
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
