// The model's `exec_command` and `write_stdin` as OpenAI Agents JS function tools. The behaviour is
// agent/exec-tools.ts's, called as it is (reserve and arm before the tool answers); only the
// wrapping differs. The caller owns the running handles, through the context's callbacks.
import { type FunctionTool, tool } from "@openai/agents";
import { z } from "zod";
import { type ExecToolContext, execTools } from "../agent/exec-tools";

type AiTool = ReturnType<typeof execTools>[keyof ReturnType<typeof execTools>];

function wrap(name: string, aiTool: AiTool): FunctionTool {
  // The AI SDK tool was made from a zod object: the same schema checks the model's input here.
  const schema = aiTool.inputSchema as unknown as z.ZodObject;
  // Non-strict JSON schema: the tools have optional fields (workdir, yield_time_ms, …), which
  // OpenAI's strict mode (the only mode the SDK takes a zod schema in) would make required.
  const { $schema: _, ...parameters } = z.toJSONSchema(schema) as Record<string, unknown>;
  return tool({
    name,
    description: aiTool.description ?? name,
    parameters: { ...parameters, additionalProperties: true } as never,
    strict: false,
    execute: async (input) => {
      const execute = aiTool.execute;
      if (execute === undefined) throw new Error(`${name} has no execute`);
      const parsed = schema.parse(typeof input === "string" ? JSON.parse(input) : input);
      // Both tools answer at once (never a stream): the value is the tool's result.
      return (await execute(parsed as never, { toolCallId: name, messages: [] })) as unknown;
    },
  }) as unknown as FunctionTool;
}

export function openaiExecTools(ctx: ExecToolContext): FunctionTool[] {
  const tools = execTools(ctx);
  return [wrap("exec_command", tools.exec_command), wrap("write_stdin", tools.write_stdin)];
}
