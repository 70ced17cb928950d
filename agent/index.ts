// The agent-host kit (Node): exec tools for the Vercel AI SDK, the resume handler and turn boundary,
// a durable conversation store, a scripted model and the example host. Not part of the Worker.
export { AgentKit, type AgentKitOptions, type ResumeDelivery, SessionGoneError } from "./agent-kit";
export {
  type ActiveRun,
  type ConversationStore,
  FileConversationStore,
  type SessionRecord,
} from "./conversation-store";
export {
  type ExampleHost,
  type ExampleHostOptions,
  exampleHostApp,
  startExampleHost,
} from "./example-host";
export { type ExecToolContext, execTools } from "./exec-tools";
export { type OutputToolContext, outputTools } from "./output-tools";
export { isSessionGone, isTransient, retrying } from "./retry";
export { ModelTurnError } from "./run-turns";
export { RunnerClient, RunnerError } from "./runner-client";
export { scriptedModel, scriptedStep } from "./scripted-model";
