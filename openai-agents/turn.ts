// The model turn on OpenAI Agents JS: the session's agent, given the exec tools, runs on the stored
// conversation plus what is new; the conversation the kit stores is the run's `history`.

import type { TurnEngine } from "@exec-inbox/ai-sdk";
import { type Agent, type AgentInputItem, type RunConfig, Runner, user } from "@openai/agents";
import { execFunctionTools } from "./function-tools";
import { openAiRecoveredItems, openAiToolCallFormat } from "./open-tool-calls";

export { openAiRecoveredItems } from "./open-tool-calls";

export interface OpenAiAgentsTurnOptions {
  /**
   * The agent of one session: its instructions, model and own tools. The kit adds exec_command and
   * write_stdin (an agent that already has tools of those names is refused). Handoffs are the
   * agent's own: an agent handed to does not get the exec tools, and each turn starts here again.
   */
  // biome-ignore lint/suspicious/noExplicitAny: an agent of any context type (the SDK's own bound).
  readonly agent: (sessionId: string) => Agent<any, "text">;
  /** Model calls in one turn (default 8); past it the turn ends as it stands, as the AI SDK's does. */
  readonly maxTurns?: number;
  /**
   * The SDK's run configuration for a session's turns. The kit's defaults: `groupId` is the
   * session id, and traces carry no tool inputs or outputs (`traceIncludeSensitiveData: false`):
   * a command and its output can hold secrets. Tracing itself is the SDK's (on when an OpenAI
   * key is set); `tracingDisabled: true` turns it off.
   */
  readonly runConfig?: (sessionId: string) => Partial<RunConfig>;
  /** The run context of a session's turns (for the agent's own tools), if it needs one. */
  readonly context?: (sessionId: string) => unknown;
}

export function openAiAgentsTurn(options: OpenAiAgentsTurnOptions): TurnEngine<AgentInputItem> {
  return Object.assign(turnOf(options), { toolCallFormat: openAiToolCallFormat });
}

function turnOf(options: OpenAiAgentsTurnOptions): TurnEngine<AgentInputItem> {
  const maxTurns = options.maxTurns ?? 8;
  return async ({ sessionId, messages, userText, claims, tools, recovered }) => {
    const input: AgentInputItem[] = [...messages];
    if (userText !== null) input.push(user(userText));
    // No marker rides on the item: the SDK passes an item's providerData to the model's API as is.
    // A runtime message is known by its "[runtime]" text and by the kit's applied envelope ids.
    for (const claim of claims) input.push(user(claim.provider_message.content));
    input.push(...openAiRecoveredItems(recovered));
    const base = options.agent(sessionId);
    const exec = execFunctionTools(tools);
    const taken = base.tools.filter((own) => exec.some((added) => added.name === own.name));
    if (taken.length > 0) {
      throw new TypeError(
        `the agent already has tools named ${taken.map((t) => t.name).join(", ")}`,
      );
    }
    const agent = base.clone({ tools: [...base.tools, ...exec] });
    const runner = new Runner({
      groupId: sessionId,
      traceIncludeSensitiveData: false,
      ...options.runConfig?.(sessionId),
    });
    const runOptions = {
      maxTurns,
      // A tool name the agent does not have is told to the model, as the AI SDK does: failing the
      // turn would retry it, and run again the commands it had started.
      toolNotFoundBehavior: "return_error_to_model",
      // What the turn did is kept (its tool calls and results); the answer is left empty.
      errorHandlers: { maxTurns: () => ({ finalOutput: "", includeInHistory: false }) },
      ...(options.context === undefined ? {} : { context: options.context(sessionId) }),
    } as const;
    let result = await runner.run(agent, input, runOptions);
    // A tool of the agent's own that asks for approval: nobody is there to approve it inside a
    // wake, so it is refused and the model told, never dropped from the conversation unsaid.
    for (let round = 0; result.interruptions.length > 0 && round < maxTurns; round++) {
      for (const item of result.interruptions) result.state.reject(item);
      result = await runner.run(agent, result.state, runOptions);
    }
    if (result.interruptions.length > 0) {
      throw new Error(`the agent kept asking for approvals (${result.interruptions.length} left)`);
    }
    return { messages: result.history, text: result.finalOutput ?? "" };
  };
}
