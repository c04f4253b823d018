// How a tool sends the person at an MCP client to a page of the platform (ToolContext.sendToPage: the approval page),
// on each revision. Never a question the client itself answers: only whether the person agreed to open the page.
// - 2025-11-25: a URL-mode elicitation request on the tool call's own stream, awaited (elicitUrl).
// - 2026-07-28: the tool call answers `input_required` with a URL elicitation and a signed requestState naming the
//   page; the client retries with the person's answer, and the tool runs again with it (ModernPages).
import { randomUUID } from 'node:crypto';
import {
  createRequestStateCodec,
  inputRequired,
  inputResponse,
  type InputRequiredResult,
  type RequestStateCodec,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { PageVisit, ToolContext } from '../core/define.ts';
import { substrateErrors } from '../substrate/service.ts';

/** URL-mode elicitation: the client declared `elicitation: { url: {} }` (at initialize, or in the request's _meta). */
export function canElicitUrl(server: Server): boolean {
  const elicitation = server.getClientCapabilities()?.elicitation as Record<string, unknown> | undefined;
  return elicitation?.url !== undefined;
}

/** How long a person may take to agree to open a page. */
const ELICIT_TIMEOUT_MS = 10 * 60_000;

/**
 * Asks the client to send its person to a page of ours (2025-11-25), on the stream of the tool call that asks.
 * Accepting only means they open it; what they do there is theirs. A client that cannot be asked (no answer in time,
 * an error) is a refusal, not a failure of ours. The answer must reach this process: one POSTed to another api
 * process is lost there, and the call ends as a refusal at the timeout (see mcp-sessions.ts).
 */
export function elicitUrl(server: Server, ctx: ServerContext): NonNullable<ToolContext['sendToPage']> {
  const relatedRequestId = ctx.mcpReq.id;
  return async (message, url) => {
    const elicitationId = randomUUID();
    try {
      const answer = await server.elicitInput({ mode: 'url', message, url, elicitationId }, { relatedRequestId, timeout: ELICIT_TIMEOUT_MS });
      return {
        opened: answer.action === 'accept',
        complete: () => server.createElicitationCompletionNotifier(elicitationId, { relatedRequestId })().catch(() => undefined),
      };
    } catch (err) {
      throw substrateErrors.humanRequired(
        `The person could not be sent to the page through this MCP client: ${String((err as Error)?.message ?? err).slice(0, 200)}.`,
        `The person opens ${url} themselves.`,
      );
    }
  };
}

/** The key of the page visit among a 2026-07-28 call's input requests and responses. */
const PAGE_KEY = 'page';
/** How long a client may take to come back with the person's answer. */
const STATE_TTL_SECONDS = 60 * 60;

/** What a requestState vouches for: the page the person was asked to open, by this tool (bound to the account too). */
interface PageState {
  url: string;
  tool: string;
}

/** A tool call of the 2026-07-28 revision that may ask for a page visit. */
export interface ModernCall {
  /** The tool's sendToPage: the person's answer on a retry, else it records the question and refuses. */
  sendToPage: NonNullable<ToolContext['sendToPage']>;
  /** The tool's pageAnswer: whether the person agreed to open the page, on the retry that carries their answer. */
  pageAnswer: NonNullable<ToolContext['pageAnswer']>;
  /** The input_required result the call answers when sendToPage asked, instead of its refusal. */
  asked(): Promise<InputRequiredResult | undefined>;
}

/** Page visits as 2026-07-28 input requests, with requestState signed by the platform's key. */
export class ModernPages {
  readonly #codec: RequestStateCodec<PageState>;

  constructor(key: Uint8Array) {
    this.#codec = createRequestStateCodec<PageState>({
      key,
      ttlSeconds: STATE_TTL_SECONDS,
      // A state is good only for the account it was minted for (/mcp sets the account as the token's clientId).
      bind: (ctx) => `${ctx.mcpReq.method}\0${ctx.http?.authInfo?.clientId ?? ''}`,
    });
  }

  /** The server option that refuses a tampered or expired requestState before any handler runs. */
  get verify(): (state: string, ctx: ServerContext) => Promise<unknown> {
    return (state, ctx) => this.#codec.verify(state, ctx);
  }

  /**
   * sendToPage for one tools/call: on the retry that carries the person's answer to this very page (the verified
   * state names it and the tool), the answer; otherwise the question is recorded and the tool is
   * refused, which the transport turns into the input_required result (asked()).
   */
  call(ctx: ServerContext, tool: string): ModernCall {
    let question: { message: string; url: string } | undefined;
    const state = ctx.mcpReq.requestState<PageState>();
    const pageAnswer = (url: string): boolean | undefined => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, PAGE_KEY);
      return state?.url === url && state.tool === tool && answer.kind === 'elicit' ? answer.action === 'accept' : undefined;
    };
    return {
      pageAnswer,
      sendToPage: async (message, url): Promise<PageVisit> => {
        const opened = pageAnswer(url);
        if (opened !== undefined) return { opened, complete: async () => undefined };
        question = { message, url };
        throw substrateErrors.humanRequired('The person is asked to open the page (input_required).', `The person opens ${url}.`);
      },
      asked: async () => {
        if (!question) return undefined;
        return inputRequired({
          inputRequests: { [PAGE_KEY]: inputRequired.elicitUrl({ message: question.message, url: question.url }) },
          requestState: await this.#codec.mint({ url: question.url, tool }, ctx),
        });
      },
    };
  }
}
