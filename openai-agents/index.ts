// The agent-host kit on OpenAI Agents JS (`@openai/agents`, Node): the exec tools as function tools
// and the model turn; everything else (the resume webhook, claims, exactly-once, the store, acks,
// the turn boundary) is the AI SDK kit's own `AgentKit`, given this turn engine.
export { execFunctionTools } from "./function-tools";
export { openAiToolCallFormat } from "./open-tool-calls";
export { itemText, ScriptedAgentsModel, scriptedResponse } from "./scripted-model";
export { type OpenAiAgentsTurnOptions, openAiAgentsTurn, openAiRecoveredItems } from "./turn";
