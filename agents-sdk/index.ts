// exec-inbox's kit for Cloudflare's Agents SDK (`agents`): an Agent base class with the exec tools,
// the exactly-once inbox and the turn boundary, and the entrypoint exec-inbox's binding wakes.

// The runner's client, which ExecInboxSettings takes, is the AI SDK kit's.
export { RunnerClient, RunnerError } from "@exec-inbox/ai-sdk/runner-client";
export { type ActiveRun, Conversation, type ConversationState } from "./conversation";
export { ExecInboxAgent, type ExecInboxSettings, type WakeAnswer } from "./exec-inbox-agent";
export { type ExecInboxWakeClass, execInboxWake } from "./wake-entrypoint";
