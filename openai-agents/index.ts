// exec-inbox's kit for OpenAI Agents JS (`@openai/agents`): the exec tools as function tools and a
// host that resumes a session's run from its stored history, exactly once per inbox envelope.
export { openaiExecTools } from "./exec-tools";
export { OpenAIAgentsHost, type OpenAIAgentsHostOptions, type ResumeOutcome } from "./host";
export { ScriptedAgentsModel } from "./scripted-model";
export { type SessionRecord, SessionStore } from "./session-store";
