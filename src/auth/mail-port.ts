// What end users' e-mails (confirmation, one-time codes, recovery, e-mail change) ask of a mail server: the same shape
// as the other areas' ports, so the composition root hands over the one SMTP adapter (src/adapters/smtp.ts), plus a way
// to reach an app's own server at an address the auth area has already checked.

export interface EndUserMail { to: string; subject: string; text: string }

export interface EndUserMailSender { send(mail: EndUserMail): Promise<void> }

/** An app's own SMTP server (its smtp_url), connected at `address`, which the caller resolved and allowed. */
export type AppMailerFactory = (target: { url: string; address: string; from: string }) => EndUserMailSender & { close(): void };
