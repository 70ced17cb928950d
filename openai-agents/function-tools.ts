// The kit's exec tools (`execTools`, written once for the AI SDK) as OpenAI Agents JS function tools:
// the same descriptions, inputs and answers, so the model meets the same exec_command and
// write_stdin whichever framework runs it.

import { type ExecToolContext, execTools } from "@exec-inbox/ai-sdk/exec-tools";
import { type FunctionTool, type JsonSchemaDefinition, tool } from "@openai/agents";
import { z } from "zod";

type NonStrictParameters = Extract<JsonSchemaDefinition["schema"], { additionalProperties: true }>;

/**
 * Each exec tool as a function tool. The input schema goes to the model as JSON Schema (not strict:
 * strict mode would make every optional field required), and is checked with the tool's own zod
 * schema before it runs; a refused input or a failing tool is answered to the model as text.
 */
export function execFunctionTools(
  ctx: ExecToolContext,
): FunctionTool<unknown, NonStrictParameters>[] {
  return Object.entries(execTools(ctx)).map(([name, aiTool]) => {
    const schema = aiTool.inputSchema;
    if (!(schema instanceof z.ZodObject)) throw new TypeError(`${name}: input is not a zod object`);
    const { $schema: _, ...json } = z.toJSONSchema(schema, { io: "input" });
    // Fields the tool does not take are dropped by its schema, as the AI SDK's tool does.
    const parameters = {
      ...json,
      type: "object",
      properties: json.properties ?? {},
      required: json.required ?? [],
      additionalProperties: true,
    } as NonStrictParameters;
    return tool({
      name,
      // An AI SDK description may be a function of the tool's context; these tools take none.
      description:
        typeof aiTool.description === "function"
          ? aiTool.description({ context: {} })
          : (aiTool.description ?? name),
      strict: false,
      parameters,
      // The model reads the error itself, as with the AI SDK (the SDK's default adds "Please try
      // again", wrong advice for a handle that does not exist).
      errorFunction: (_context, error) => (error instanceof Error ? error.message : String(error)),
      execute: async (input, _context, details) => {
        const parsed = schema.safeParse(input);
        if (!parsed.success) throw new Error(z.prettifyError(parsed.error));
        if (aiTool.execute === undefined) throw new Error(`${name} cannot run`);
        return aiTool.execute(parsed.data as never, {
          // A call the SDK gives no id gets one of its own: the journal keeps calls apart by id.
          toolCallId: details?.toolCall?.callId ?? `${name}-${crypto.randomUUID()}`,
          messages: [],
          context: {},
        });
      },
    });
  });
}
