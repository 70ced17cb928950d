// The settings the kit (agent-kit.ts) and its turn loop (run-turns.ts) share. What each does with
// them is its own; the model turn is the options' (agent-kit.ts `AgentKitOptions`).
import type { ExecInboxClient } from "@exec-inbox/client";
import type { ModelMessage } from "ai";
import type { ConversationStore } from "./conversation-store";
import type { RunnerClient } from "./runner-client";
import type { TurnEngine } from "./turn-engine";

/** Everything but the model turn: the same for every agent framework. */
export interface KitSettings<M = ModelMessage> {
  readonly inbox: ExecInboxClient;
  readonly runner: RunnerClient;
  readonly store: ConversationStore<M>;
  /**
   * The tenant of `inbox`'s agent token (an AGENT_TOKENS entry `tenant:token`; `default` for a
   * bare token). The signing secret is the deployment's, shared by its tenants: a resume signed for
   * another tenant is refused.
   */
  readonly tenant?: string;
  /** `whsec_…`: exec-inbox's RESUME_SIGNING_SECRET. */
  readonly resumeSigningSecret: string;
  /** Where exec-inbox posts this host's resumes (an origin it allows). */
  readonly resumeUrl: string;
  /** The wait a turn ends on when commands still run: `all` (default) or `any` of them. */
  readonly wake?: "all" | "any";
  readonly ceilingMs?: number;
  /**
   * Liveness: reserved with every background job. A runner silent this long (it heartbeats every
   * third of it) is presumed gone, and exec-inbox wakes the agent with the job `lost`.
   */
  readonly heartbeatTimeoutMs?: number;
  /** Claim lease: a host that dies holding a claim sees it again this long after. */
  readonly leaseMs?: number;
  /** Model turns tried before a failing provider ends the run (default 3). */
  readonly modelAttempts?: number;
  readonly log?: (line: string) => void;
  /** Crash injection for tests: throwing here stops the run after the turn is stored, before ack. */
  readonly afterStore?: (sessionId: string) => void;
}

/** The kit's settings with the engine it resolved (the AI SDK's unless the host gave its own). */
export type KitRun<M> = KitSettings<M> & { readonly turn: TurnEngine<M> };
