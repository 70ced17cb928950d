// The agent-host kit (Node): exec tools for the Vercel AI SDK, the resume handler and turn boundary,
// a durable conversation store, a scripted model and the example host. Not part of the Worker.
// The model turn is pluggable (`TurnEngine`): `openai-agents/` runs it on OpenAI Agents JS.
export {
  AgentKit,
  type AgentKitOptions,
  type KitSettings,
  type ResumeDelivery,
  SessionGoneError,
} from "./agent-kit";
export {
  type ActiveRun,
  CONVERSATION_DATABASE,
  type ConversationStore,
  type SessionRecord,
  SqliteConversationStore,
} from "./conversation-store";
export {
  type ExampleHost,
  type ExampleHostOptions,
  exampleHostApp,
  startExampleHost,
} from "./example-host";
export { type ExecToolContext, execTools } from "./exec-tools";
export { aiSdkToolCallFormat, type OpenToolCall, type ToolCallFormat } from "./open-tool-calls";
export { type OutputToolContext, outputTools } from "./output-tools";
export { handlesById, type OpenCall, recoverOpenCalls } from "./recover-open-calls";
export {
  type RecoveredToolCall,
  type RecoveryOptions,
  recoverToolCalls,
} from "./recover-tool-calls";
export { isSessionGone, isTransient, retrying } from "./retry";
export { ModelTurnError } from "./run-turns";
export { RunnerClient, RunnerError } from "./runner-client";
export { describeResult, scriptedCalls, scriptedModel, scriptedStep } from "./scripted-model";
export {
  type JournaledCall,
  type JournaledTool,
  persistedJournal,
  type ToolCallJournal,
} from "./tool-call-journal";
export {
  type AiSdkTurnOptions,
  aiSdkRecoveredMessages,
  aiSdkTurn,
  DEFAULT_SYSTEM,
  runtimeMarker,
  type TurnEngine,
  type TurnInput,
  type TurnOutput,
} from "./turn-engine";
