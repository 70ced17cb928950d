// The MCP tools' inputs: zod schemas that check a call's arguments, and the JSON Schemas
// `tools/list` shows for them. The two are kept side by side so they cannot drift far apart.
import { z } from "zod";
import { MAX_COMMAND_BYTES } from "../../shared/exec-wire";

/** The most output tokens a call may ask for: the runner's answer stays under the client's cap. */
export const MAX_OUTPUT_TOKENS = 200_000;

export const execCommandArgs = z.strictObject({
  cmd: z
    .string()
    .min(1)
    .refine((cmd) => new TextEncoder().encode(cmd).byteLength <= MAX_COMMAND_BYTES, {
      message: `cmd is longer than ${MAX_COMMAND_BYTES} bytes (UTF-8)`,
    }),
  yield_time_ms: z.int().min(250).max(30_000).optional(),
  workdir: z.string().min(1).max(4096).optional(),
  max_output_tokens: z.int().min(1).max(MAX_OUTPUT_TOKENS).optional(),
});

export const writeStdinArgs = z.strictObject({
  session_id: z.string().min(1).max(128),
  chars: z
    .string()
    .max(64 * 1024)
    .optional(),
  yield_time_ms: z.int().min(0).max(30_000).optional(),
  max_output_tokens: z.int().min(1).max(MAX_OUTPUT_TOKENS).optional(),
});

export type ExecCommandArgs = z.infer<typeof execCommandArgs>;
export type WriteStdinArgs = z.infer<typeof writeStdinArgs>;

export const EXEC_COMMAND_INPUT = {
  type: "object",
  properties: {
    cmd: {
      type: "string",
      minLength: 1,
      description: `The shell command, run with bash -c in the session's workspace (at most ${MAX_COMMAND_BYTES} bytes).`,
    },
    yield_time_ms: {
      type: "integer",
      minimum: 250,
      maximum: 30_000,
      description:
        "How long to wait for the command before it goes to the background (default 10000).",
    },
    workdir: {
      type: "string",
      minLength: 1,
      description: "Working directory inside the workspace.",
    },
    max_output_tokens: { type: "integer", minimum: 1, maximum: MAX_OUTPUT_TOKENS },
  },
  required: ["cmd"],
  additionalProperties: false,
} as const;

export const WRITE_STDIN_INPUT = {
  type: "object",
  properties: {
    session_id: {
      type: "string",
      minLength: 1,
      description: "The session ID exec_command returned for a command in the background.",
    },
    chars: { type: "string", description: "Characters to write to stdin; empty to only read." },
    yield_time_ms: { type: "integer", minimum: 0, maximum: 30_000 },
    max_output_tokens: { type: "integer", minimum: 1, maximum: MAX_OUTPUT_TOKENS },
  },
  required: ["session_id"],
  additionalProperties: false,
} as const;
