// The e-mails of people on the platform: queued in the statement (or transaction) of what asks for them, a sign-up
// or a request, and sent by the identity_mail job (identity_signup_mail for a sign-up's link), which makes the link's
// token. Without SMTP (SVC_SMTP_URL unset) nothing is sent: the job logs a warning naming the person, and the routes
// answer as they otherwise would.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Logger } from 'pino';
import { enqueueSql } from '../core/jobs.ts';
import type { ControlDatabase } from '../db/types.ts';
import { identityMail, identitySignupMail } from './jobs.ts';
import type { PersonMailSender } from './mail-port.ts';
import { personTokenMail, signupLinkMail, signupTakenMail } from './mail-texts.ts';
import { issuePersonToken, type PersonTokenPurpose } from './person-tokens.ts';
import { issueSignupToken, SIGNUP_LINK_HOURS } from './signup-requests.ts';

/** What a mail to a person is for: a link with a token of that purpose, or the notice that a sign-up named their address. */
export type PersonMailPurpose = PersonTokenPurpose | 'signup_taken';

export interface PersonMailsDeps {
  db: Kysely<ControlDatabase>;
  /** undefined without SVC_SMTP_URL. */
  sender: PersonMailSender | undefined;
  /** The links point at the platform's public URL (SVC_BASE_URL). */
  baseUrl: string;
  log: Logger;
}

/**
 * The statement that queues one e-mail (enqueueSql); `personId` is SQL: a value, or the id column of the rows the
 * statement selects from. The job key holds one pending mail per person and purpose, so a burst of requests before the
 * worker runs sends one mail.
 */
function queueMailSql(personId: RawBuilder<unknown>, purpose: PersonMailPurpose): RawBuilder<unknown> {
  return enqueueSql(identityMail, sql`json_build_object('person_id', ${personId}, 'purpose', ${purpose}::text)`, {
    jobKey: sql`${identityMail.name}::text || ':' || ${personId}::text || ':' || ${purpose}::text`,
  });
}

export class PersonMails {
  readonly #d: PersonMailsDeps;

  constructor(deps: PersonMailsDeps) {
    this.#d = deps;
  }

  /** Whether e-mails go out at all: the routes say so, since it is the platform's setting and not the person's. */
  get configured(): boolean {
    return this.#d.sender !== undefined;
  }

  /** Queues a mail to the person, in the caller's transaction when given (a sign-up's verification mail). */
  async queue(personId: string, purpose: PersonTokenPurpose, db: Kysely<ControlDatabase> = this.#d.db): Promise<void> {
    await queueMailSql(sql`${personId}::uuid`, purpose).execute(db);
  }

  /**
   * Queues a reset mail to the person with this (lower-cased) e-mail, if there is one. One statement either way, so
   * that a known address takes no longer to answer than an unknown one.
   */
  async queueReset(email: string): Promise<void> {
    await sql`${queueMailSql(sql.ref('id'), 'reset_password')} from persons where email = ${email}`.execute(this.#d.db);
  }

  /**
   * Queues an open sign-up (src/identity/signup-requests.ts) in one statement, which takes as long either way: a
   * request and the mail of its link when no person has the (lower-cased) address, else the notice to the person who
   * has it. Expired requests go as new ones come.
   */
  async queueSignup(signup: { email: string; name: string; passwordHash: string }): Promise<void> {
    await sql`
      with expired as (delete from signup_requests where expires_at <= now()),
      taken as (select id from persons where email = ${signup.email}),
      request as (
        insert into signup_requests (email, name, password_hash, expires_at)
        select ${signup.email}, ${signup.name}, ${signup.passwordHash}, now() + make_interval(hours => ${SIGNUP_LINK_HOURS})
        where not exists (select from taken)
        returning id
      )
      ${queueMailSql(sql.ref('taken.id'), 'signup_taken')} from taken
      union all
      ${enqueueSql(identitySignupMail, sql`json_build_object('signup_id', request.id)`)} from request`.execute(this.#d.db);
  }

  /**
   * The identity_mail job: a fresh token, mailed (the notice to an address a sign-up found carries none). A token whose
   * mail failed is left unused and expires.
   */
  async deliver(personId: string, purpose: PersonMailPurpose): Promise<void> {
    const { db, sender, baseUrl } = this.#d;
    const person = await db.selectFrom('persons').select(['email', 'email_verified_at']).where('id', '=', personId).executeTakeFirst();
    // Deleted since, or verified meanwhile (a password reset proves the address too): nothing to send.
    if (!person || (purpose === 'verify_email' && person.email_verified_at)) return;
    if (!sender) return this.#notSent({ person: personId, purpose });
    if (purpose === 'signup_taken') return sender.send(signupTakenMail(person.email, baseUrl));
    const token = await issuePersonToken(db, personId, purpose);
    await sender.send(personTokenMail(purpose, person.email, baseUrl, token));
  }

  /** The identity_signup_mail job: the link that finishes a sign-up, with a fresh token (a retry's replaces the last). */
  async deliverSignupLink(signupId: string): Promise<void> {
    const { db, sender, baseUrl } = this.#d;
    if (!sender) return this.#notSent({ signup: signupId });
    const issued = await issueSignupToken(db, signupId);
    // Expired meanwhile: nothing to finish.
    if (issued) await sender.send(signupLinkMail(issued.email, baseUrl, issued.token));
  }

  #notSent(about: Record<string, string>): void {
    this.#d.log.warn(about, 'e-mail to a person not sent: SMTP is not configured (set SVC_SMTP_URL); see docs/people.md, "People: sign-in"');
  }
}
