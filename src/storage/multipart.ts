// storage-js's multipart uploads (a Blob or File body): a form with the fields cacheControl, metadata (JSON) and
// contentEncoding, and one file part (storage-js names it ""), whose Content-Type is the object's. Parsed with busboy as
// the bytes arrive, never buffered whole: the fields are small and capped, the file streams on to a spool file.
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { AppError } from '../core/errors.ts';
import { bucketErrors } from './buckets.ts';

/** The fields storage-js sends beside the file. */
const FORM_FIELDS = ['cacheControl', 'metadata', 'contentEncoding'] as const;
export type FormFields = Partial<Record<(typeof FORM_FIELDS)[number], string>>;
/** The longest field value (metadata is the long one). */
const FIELD_MAX_BYTES = 8 * 1024;
/** The most a form holds besides its file's bytes (fields, part headers, boundaries): a larger body is refused at once. */
export const FORM_OVERHEAD_MAX_BYTES = FORM_FIELDS.length * FIELD_MAX_BYTES + 16 * 1024;

/** What is wrong with a field's value, if anything (metadata and contentEncoding are checked, not stored). */
function fieldProblem(name: keyof FormFields, value: string): string | undefined {
  if (name === 'cacheControl' && !/^(?:max-age=)?\d{1,10}$/.test(value)) return 'cacheControl must be a number of seconds';
  if (name === 'contentEncoding' && !/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/.test(value)) return 'contentEncoding must be a content coding such as gzip';
  if (name === 'metadata') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      parsed = undefined;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'metadata must be a JSON object';
  }
  return undefined;
}

export interface FormFile {
  contentType: string;
  stream: Readable;
}

export const uploadTimeout = () =>
  Object.assign(new AppError(408, 'REQUEST_TIMEOUT', 'The upload sent nothing for too long.', 'Send the body without pauses, or retry.'), {
    storage: { code: 'RequestTimeout', error: 'RequestTimeout' },
  });

const malformed = (what: string) => bucketErrors.invalid(`The multipart body is not valid: ${what}.`);

/**
 * One upload's form, read from the request once `file()` is first called (so that a refusal before it leaves the body
 * unread for the caller to discard). Exactly one file part; fields only of FORM_FIELDS, each at most FIELD_MAX_BYTES;
 * a malformed or truncated body is a 400, a body that sends nothing for `idleMs` a 408.
 */
export class MultipartForm {
  readonly #req: IncomingMessage;
  readonly #idleMs: number;
  readonly #fields: FormFields = {};
  #file: Promise<FormFile> | undefined;
  #done: Promise<FormFields> | undefined;
  #closed: Promise<Error | undefined> | undefined;
  #error: Error | undefined;
  #timer: NodeJS.Timeout | undefined;
  #fail: ((err: Error) => void) | undefined;

  constructor(req: IncomingMessage, idleMs: number) {
    this.#req = req;
    this.#idleMs = idleMs;
  }

  /** The file part, once its headers arrived. */
  file(): Promise<FormFile> {
    if (!this.#file) this.#start();
    return this.#file!;
  }

  /** The fields, once the body ended properly (its closing boundary, no second file). */
  done(): Promise<FormFields> {
    if (!this.#done) this.#start();
    return this.#done!;
  }

  /** Why the form failed (undefined: it did not), once the parser stopped: after the file stream was cut off. */
  closed(): Promise<Error | undefined> {
    if (!this.#closed) this.#start();
    return this.#closed!;
  }

  /** Stops reading (a refusal): the request is left to be discarded by the caller. */
  abandon(): void {
    this.#fail?.(new Error('The upload was refused.'));
  }

  #start(): void {
    let resolveFile!: (f: FormFile) => void;
    let rejectFile!: (e: Error) => void;
    let resolveDone!: (f: FormFields) => void;
    let rejectDone!: (e: Error) => void;
    let resolveClosed!: (e: Error | undefined) => void;
    this.#file = new Promise((res, rej) => ((resolveFile = res), (rejectFile = rej)));
    this.#done = new Promise((res, rej) => ((resolveDone = res), (rejectDone = rej)));
    this.#closed = new Promise((res) => (resolveClosed = res));
    // Whoever awaits only one of them must not leave the other's rejection unhandled.
    this.#file.catch(() => {});
    this.#done.catch(() => {});
    let gotFile = false;
    let parser: busboy.Busboy | undefined;

    // A client that stops sending holds nothing for long.
    const arm = () => {
      clearTimeout(this.#timer);
      this.#timer = setTimeout(() => fail(uploadTimeout()), this.#idleMs);
    };
    const fail = (err: Error) => {
      if (this.#error) return;
      this.#error = err;
      clearTimeout(this.#timer);
      this.#req.off('data', arm);
      rejectFile(err);
      rejectDone(err);
      if (parser) {
        this.#req.unpipe(parser);
        parser.destroy(err);
      } else {
        resolveClosed(err);
      }
    };
    this.#fail = fail;

    try {
      parser = busboy({
        headers: this.#req.headers,
        // No file size limit: the spool refuses an oversized file (413). busboy reports `parts` once that many parts
        // ended, so a full form (every field and the file) stays one below it; fields and files beyond theirs are refused.
        limits: { fieldSize: FIELD_MAX_BYTES, fields: FORM_FIELDS.length, files: 1, parts: FORM_FIELDS.length + 2, headerPairs: 8 },
      });
    } catch (err) {
      fail(malformed((err as Error).message.toLowerCase()));
      return;
    }
    parser.on('field', (name, value, info) => {
      if (!(FORM_FIELDS as readonly string[]).includes(name)) return fail(malformed(`unknown field '${name}' (the fields are ${FORM_FIELDS.join(', ')} and one file)`));
      if (info.valueTruncated) return fail(malformed(`the field ${name} is longer than ${FIELD_MAX_BYTES} bytes`));
      const bad = fieldProblem(name as keyof FormFields, value);
      if (bad) return fail(malformed(bad));
      this.#fields[name as keyof FormFields] = value;
    });
    parser.on('file', (_name, stream, info) => {
      gotFile = true;
      resolveFile({ contentType: info.mimeType, stream });
    });
    parser.on('filesLimit', () => fail(malformed('it holds more than one file')));
    parser.on('fieldsLimit', () => fail(malformed(`it holds more than ${FORM_FIELDS.length} fields`)));
    parser.on('partsLimit', () => fail(malformed('it holds too many parts')));
    parser.on('error', (err: Error) => fail(malformed(err.message.toLowerCase())));
    parser.on('finish', () => {
      clearTimeout(this.#timer);
      this.#req.off('data', arm);
      if (!gotFile) return fail(malformed('it holds no file'));
      resolveDone({ ...this.#fields });
    });
    parser.on('close', () => resolveClosed(this.#error));

    this.#req.on('data', arm);
    // A client that goes away ends the form.
    this.#req.once('close', () => {
      if (!this.#req.complete) fail(malformed('the request ended before its body did'));
    });
    arm();
    this.#req.pipe(parser);
  }
}
