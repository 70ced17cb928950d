// The model turn on OpenAI Agents JS: the session's agent, given the exec tools, runs on the stored
// conversation plus what is new; the conversation the kit stores is the run's `history`.
import { type Agent, type AgentInputItem, run, user } from "@openai/agents";
import type { TurnEngine } from "../agent";
import { execFunctionTools } from "./function-tools";

export interface OpenAiAgentsTurnOptions {
  /**
   * The agent of one session: its instructions, model and own tools. The kit adds exec_command and
   * write_stdin (an agent that already has tools of those names is refused).
   */
  readonly agent: (sessionId: string) => Agent<unknown, "text">;
  /** Model calls in one turn (default 8); past it the turn ends as it stands, as the AI SDK's does. */
  readonly maxTurns?: number;
}

export function openAiAgentsTurn(options: OpenAiAgentsTurnOptions): TurnEngine<AgentInputItem> {
  return async ({ sessionId, messages, userText, claims, tools }) => {
    const input: AgentInputItem[] = [...messages];
    if (userText !== null) input.push(user(userText));
    // No marker rides on the item: the SDK passes an item's providerData to the model's API as is.
    // A runtime message is known by its "[runtime]" text and by the kit's applied envelope ids.
    for (const claim of claims) input.push(user(claim.provider_message.content));
    const base = options.agent(sessionId);
    const exec = execFunctionTools(tools);
    const taken = base.tools.filter((own) => exec.some((added) => added.name === own.name));
    if (taken.length > 0) {
      throw new TypeError(
        `the agent already has tools named ${taken.map((t) => t.name).join(", ")}`,
      );
    }
    const agent = base.clone({ tools: [...base.tools, ...exec] });
    const result = await run(agent, input, {
      maxTurns: options.maxTurns ?? 8,
      // What the turn did is kept (its tool calls and results); the answer is left empty.
      errorHandlers: { maxTurns: () => ({ finalOutput: "", includeInHistory: false }) },
    });
    return { messages: result.history, text: result.finalOutput ?? "" };
  };
}
