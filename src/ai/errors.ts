// The AI gateway's own refusals. Rendered in OpenAI's shape on the gateway's REST routes (src/core/error-shapes.ts)
// and in the standard envelope over MCP.
import { AppError, errors } from '../core/errors.ts';
import { RelayedError } from '../core/error-shapes.ts';
import type { UpstreamFailure } from './upstream.ts';

export const aiErrors = {
  providerUnavailable: () =>
    new AppError(
      503,
      'PROVIDER_UNAVAILABLE',
      'The AI gateway has no upstream provider configured on this platform.',
      'The operator sets SVC_AI_BASE_URL (an OpenAI-compatible base URL such as https://openrouter.ai/api/v1) and SVC_AI_API_KEY.',
    ),
  noPlatformKey: () =>
    new AppError(
      503,
      'PROVIDER_UNAVAILABLE',
      'The platform has no shared AI key and this app has no own key.',
      "Set the app's own provider key with ai_config_set (byokKey), or the operator sets SVC_AI_API_KEY.",
    ),
  noModel: () =>
    errors.validation("No 'model' given and the app has no defaultModel.", [
      { path: 'model', message: "required: name a model such as 'openai/gpt-4o-mini', or set defaultModel with ai_config_set" },
    ]),
  modelNotAllowed: (model: string, allowed: readonly string[]) =>
    new AppError(
      403,
      'MODEL_NOT_ALLOWED',
      `Model '${model.slice(0, 200)}' is not in this app's allowedModels.`,
      `Use one of: ${allowed.join(', ')}; or change allowedModels with ai_config_set.`,
      { allowed_models: allowed },
    ),
  maxTokensOverCap: (field: string, given: number, cap: number) =>
    errors.validation(`'${field}' is ${given}, above this app's maxTokensPerRequest of ${cap}.`, [
      { path: field, message: `at most ${cap} (maxTokensPerRequest)` },
    ]),
  endUserBudget: (limit: number, retryAfterSeconds: number) =>
    new AppError(
      429,
      'END_USER_BUDGET_EXCEEDED',
      `This end user has used their daily AI budget of ${limit} tokens.`,
      `Try again after midnight UTC (in ${retryAfterSeconds} s); the app's owner can raise endUserDailyTokenLimit with ai_config_set.`,
      { limit_tokens: limit, retry_after_seconds: retryAfterSeconds },
    ),
  streamNotOverMcp: (route = 'chat/completions') =>
    errors.validation(`'stream: true' needs an HTTP client: call POST /v1/{app_id}/${route}; over MCP leave stream unset.`, [
      { path: 'stream', message: 'not available over MCP' },
    ]),
  /**
   * An upstream 4xx is the caller's to fix: relayed with the upstream's status and words; but a refused key is not
   * the caller's credential (the openai SDK would raise AuthenticationError for a valid service key): the platform's
   * key refused is our failure (502), the app's own key refused is the app owner's to fix. Anything else is a 502.
   */
  upstream: (failure: UpstreamFailure, ownKey: boolean): AppError => {
    if (failure.kind === 'status' && [401, 402, 403].includes(failure.status)) {
      return ownKey
        ? new AppError(
            502,
            'BYOK_KEY_REJECTED',
            `The AI provider refused this app's own key (${failure.status}: ${failure.message.slice(0, 300)}).`,
            "The app's owner checks the key or its provider account, and sets byokKey again with ai_config_set (or null to use the platform's credits).",
          )
        : new AppError(
            502,
            'UPSTREAM_ERROR',
            `The AI provider refused the platform's key (${failure.status}).`,
            'Retry with backoff; the operator should check SVC_AI_API_KEY and the provider account.',
          );
    }
    if (failure.kind === 'status' && failure.status >= 400 && failure.status < 500) {
      return new RelayedError(failure.status, 'UPSTREAM_REJECTED', failure.message, 'Fix the request as the upstream provider says.', failure);
    }
    const why =
      failure.kind === 'status'
        ? `answered ${failure.status}: ${failure.message.slice(0, 300)}`
        : failure.kind === 'timeout'
          ? 'did not answer in time'
          : 'could not be reached';
    return new AppError(502, 'UPSTREAM_ERROR', `The AI provider ${why}.`, 'Retry with backoff.');
  },
  modelNotFound: (model: string) =>
    new AppError(
      404,
      'MODEL_NOT_FOUND',
      `The model '${model.slice(0, 200)}' does not exist or is not available to this app.`,
      'List the models with GET /v1/{app_id}/models.',
      [{ path: 'model', message: 'not a listed model' }],
    ),
  responseNotStored: (id: string) =>
    new AppError(
      404,
      'NOT_FOUND',
      `No response '${id.slice(0, 200)}': this gateway does not store responses (store is false).`,
      'Keep the response object POST /v1/{app_id}/responses returned, and send the conversation again in input.',
    ),
  /** The provider answered 2xx with something that is not the answer asked for. */
  malformed: (what: string) => new AppError(502, 'UPSTREAM_ERROR', `The AI provider's answer was malformed: ${what}.`, 'Retry with backoff.'),
};
