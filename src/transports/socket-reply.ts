import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { AppError, envelope } from '../core/errors.ts';

/**
 * Node's default limit on the request line plus headers, set explicitly so that the 431 below names the limit
 * that applies whatever --max-http-header-size says.
 */
export const MAX_HEADER_BYTES = 16 * 1024;

/** A complete HTTP/1.1 error response, for sockets no ServerResponse owns (refused upgrades, unparsable requests). */
export function rawErrorResponse(err: AppError, baseUrl: string): string {
  const body = JSON.stringify(envelope(err, baseUrl));
  return (
    `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n${err.status === 401 ? 'WWW-Authenticate: Bearer\r\n' : ''}Connection: close\r\n\r\n${body}`
  );
}

/**
 * The HTTP server's 'clientError' listener: a request node could not parse gets the standard envelope instead of
 * node's bare status line, then the connection is closed (the parser cannot resynchronise on this socket).
 */
export function clientErrorAnswer(baseUrl: string): (err: NodeJS.ErrnoException, socket: Duplex) => void {
  return (err, socket) => {
    // A response to an earlier request on this keep-alive socket may be on the wire already: writing would corrupt it.
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
    if (socket.writable && !inFlight?.headersSent) socket.write(rawErrorResponse(clientError(err.code), baseUrl));
    socket.destroy();
  };
}

function clientError(code: string | undefined): AppError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new AppError(
        431,
        'HEADERS_TOO_LARGE',
        `The request line and headers exceed the ${MAX_HEADER_BYTES / 1024} KB limit.`,
        'Send a shorter URL or fewer and smaller headers; put large data in the JSON body.',
      );
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError(408, 'REQUEST_TIMEOUT', 'The request was not received in time.', 'Send the whole request promptly, then retry.');
    default:
      return new AppError(400, 'MALFORMED_REQUEST', 'The request is not valid HTTP/1.1.', 'Send a well-formed HTTP request (request line, headers, body framing).');
  }
}
