// Turning what went wrong into a sentence a reader understands. The panel
// never goes blank: every failure ends as one of these.

/** ServerError is a non-2xx answer from docsmith, read before the chat client sees it. */
export class ServerError extends Error {
  constructor(
    readonly status: number,
    readonly serverMessage: string,
    readonly retryAfter: number | undefined,
  ) {
    super(serverMessage || `HTTP ${status}`);
    this.name = 'ServerError';
  }
}

/** NetworkError is a request that got no readable answer at all. */
export class NetworkError extends Error {
  constructor(readonly reason: 'offline' | 'refused-origin' | 'unreachable') {
    super(reason);
    this.name = 'NetworkError';
  }
}

export function describeError(err: unknown): string {
  if (err instanceof ServerError) {
    switch (err.status) {
      case 429:
        return err.retryAfter !== undefined
          ? `Too many questions for now. Please try again ${inTime(err.retryAfter)}.`
          : 'Too many questions for now. Please try again later.';
      case 401:
        return 'This assistant’s key is not valid (it may have been revoked), so it cannot answer. The site’s owners need to update it.';
      case 403:
        return 'This assistant is set up with the wrong kind of key. The site’s owners need to use an assistant key.';
      case 404:
        return 'This assistant could not be found. The site’s owners need to check its domain.';
      case 400:
      case 413:
        return `The question could not be sent: ${err.serverMessage || 'it was not accepted'}.`;
      case 503:
        return 'The assistant is restarting. Please try again in a moment.';
      default:
        return 'The assistant ran into a problem. Please try again in a moment.';
    }
  }
  if (err instanceof NetworkError) {
    switch (err.reason) {
      case 'offline':
        return 'You seem to be offline. Check your connection, then retry.';
      case 'refused-origin':
        return 'The assistant is not enabled on this website.';
      default:
        return 'The assistant cannot be reached right now. Check your connection, then retry.';
    }
  }
  const msg = err instanceof Error ? err.message : String(err);
  if (!msg || /^An error occurred\.?$/i.test(msg)) {
    return 'The answer stopped because of a problem on the assistant’s side. Please retry.';
  }
  return `The answer stopped: ${msg.replace(/[.\s]+$/, '')}.`;
}

/** inTime says when, for a Retry-After in seconds. */
export function inTime(seconds: number): string {
  if (seconds <= 1) return 'in a second';
  if (seconds < 60) return `in ${Math.ceil(seconds)} seconds`;
  const minutes = Math.ceil(seconds / 60);
  if (minutes < 60) return minutes === 1 ? 'in a minute' : `in ${minutes} minutes`;
  const hours = Math.ceil(minutes / 60);
  if (hours < 48) return hours === 1 ? 'in an hour' : `in ${hours} hours`;
  return `in ${Math.ceil(hours / 24)} days`;
}

/** readServerError reads docsmith's {"error": "..."} body and its Retry-After header. */
export async function readServerError(res: Response): Promise<ServerError> {
  let message = '';
  try {
    const text = await res.text();
    try {
      const body: unknown = JSON.parse(text);
      if (body && typeof body === 'object' && typeof (body as { error?: unknown }).error === 'string') {
        message = (body as { error: string }).error;
      }
    } catch {
      message = text.slice(0, 300);
    }
  } catch {
    // no body
  }
  const ra = res.headers.get('Retry-After');
  let retryAfter: number | undefined;
  if (ra) {
    const n = Number(ra);
    if (Number.isFinite(n) && n >= 0) retryAfter = n;
    else if (!Number.isNaN(Date.parse(ra))) retryAfter = Math.max(0, (Date.parse(ra) - Date.now()) / 1000);
  }
  return new ServerError(res.status, message.replace(/[.\s]+$/, ''), retryAfter);
}
