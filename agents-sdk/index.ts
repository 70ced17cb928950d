// exec-inbox's kit for Cloudflare's Agents SDK (`agents`): an Agent base class with the exec tools,
// the exactly-once inbox and the turn boundary, and the entrypoint exec-inbox's binding wakes.
export { type ActiveRun, Conversation, type ConversationState } from "./conversation";
export { ExecInboxAgent, type ExecInboxSettings, type WakeAnswer } from "./exec-inbox-agent";
export { execInboxWake } from "./wake-entrypoint";
